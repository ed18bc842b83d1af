//! Which algorithm a config's `type` names: the built-in ones, in RLgraph's spellings, and
//! algorithms of one's own, registered by name, so that [`crate::build_agent`] (and so
//! `rlgraph train`, `evaluate`, `bench` and the Python package) builds them as it builds the
//! built-in ones, and the load-time check and the config schema know their keys.

use std::any::{Any, TypeId};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, Result, SpecOnly};
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::acting_plan::ActingPlan;
use crate::agent::Agent;
use crate::agent_spec::{config, normalized_kind, AgentKind, SchemaKind};
use crate::distributed_roles::DistributedAlgorithm;
use crate::off_policy::DistributedOffPolicy;
use crate::segments::SegmentAlgorithm;
use crate::tensor_rollouts::TensorAlgorithm;
use crate::{dqn, impala, pg, random_agent, sac};

/// The agent types `build_agent` knows, in RLgraph's spelling.
pub const AGENT_TYPES: [&str; 7] = ["dqn", "apex", "ppo", "actor_critic", "sac", "single-impala", "random"];

/// The agent types that learn from segments (GA3C's layout), in RLgraph's spelling.
pub const SEGMENT_TYPES: [&str; 3] = ["ppo", "actor_critic", "single-impala"];

/// How the algorithm `spec` describes learns from segments, for a layout whose actors send
/// them (GA3C); `None` for one that does not learn that way. The config is read whole.
pub fn segment_algorithm<B: Backend>(spec: &Json) -> Result<Option<Box<dyn SegmentAlgorithm<B>>>> {
    Ok(match agent_family(spec)? {
        AgentFamily::PolicyGradient => Some(Box::new(pg::config::PgConfig::parse(spec)?)),
        AgentFamily::Impala => Some(Box::new(impala::config::ImpalaConfig::parse(spec)?)),
        AgentFamily::Registered => registered_capability::<B, dyn SegmentAlgorithm<B>>(spec, |e| &e.segments)?,
        _ => None,
    })
}

/// The agent types that train on device-resident environments, in RLgraph's spelling.
pub const TENSOR_TYPES: [&str; 1] = ["ppo"];

/// How the algorithm `spec` describes trains on device-resident environments (the device
/// worker); `None` for one that does not train that way. A config of such an algorithm that
/// cannot (a recurrent policy, say) is refused by its key.
pub fn tensor_algorithm<B: Backend>(spec: &Json) -> Result<Option<Box<dyn TensorAlgorithm<B>>>> {
    Ok(match agent_family(spec)? {
        AgentFamily::PolicyGradient => Some(Box::new(pg::tensor::tensor_config(spec)?)),
        AgentFamily::Registered => registered_capability::<B, dyn TensorAlgorithm<B>>(spec, |e| &e.tensors)?,
        _ => None,
    })
}

/// The agent types that run across processes (actors, replay shards, a learner), in RLgraph's
/// spelling.
pub const DISTRIBUTED_TYPES: [&str; 4] = ["dqn", "apex", "sac", "single-impala"];

/// How the algorithm `spec` describes runs across processes (`rlgraph serve` and `launch`);
/// `None` for one that does not. The config is read whole.
pub fn distributed_algorithm<B: Backend>(spec: &Json) -> Result<Option<Box<dyn DistributedAlgorithm<B>>>> {
    Ok(match agent_family(spec)? {
        AgentFamily::Dqn => Some(Box::new(dqn::config::DqnConfig::parse(spec)?)),
        AgentFamily::Sac => Some(Box::new(DistributedOffPolicy::<sac::builder::SacRoles, B>::new(
            sac::config::SacConfig::parse(spec)?,
        ))),
        AgentFamily::Impala => Some(Box::new(impala::config::ImpalaConfig::parse(spec)?)),
        AgentFamily::Registered => registered_capability::<B, dyn DistributedAlgorithm<B>>(spec, |e| &e.distributed)?,
        _ => None,
    })
}

