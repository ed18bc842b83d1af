//! Component types of one's own, registered by name, so that JSON specs (a network's layers,
//! a preprocessor stack) and so agent configs build them as they build the built-in types,
//! and check their settings when a config loads.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use rlgraph_core::{Backend, Component, CoreError, Result, SpecOnly};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::component_table::{registry, Build, Entry, UNKNOWN_TYPE};
use crate::spec::normalize_type;

/// Registers component type `kind` on backend `B` for the whole process: a spec
/// `{"type": kind, ...}` anywhere a component spec goes (a layer of `network_spec`, a
/// preprocessor) is built by `build(settings, at)`, where `settings` are the spec's other keys
/// (not `type`, nor `scope`, which names the component as for every type) read as `S`, and
/// `at` is the spec's place for messages. Settings that do not read as `S` (put
/// `#[serde(deny_unknown_fields)]` on it to refuse typo keys) are refused with their full key
/// path, also when a config loads. `kind` is matched as RLgraph matches types (case, `-` and
/// `_` ignored). Register once per backend you build on; a kind that a built-in type, or an
/// earlier registration on `B`, answers to is refused, and nothing changes.
///
/// ```
/// use backend_candle::Candle;
/// use rlgraph_components::{layers_from_spec, register_component};
/// use rlgraph_core::{Backend, Component, GraphFn, Param};
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Scale {
///     factor: f64,
/// }
///
/// fn scale<B: Backend>(s: Scale, _at: &str) -> rlgraph_core::Result<Component<B>> {
///     Ok(Component::new("scale")
///         .api("call", vec![Param::new("inputs")], |ctx, args| ctx.graph_fn("apply", &[args.get(0)?]))
///         .graph_fn(GraphFn::tensors("apply", move |_, xs| Ok(vec![B::affine(xs[0], s.factor, 0.0)?])).infer_same()))
/// }
///
/// register_component::<Candle, Scale>("scale-by", scale::<Candle>)?;
/// let net = serde_json::json!([{"type": "dense", "units": 4}, {"type": "scale-by", "factor": 0.5}]);
/// assert_eq!(layers_from_spec::<Candle>(net.as_array().unwrap(), "network")?.len(), 2);
/// let typo = serde_json::json!([{"type": "scale-by", "factr": 0.5}]);
/// let e = layers_from_spec::<Candle>(typo.as_array().unwrap(), "network").err().unwrap();
/// assert!(e.to_string().contains("network[0].factr"));
/// # Ok::<(), rlgraph_core::CoreError>(())
/// ```
pub fn register_component<B: Backend, S: DeserializeOwned + 'static>(
    kind: &str,
    build: impl Fn(S, &str) -> Result<Component<B>> + Send + Sync + 'static,
) -> Result<()> {
    let refuse = |reason: String| CoreError::Config {
        at: format!("register_component({kind:?})"),
        reason,
    };
    let key = normalize_type(kind);
    if key.is_empty() {
        return Err(refuse("a component type needs a name".into()));
    }
    // Probed before the lock (the probe reads the registry); a type already registered passed
    // this when it first was, and the probe may have seen it, so it does not count then.
    let built_in = is_built_in(kind);
    let build: Build<B> = Arc::new(move |spec, at| build(settings::<S>(spec, at)?, at));
    let mut entries = registry()
        .write()
        .map_err(|_| refuse("the registry was poisoned by a panic while registering".into()))?;
    if built_in && !entries.contains_key(&key) {
        return Err(refuse(
            "a built-in component type has this name; register yours under another".into(),
        ));
    }
    let entry = entries.entry(key).or_insert_with(|| Entry {
        kind: kind.into(),
        check: Arc::new(|spec, at| settings::<S>(spec, at).map(|_| ())),
        builders: HashMap::new(),
    });
    if entry.builders.contains_key(&TypeId::of::<B>()) {
        return Err(refuse(format!(
            "already registered on the {} backend (as {:?}); register each type once per backend",
            B::NAME,
            entry.kind
        )));
    }
    entry.builders.insert(TypeId::of::<B>(), Box::new(build));
    Ok(())
}

/// The settings of `spec` (its keys but `type` and `scope`) read as `S`, an error naming the
/// key path under `at` where they do not.
fn settings<S: DeserializeOwned>(spec: &Json, at: &str) -> Result<S> {
    read_settings(spec, at, &["type", "scope"], "a component spec")
}

/// The keys of `spec` but `skip` read as `S`, an error naming the key path under `at` where
/// they do not (`what` names the JSON object expected, for a spec that is not one): how a
/// registered type's settings are read.
pub fn read_settings<S: DeserializeOwned>(spec: &Json, at: &str, skip: &[&str], what: &str) -> Result<S> {
    let mut rest = match spec {
        Json::Object(o) => o.clone(),
        other => {
            return Err(CoreError::Config {
                at: at.into(),
                reason: format!("expected {what} (a JSON object), got {other}"),
            })
        }
    };
    for key in skip {
        rest.remove(*key);
    }
    serde_path_to_error::deserialize(Json::Object(rest)).map_err(|e| {
        let path = e.path().to_string();
        CoreError::Config {
            at: match path.as_str() {
                "." => at.into(),
                p => format!("{at}.{p}"),
            },
            reason: e.into_inner().to_string(),
        }
    })
}

/// Whether a built-in type answers to `kind` (its aliases included): one is built, or refused
/// for its settings rather than for its type, from a spec of the type alone.
fn is_built_in(kind: &str) -> bool {
    let key = normalize_type(kind);
    let named = [
        crate::layer_registry::KNOWN_TYPES,
        crate::registry_utilities::UTILITY_TYPES,
        crate::losses::LOSS_TYPES,
        crate::memory_component::MEMORY_TYPES,
    ];
    if named
        .iter()
        .flat_map(|names| names.iter())
        .any(|n| normalize_type(n) == key)
    {
        return true;
    }
    match crate::layer_registry::build_from_spec::<SpecOnly>(&serde_json::json!({ "type": kind }), "probe", None) {
        Ok(_) => true,
        Err(CoreError::Config { at, reason }) => !(at == "probe.type" && reason.starts_with(UNKNOWN_TYPE)),
        Err(_) => true,
    }
}
