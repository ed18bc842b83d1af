//! The table of component types registered with [`crate::register_component`]: each type's
//! settings check and its builder per backend, which the layer registry looks types up in.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock, RwLock};

use rlgraph_core::{Backend, Component, CoreError, Result, SpecOnly};
use serde_json::Value as Json;

use crate::spec::normalize_type;

/// Builds a registered component on one backend from its spec and the spec's place.
pub(crate) type Build<B> = Arc<dyn Fn(&Json, &str) -> Result<Component<B>> + Send + Sync>;

/// Reads a registered type's settings from its spec without building it.
pub(crate) type Check = Arc<dyn Fn(&Json, &str) -> Result<()> + Send + Sync>;

/// One registered type: how its settings are checked, and its builder on each backend.
pub(crate) struct Entry {
    /// The name as registered, for messages.
    pub(crate) kind: String,
    /// Reads the settings without building (what a config's load-time check runs).
    pub(crate) check: Check,
    /// A `Build<B>` per backend `B`, by the backend's type.
    pub(crate) builders: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

pub(crate) fn registry() -> &'static RwLock<BTreeMap<String, Entry>> {
    static REGISTRY: OnceLock<RwLock<BTreeMap<String, Entry>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(BTreeMap::new()))
}

/// The registered component types, by the names they were registered under.
pub fn registered_components() -> Vec<String> {
    registry()
        .read()
        .map(|entries| entries.values().map(|e| e.kind.clone()).collect())
        .unwrap_or_default()
}

/// Builds registered type `kind` from `spec` (at `at`) on `B`, or `None` if no such type is
/// registered. On [`SpecOnly`] (a config's load-time check) a type registered on any backend
/// has its settings read and stands as an empty component.
pub(crate) fn custom_component<B: Backend>(kind: &str, spec: &Json, at: &str) -> Option<Result<Component<B>>> {
    let entries = registry().read().ok()?;
    let entry = entries.get(&normalize_type(kind))?;
    let built = match entry.builders.get(&TypeId::of::<B>()) {
        Some(build) => match build.downcast_ref::<Build<B>>() {
            Some(build) => {
                let build = build.clone();
                // Built without the lock: a builder may build other registered types.
                drop(entries);
                build(spec, at)
            }
            None => Err(CoreError::Config {
                at: format!("{at}.type"),
                reason: format!("the registry holds a builder of another type for {kind:?}"),
            }),
        },
        None if TypeId::of::<B>() == TypeId::of::<SpecOnly>() => (entry.check)(spec, at).map(|_| Component::new(kind)),
        None => Err(CoreError::Config {
            at: format!("{at}.type"),
            reason: format!(
                "{kind:?} is registered on other backends, not on {}; register it with \
                 rlgraph_components::register_component::<{}, _> too",
                B::NAME,
                B::NAME
            ),
        }),
    };
    Some(built.map(|c| match spec.get("scope").and_then(Json::as_str) {
        Some(scope) => c.copy_as(scope, true),
        None => c,
    }))
}

/// How the registry's error for a type no one answers to begins.
pub(crate) const UNKNOWN_TYPE: &str = "unknown or not yet supported component type";