/// The agent types whose acting graph an exporter can rebuild, in RLgraph's spelling.
pub const EXPORT_TYPES: [&str; 5] = ["dqn", "apex", "ppo", "actor_critic", "single-impala"];

/// What the acting graph of the algorithm `spec` describes is made of, for an exporter; `None`
/// for one that offers no plan. The config is read whole.
pub fn acting_plan(spec: &Json) -> Result<Option<ActingPlan>> {
    Ok(match agent_family(spec)? {
        AgentFamily::Dqn => Some(dqn::config::DqnConfig::parse(spec)?.acting_plan()),
        AgentFamily::PolicyGradient => Some(pg::config::PgConfig::parse(spec)?.acting_plan()),
        AgentFamily::Impala => Some(impala::config::ImpalaConfig::parse(spec)?.acting_plan()),
        AgentFamily::Registered => registered_capability::<SpecOnly, ActingPlan>(spec, |e| &e.plans)?.map(|p| *p),
        _ => None,
    })
}

/// The families of agents, as a config's `type` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentFamily {
    /// DQN and Ape-X.
    Dqn,
    /// PPO and actor-critic.
    PolicyGradient,
    /// Soft actor-critic.
    Sac,
    /// IMPALA.
    Impala,
    /// The random agent.
    Random,
    /// An algorithm registered with [`crate::register_algorithm`].
    Registered,
}

/// One built-in algorithm: the `type` names it answers to, the family they pick, and how the
/// config schema describes its configs.
struct BuiltIn {
    kind: &'static AgentKind,
    family: AgentFamily,
    schema: &'static [&'static SchemaKind],
}

/// The built-in algorithms: the one list of them.
const BUILT_IN: [BuiltIn; 5] = [
    BuiltIn {
        kind: &dqn::config::KIND,
        family: AgentFamily::Dqn,
        schema: dqn::config::SCHEMA_KINDS,
    },
    BuiltIn {
        kind: &pg::config::KIND,
        family: AgentFamily::PolicyGradient,
        schema: pg::config::SCHEMA_KINDS,
    },
    BuiltIn {
        kind: &sac::config::KIND,
        family: AgentFamily::Sac,
        schema: sac::config::SCHEMA_KINDS,
    },
    BuiltIn {
        kind: &impala::config::KIND,
        family: AgentFamily::Impala,
        schema: impala::config::SCHEMA_KINDS,
    },
    BuiltIn {
        kind: &random_agent::KIND,
        family: AgentFamily::Random,
        schema: random_agent::SCHEMA_KINDS,
    },
];

/// The built-in algorithm that answers to normalized type `key`, if one does.
fn built_in(key: &str) -> Option<&'static BuiltIn> {
    BUILT_IN.iter().find(|b| b.kind.names.contains(&key))
}

/// Every built-in algorithm's config kinds, for the config schema.
pub(crate) fn built_in_schema_kinds() -> impl Iterator<Item = &'static SchemaKind> {
    BUILT_IN.iter().flat_map(|b| b.schema.iter().copied())
}

/// The types a config may have, for messages: the built-in ones in RLgraph's spelling, then
/// the registered ones.
pub fn agent_types() -> String {
    let mut types: Vec<String> = AGENT_TYPES.iter().map(|t| t.to_string()).collect();
    types.extend(registered_algorithms());
    types.join(", ")
}

/// The family of the agent `spec` describes, by its `type` (RLgraph's spellings; case, `-` and
/// `_` ignored). Errors list the known types.
pub fn agent_family(spec: &Json) -> Result<AgentFamily> {
    let Some(object) = spec.as_object() else {
        return Err(config("config", "expected a JSON object".into()));
    };
    let kind = match object.get("type") {
        None | Some(Json::String(_)) => normalized_kind(object.get("type").and_then(Json::as_str), ""),
        Some(other) => {
            return Err(config(
                "config.type",
                format!("expected a string, one of {}; got {other}", agent_types()),
            ))
        }
    };
    if let Some(built_in) = built_in(&kind) {
        return Ok(built_in.family);
    }
    Ok(if is_registered(&kind) {
        AgentFamily::Registered
    } else if kind.is_empty() && object.contains_key("learner") && object.contains_key("actor") {
        return Err(config(
            "config",
            "a cluster spec (learner and actor addresses) for a distributed run, not an agent config; \
             give it to `rlgraph serve --cluster` beside the agent config"
                .into(),
        ));
    } else if kind.is_empty() && object.contains_key("layers") {
        return Err(config(
            "config",
            "a neural-network spec (layers), not an agent config: test it with `rlgraph call` on its input space"
                .into(),
        ));
    } else if kind.is_empty() {
        return Err(config("config.type", format!("missing; one of {}", agent_types())));
    } else {
        return Err(config(
            "config.type",
            format!(
                "{kind:?} is neither a built-in algorithm nor one registered with \
                 agents::register_algorithm; one of {}",
                agent_types()
            ),
        ));
    })
}

/// Builds a registered algorithm's agent on one backend from its config and spaces.
type Build = Arc<dyn Fn(&Json, &Space, &Space, u64) -> Result<Box<dyn Agent + Send>> + Send + Sync>;

/// Reads a registered algorithm's settings without building anything.
type Check = Arc<dyn Fn(&Json) -> Result<()> + Send + Sync>;

/// The JSON Schema of a registered algorithm's settings.
type SettingsSchema = fn(&mut SchemaGenerator) -> schemars::Schema;

/// Makes what a layout runs (`T`: a [`SegmentAlgorithm`], a [`TensorAlgorithm`] or a
/// [`DistributedAlgorithm`] on one backend, or an [`ActingPlan`]) from a registered algorithm's config.
type Make<T> = Arc<dyn Fn(&Json) -> Result<Box<T>> + Send + Sync>;

/// What a registered algorithm offers a layout, on each backend: a [`Make`] of that backend's
/// type, by the backend's type.
type Capability = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// One registered algorithm: how its settings are read and described, and its builder on
/// each backend.
struct Entry {
    /// The name as registered, for messages.
    kind: String,
    /// Reads the settings without building (what a config's load-time check runs).
    check: Check,
    /// The JSON Schema of the settings, for the config schema.
    schema: SettingsSchema,
    /// The builder on each backend, by the backend's type.
    builders: HashMap<TypeId, Build>,
    /// How it learns from segments (GA3C), where [`register_segment_algorithm`] said.
    segments: Capability,
    /// How it trains on device-resident environments, where [`register_tensor_algorithm`]
    /// said.
    tensors: Capability,
    /// How it runs across processes, where [`register_distributed_algorithm`] said.
    distributed: Capability,
    /// What its acting graph is made of, where [`register_acting_plan`] said (under
    /// [`SpecOnly`]: a plan knows no backend).
    plans: Capability,
}

/// Algorithms that ship with this crate but are written on [`register_algorithm`] alone, as a
/// user's own would be: each registers itself on a backend the first time the registry is
/// used there ([`ensure_shipped`]).
fn register_shipped<B: Backend>() -> Result<()> {
    register_algorithm::<B, crate::td3::config::Td3Settings>("td3", crate::td3::build::<B>)?;
    register_distributed_algorithm::<B, crate::td3::config::Td3Settings>("td3", crate::td3::distributed::<B>)
}

thread_local! {
    /// Set while this thread runs [`register_shipped`], whose registrations come back here.
    static REGISTERING: Cell<bool> = const { Cell::new(false) };
}

/// Runs [`register_shipped`] once per backend, before the registry is read or written there.
/// Reads that know no backend (a config's load-time check, the schema) use [`SpecOnly`]'s,
/// which holds the settings' reader and schema.
fn ensure_shipped<B: Backend>() {
    static DONE: OnceLock<Mutex<HashSet<TypeId>>> = OnceLock::new();
    if REGISTERING.get() {
        return;
    }
    let Ok(mut done) = DONE.get_or_init(Default::default).lock() else {
        return;
    };
    if done.insert(TypeId::of::<B>()) {
        REGISTERING.set(true);
        // A shipped name is new on this backend (this runs before any user's registration
        // there), so registering cannot be refused.
        let _ = register_shipped::<B>();
        REGISTERING.set(false);
    }
}

fn registry() -> &'static RwLock<BTreeMap<String, Entry>> {
    static REGISTRY: OnceLock<RwLock<BTreeMap<String, Entry>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(BTreeMap::new()))
}

/// The keys of an agent config that are not a registered algorithm's settings: the type that
/// picks it and the schema an editor reads.
const NOT_SETTINGS: [&str; 2] = ["type", "$schema"];

/// Registers algorithm `kind` on backend `B` for the whole process: an agent config
/// `{"type": kind, ...}` is then built by `build(settings, state_space, action_space, seed)`
/// wherever a config is (`rlgraph train` and `evaluate` in a program that registered it, the
/// bench runner, `build_agent`). `settings` are the config's other keys (not `type`, nor
/// `$schema`) read as `C`; put `#[serde(deny_unknown_fields)]` on it to refuse typo keys,
/// which are then refused with their full key path when a config loads, and `C`'s schema joins
/// `rlgraph schema`. A `normalize_spec`, and a `preprocessing_spec` that keeps state per
/// environment copy, run around the agent as for the built-in algorithms (the agent then sees
/// the rest of the preprocessing as `preprocessing_spec`). `kind` is matched as RLgraph
/// matches types (case, `-` and `_` ignored). Register once per backend you build on; a kind
/// a built-in algorithm answers to, or one registered on `B` before, is refused, and nothing
/// changes.
pub fn register_algorithm<B: Backend, C: DeserializeOwned + JsonSchema + 'static>(
    kind: &str,
    build: impl Fn(C, &Space, &Space, u64) -> Result<Box<dyn Agent + Send>> + Send + Sync + 'static,
) -> Result<()> {
    ensure_shipped::<B>();
    let refuse = |reason: String| CoreError::Config {
        at: format!("register_algorithm({kind:?})"),
        reason,
    };
    let key = normalized_kind(Some(kind), "");
    if key.is_empty() {
        return Err(refuse("an algorithm needs a name".into()));
    }
    if let Some(built_in) = built_in(&key) {
        return Err(refuse(format!(
            "{} answers to this name; register yours under another",
            built_in.kind.what
        )));
    }
    let build: Build = Arc::new(move |spec, states, actions, seed| build(settings::<C>(spec)?, states, actions, seed));
    let mut entries = registry()
        .write()
        .map_err(|_| refuse("the registry was poisoned by a panic while registering".into()))?;
    let entry = entries.entry(key).or_insert_with(|| Entry {
        kind: kind.into(),
        check: Arc::new(|spec| settings::<C>(spec).map(drop)),
        schema: C::json_schema,
        builders: HashMap::new(),
        segments: HashMap::new(),
        tensors: HashMap::new(),
        distributed: HashMap::new(),
        plans: HashMap::new(),
    });
    if entry.builders.contains_key(&TypeId::of::<B>()) {
        return Err(refuse(format!(
            "already registered on the {} backend (as {:?}); register each algorithm once per backend",
            B::NAME,
            entry.kind
        )));
    }
    entry.builders.insert(TypeId::of::<B>(), build);
    Ok(())
}

/// Lets GA3C run algorithm `kind` (registered with [`register_algorithm`] first) on backend
/// `B`: `make` turns its settings (read as `C`, as its builder reads them) into its
/// [`SegmentAlgorithm`]. Registered twice on `B`, or for a name not registered, it is
/// refused and nothing changes.
pub fn register_segment_algorithm<B: Backend, C: DeserializeOwned + 'static>(
    kind: &str,
    make: impl Fn(C) -> Result<Box<dyn SegmentAlgorithm<B>>> + Send + Sync + 'static,
) -> Result<()> {
    let make: Make<dyn SegmentAlgorithm<B>> = Arc::new(move |spec| make(settings::<C>(spec)?));
    register_capability::<B>(kind, "register_segment_algorithm", |e| &mut e.segments, Arc::new(make))
}

/// Lets the device worker (`rlgraph train --tensor-envs`) train algorithm `kind` (registered
/// with [`register_algorithm`] first) on backend `B`: `make` turns its settings (read as `C`)
/// into its [`TensorAlgorithm`]. Registered twice on `B`, or for a name not registered, it
/// is refused and nothing changes.
pub fn register_tensor_algorithm<B: Backend, C: DeserializeOwned + 'static>(
    kind: &str,
    make: impl Fn(C) -> Result<Box<dyn TensorAlgorithm<B>>> + Send + Sync + 'static,
) -> Result<()> {
    let make: Make<dyn TensorAlgorithm<B>> = Arc::new(move |spec| make(settings::<C>(spec)?));
    register_capability::<B>(kind, "register_tensor_algorithm", |e| &mut e.tensors, Arc::new(make))
}

/// Lets `rlgraph serve` and `launch` run algorithm `kind` (registered with
/// [`register_algorithm`] first) across processes on backend `B`: `make` turns its settings
/// (read as `C`) into its [`DistributedAlgorithm`]. Registered twice on `B`, or for a name not
/// registered, it is refused and nothing changes.
pub fn register_distributed_algorithm<B: Backend, C: DeserializeOwned + 'static>(
    kind: &str,
    make: impl Fn(C) -> Result<Box<dyn DistributedAlgorithm<B>>> + Send + Sync + 'static,
) -> Result<()> {
    let make: Make<dyn DistributedAlgorithm<B>> = Arc::new(move |spec| make(settings::<C>(spec)?));
    register_capability::<B>(
        kind,
        "register_distributed_algorithm",
        |e| &mut e.distributed,
        Arc::new(make),
    )
}

/// Lets an exporter (`rlgraph export`) write algorithm `kind` (registered with
/// [`register_algorithm`] first): `plan` reads its settings (as `C`) into what its acting
/// graph is made of. Registered twice, or for a name not registered, it is refused and
/// nothing changes.
pub fn register_acting_plan<C: DeserializeOwned + 'static>(
    kind: &str,
    plan: impl Fn(C) -> Result<ActingPlan> + Send + Sync + 'static,
) -> Result<()> {
    // A plan is plain data, the same on every backend: kept under the backend-free one.
    let make: Make<ActingPlan> = Arc::new(move |spec| plan(settings::<C>(spec)?).map(Box::new));
    register_capability::<SpecOnly>(kind, "register_acting_plan", |e| &mut e.plans, Arc::new(make))
}

/// Adds `make` (a [`Make`] on `B`) to the capability `table` picks of the registered `kind`.
fn register_capability<B: Backend>(
    kind: &str,
    call: &str,
    table: fn(&mut Entry) -> &mut Capability,
    make: Arc<dyn Any + Send + Sync>,
) -> Result<()> {
    ensure_shipped::<B>();
    let refuse = |reason: String| CoreError::Config {
        at: format!("{call}({kind:?})"),
        reason,
    };
    let mut entries = registry()
        .write()
        .map_err(|_| refuse("the registry was poisoned by a panic while registering".into()))?;
    let key = normalized_kind(Some(kind), "");
    let Some(entry) = entries.get_mut(&key) else {
        // The known types are read from the registry, so its write lock goes first.
        drop(entries);
        return Err(refuse(format!(
            "no algorithm is registered under this name; register it with register_algorithm first \
             (known types: {})",
            agent_types()
        )));
    };
    let capabilities = table(entry);
    if capabilities.contains_key(&TypeId::of::<B>()) {
        return Err(refuse(format!(
            "already registered on the {} backend; register it once per backend",
            B::NAME
        )));
    }
    capabilities.insert(TypeId::of::<B>(), make);
    Ok(())
}

/// What the registered algorithm `spec` names offers from the capability `table` picks, made
/// from `spec`; `None` where it offers none on `B`.
fn registered_capability<B: Backend, T: ?Sized + 'static>(
    spec: &Json,
    table: fn(&Entry) -> &Capability,
) -> Result<Option<Box<T>>> {
    ensure_shipped::<B>();
    let make = {
        let entries = read()?;
        let entry = entry(&entries, spec)?;
        table(entry)
            .get(&TypeId::of::<B>())
            .and_then(|m| m.downcast_ref::<Make<T>>())
            .cloned()
    };
    // Made without the lock, as a builder is.
    make.map(|make| make(spec)).transpose()
}

/// The registered algorithms, by the names they were registered under.
pub fn registered_algorithms() -> Vec<String> {
    read()
        .map(|entries| entries.values().map(|e| e.kind.clone()).collect())
        .unwrap_or_default()
}

/// Whether an algorithm is registered under normalized type `key` (on any backend).
pub(crate) fn is_registered(key: &str) -> bool {
    read().is_ok_and(|entries| entries.contains_key(key))
}

/// The registered algorithm `spec`'s type names, built on `B`.
pub(crate) fn build_registered<B: Backend>(
    spec: &Json,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    ensure_shipped::<B>();
    let build = {
        let entries = read()?;
        let entry = entry(&entries, spec)?;
        match entry.builders.get(&TypeId::of::<B>()) {
            Some(build) => build.clone(),
            None => {
                return Err(CoreError::Config {
                    at: "config.type".into(),
                    reason: format!(
                        "{:?} is registered on other backends, not on {}; register it with \
                         agents::register_algorithm::<{}, _> too",
                        entry.kind,
                        B::NAME,
                        B::NAME
                    ),
                })
            }
        }
    };
    // Built without the lock: a builder may build another registered algorithm.
    build(spec, state_space, action_space, seed)
}

/// Reads the registered algorithm `spec`'s settings as its builder would.
pub(crate) fn check_registered(spec: &Json) -> Result<()> {
    let check = {
        let entries = read()?;
        entry(&entries, spec)?.check.clone()
    };
    check(spec)
}

/// Each registered algorithm's name and the schema of its settings, for the config schema.
pub(crate) fn registered_schemas(generator: &mut SchemaGenerator) -> Vec<(String, Json)> {
    let schemas: Vec<(String, SettingsSchema)> = match read() {
        Ok(entries) => entries.values().map(|e| (e.kind.clone(), e.schema)).collect(),
        Err(_) => vec![],
    };
    schemas
        .into_iter()
        .map(|(kind, schema)| (kind, schema(generator).to_value()))
        .collect()
}

/// The registry, to read, with the shipped algorithms in it.
fn read() -> Result<std::sync::RwLockReadGuard<'static, BTreeMap<String, Entry>>> {
    ensure_shipped::<SpecOnly>();
    registry().read().map_err(|_| CoreError::Config {
        at: "config.type".into(),
        reason: "the algorithm registry was poisoned by a panic while registering".into(),
    })
}

fn entry<'a>(entries: &'a BTreeMap<String, Entry>, spec: &Json) -> Result<&'a Entry> {
    let key = normalized_kind(spec.get("type").and_then(Json::as_str), "");
    entries.get(&key).ok_or_else(|| CoreError::Config {
        at: "config.type".into(),
        reason: format!("{key:?} is not a registered algorithm"),
    })
}

/// A registered algorithm's settings: the config's keys but `type` and `$schema`, as `C`.
fn settings<C: DeserializeOwned>(spec: &Json) -> Result<C> {
    rlgraph_components::read_settings(spec, "config", &NOT_SETTINGS, "an agent config")
}
