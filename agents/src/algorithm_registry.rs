//! Which algorithm a config's `type` names: one table of algorithms, the shipped ones (each
//! described by its own folder) and those a program registers with [`register_algorithm`],
//! read the same way by [`crate::build_agent`] (and so `rlgraph train`, `evaluate`, `bench`
//! and the Python package), by every layout, by the load-time check and by the config schema.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, Result};
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::acting_plan::ActingPlan;
use crate::agent::Agent;
use crate::agent_spec::{config, normalized_kind, SchemaKind};
use crate::composed_agent::{Algorithm, ComposedAgent};
use crate::distributed_roles::DistributedAlgorithm;
use crate::segments::SegmentAlgorithm;
use crate::tensor_rollouts::TensorAlgorithm;
use crate::{dqn, impala, pg, random_agent, sac, td3};

/// The algorithms that ship with this crate, as their folders describe them: the one list of
/// them (each folder's [`Parts`] on a backend are listed in [`shipped_parts`]).
const SHIPPED: [&Description; 7] = [
    &dqn::DESCRIPTION,
    &pg::PPO,
    &pg::ACTOR_CRITIC,
    &sac::DESCRIPTION,
    &impala::DESCRIPTION,
    &random_agent::DESCRIPTION,
    &td3::DESCRIPTION,
];

/// The shipped algorithms' parts on backend `B` (each names its [`Description`]).
fn shipped_parts<B: Backend>() -> [Parts<B>; 7] {
    [
        dqn::parts(),
        pg::ppo_parts(),
        pg::actor_critic_parts(),
        sac::parts(),
        impala::parts(),
        random_agent::parts(),
        td3::parts(),
    ]
}

/// One shipped algorithm as its folder describes it to the registry, apart from any backend.
pub(crate) struct Description {
    /// The `type` spellings messages list (RLgraph's), the algorithm's own first.
    pub types: &'static [&'static str],
    /// The normalized `type` names that pick it (case, `-` and `_` ignored).
    pub names: &'static [&'static str],
    /// How the config schema describes its configs.
    pub schema: SchemaSource,
    /// Reads every key of a config without building anything.
    pub check: fn(&Json) -> Result<()>,
    /// What its acting graph is made of, for an exporter.
    pub plan: Option<fn(&Json) -> Result<ActingPlan>>,
    /// Whether the normalizer and per-copy preprocessing run around its agent (not around
    /// the random agent, which learns nothing and refuses both).
    pub wrapped: bool,
    /// Whether its replay memory stacks frames itself (`memory_spec.frame_stack`), so that a
    /// worker keeps each frame once.
    pub stacks_frames: bool,
}

impl Description {
    /// An algorithm whose configs are the shared keys and its own (`schema`, whose names pick
    /// it), wrapped by the normalizer and preprocessing, with no acting plan.
    pub(crate) const fn keys(
        types: &'static [&'static str],
        schema: &'static SchemaKind,
        check: fn(&Json) -> Result<()>,
    ) -> Self {
        Description {
            types,
            names: schema.names,
            schema: SchemaSource::Keys(schema),
            check,
            plan: None,
            wrapped: true,
            stacks_frames: false,
        }
    }
}

/// How the config schema describes an algorithm's configs.
#[derive(Clone, Copy)]
pub(crate) enum SchemaSource {
    /// The shared keys with the algorithm's own (the shipped RLgraph algorithms).
    Keys(&'static SchemaKind),
    /// A settings type: the whole config but `type` and `$schema`.
    Settings(SettingsSchema),
}

/// Makes an algorithm's agent from a config, the state and action spaces and a seed.
type BuildFn = fn(&Json, &Space, &Space, u64) -> Result<Box<dyn Agent + Send>>;

/// Makes what a layout runs (`T`) from an algorithm's config.
type MakeFn<T> = fn(&Json) -> Result<Box<T>>;

/// One shipped algorithm's parts on backend `B`.
pub(crate) struct Parts<B: Backend> {
    /// The algorithm these parts belong to.
    pub description: &'static Description,
    /// Its agent, from a config and the spaces.
    pub build: BuildFn,
    /// How it learns from segments (GA3C).
    pub segments: Option<MakeFn<dyn SegmentAlgorithm<B>>>,
    /// How it trains on device-resident environments.
    pub tensors: Option<MakeFn<dyn TensorAlgorithm<B>>>,
    /// How it runs across processes.
    pub distributed: Option<MakeFn<dyn DistributedAlgorithm<B>>>,
}

impl<B: Backend> Parts<B> {
    /// An algorithm's agent on `B`, which no other layout runs.
    pub(crate) fn agent(description: &'static Description, build: BuildFn) -> Self {
        Parts {
            description,
            build,
            segments: None,
            tensors: None,
            distributed: None,
        }
    }

    /// The [`ComposedAgent`] of algorithm `A` on `B` (its config read by `A::parse`), which
    /// no other layout runs.
    pub(crate) fn composed<A: Algorithm<B> + 'static>(description: &'static Description) -> Self {
        Self::agent(description, |spec, states, actions, seed| {
            Ok(Box::new(ComposedAgent::<B, A>::new(
                A::parse(spec)?,
                states,
                actions,
                seed,
            )?))
        })
    }
}

/// A layout that runs only the algorithms that offer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// GA3C, whose actors send segments ([`segment_algorithm`]).
    Segments,
    /// The device worker on device-resident environments ([`tensor_algorithm`]).
    Tensors,
    /// Actors, replay shards and a learner in separate processes ([`distributed_algorithm`]).
    Distributed,
    /// The ONNX exporter ([`acting_plan`]).
    Export,
}

/// The `type` spellings of the algorithms that offer `layout` on backend `B`, for messages:
/// the shipped ones first, in RLgraph's spelling, then the registered ones.
pub fn types_offering<B: Backend>(layout: Layout) -> Vec<String> {
    ensure_shipped::<B>();
    let Ok(entries) = read() else { return vec![] };
    let backend = TypeId::of::<B>();
    entries
        .iter()
        .filter(|e| match layout {
            Layout::Segments => e.segments.contains_key(&backend),
            Layout::Tensors => e.tensors.contains_key(&backend),
            Layout::Distributed => e.distributed.contains_key(&backend),
            Layout::Export => e.plan.is_some(),
        })
        .flat_map(|e| e.types.iter().cloned())
        .collect()
}

/// How the algorithm `spec` describes learns from segments, for a layout whose actors send
/// them (GA3C); `None` for one that does not learn that way. The config is read whole.
pub fn segment_algorithm<B: Backend>(spec: &Json) -> Result<Option<Box<dyn SegmentAlgorithm<B>>>> {
    capability::<B, dyn SegmentAlgorithm<B>>(spec, |e| &e.segments)
}

/// How the algorithm `spec` describes trains on device-resident environments (the device
/// worker); `None` for one that does not train that way. A config of such an algorithm that
/// cannot (a recurrent policy, say) is refused by its key.
pub fn tensor_algorithm<B: Backend>(spec: &Json) -> Result<Option<Box<dyn TensorAlgorithm<B>>>> {
    capability::<B, dyn TensorAlgorithm<B>>(spec, |e| &e.tensors)
}

/// How the algorithm `spec` describes runs across processes (`rlgraph serve` and `launch`);
/// `None` for one that does not. The config is read whole.
pub fn distributed_algorithm<B: Backend>(spec: &Json) -> Result<Option<Box<dyn DistributedAlgorithm<B>>>> {
    capability::<B, dyn DistributedAlgorithm<B>>(spec, |e| &e.distributed)
}

/// What the acting graph of the algorithm `spec` describes is made of, for an exporter; `None`
/// for one that offers no plan. The config is read whole.
pub fn acting_plan(spec: &Json) -> Result<Option<ActingPlan>> {
    let plan = entry_of(spec, |e| e.plan.clone())?;
    plan.map(|plan| plan(spec).map(|p| *p)).transpose()
}

/// The types a config may have, for messages: the shipped ones in RLgraph's spelling, then
/// the registered ones.
pub fn agent_types() -> String {
    read().map(|entries| type_list(&entries)).unwrap_or_default()
}

/// Every `type` spelling of `entries`, comma-separated, for messages.
fn type_list(entries: &[Entry]) -> String {
    entries
        .iter()
        .flat_map(|e| e.types.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The algorithm `spec`'s `type` picks, by its own spelling (`"dqn"` for `"apex"`,
/// `"tiny-dqn"` for `"Tiny_DQN"`); an error lists the known types.
pub fn algorithm_of(spec: &Json) -> Result<String> {
    entry_of(spec, |e| e.types[0].clone())
}

/// What `read_out` reads off the entry of the algorithm `spec`'s type picks (the table is
/// locked meanwhile, so nothing is built inside).
fn entry_of<T>(spec: &Json, read_out: impl FnOnce(&Entry) -> T) -> Result<T> {
    let entries = read()?;
    Ok(read_out(&entries[index(&entries, spec)?]))
}

/// Where the algorithm `spec`'s `type` picks is in `entries`, by its `type` (RLgraph's
/// spellings; case, `-` and `_` ignored). Errors list the known types.
fn index(entries: &[Entry], spec: &Json) -> Result<usize> {
    let known = || type_list(entries);
    let Some(object) = spec.as_object() else {
        return Err(config("config", "expected a JSON object".into()));
    };
    let kind = match object.get("type") {
        None | Some(Json::String(_)) => normalized_kind(object.get("type").and_then(Json::as_str), ""),
        Some(other) => {
            return Err(config(
                "config.type",
                format!("expected a string, one of {}; got {other}", known()),
            ))
        }
    };
    if let Some(at) = entries.iter().position(|e| e.names.contains(&kind)) {
        return Ok(at);
    }
    Err(
        if kind.is_empty() && object.contains_key("learner") && object.contains_key("actor") {
            config(
                "config",
                "a cluster spec (learner and actor addresses) for a distributed run, not an agent config; \
             give it to `rlgraph serve --cluster` beside the agent config"
                    .into(),
            )
        } else if kind.is_empty() && object.contains_key("layers") {
            config(
                "config",
                "a neural-network spec (layers), not an agent config: test it with `rlgraph call` on its input space"
                    .into(),
            )
        } else if kind.is_empty() {
            config("config.type", format!("missing; one of {}", known()))
        } else {
            config(
                "config.type",
                format!(
                    "{kind:?} is neither a built-in algorithm nor one registered with \
                 agents::register_algorithm; one of {}",
                    known()
                ),
            )
        },
    )
}

/// Builds an algorithm's agent on one backend from its config and spaces.
type Build = Arc<dyn Fn(&Json, &Space, &Space, u64) -> Result<Box<dyn Agent + Send>> + Send + Sync>;

/// Reads an algorithm's config without building anything.
pub(crate) type Check = Arc<dyn Fn(&Json) -> Result<()> + Send + Sync>;

/// The JSON Schema of a registered algorithm's settings.
type SettingsSchema = fn(&mut SchemaGenerator) -> schemars::Schema;

/// Makes what a layout runs (`T`: a [`SegmentAlgorithm`], a [`TensorAlgorithm`] or a
/// [`DistributedAlgorithm`] on one backend, or an [`ActingPlan`]) from an algorithm's config.
type Make<T> = Arc<dyn Fn(&Json) -> Result<Box<T>> + Send + Sync>;

/// What an algorithm offers a layout, on each backend: a [`Make`] of that backend's type, by
/// the backend's type.
type Capability = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// One algorithm in the table: how its configs are read and described, and its parts on
/// each backend it was registered on.
struct Entry {
    /// The `type` spellings messages list, its own first.
    types: Vec<String>,
    /// The normalized `type` names that pick it.
    names: Vec<String>,
    /// Whether it ships with this crate (a shipped name cannot be registered again).
    shipped: bool,
    /// Reads a config without building (what a config's load-time check runs).
    check: Check,
    /// How the config schema describes its configs.
    schema: SchemaSource,
    /// What its acting graph is made of, for an exporter.
    plan: Option<Make<ActingPlan>>,
    /// Whether the normalizer and per-copy preprocessing run around its agent.
    wrapped: bool,
    /// Whether its replay memory stacks frames itself.
    stacks_frames: bool,
    /// Its builder on each backend, by the backend's type.
    builders: HashMap<TypeId, Build>,
    /// How it learns from segments (GA3C), on each backend.
    segments: Capability,
    /// How it trains on device-resident environments, on each backend.
    tensors: Capability,
    /// How it runs across processes, on each backend.
    distributed: Capability,
}

impl Entry {
    /// A registered algorithm's entry, wrapped as the shipped ones are, with nothing else yet.
    fn new(types: Vec<String>, names: Vec<String>, check: Check, schema: SchemaSource) -> Self {
        Entry {
            types,
            names,
            shipped: false,
            check,
            schema,
            plan: None,
            wrapped: true,
            stacks_frames: false,
            builders: HashMap::new(),
            segments: HashMap::new(),
            tensors: HashMap::new(),
            distributed: HashMap::new(),
        }
    }

    /// A shipped algorithm's entry, with no backend yet.
    fn shipped(d: &'static Description) -> Self {
        let plan = d
            .plan
            .map(|plan| -> Make<ActingPlan> { Arc::new(move |spec| plan(spec).map(Box::new)) });
        let strings = |list: &[&str]| list.iter().map(|t| t.to_string()).collect();
        Entry {
            shipped: true,
            plan,
            wrapped: d.wrapped,
            stacks_frames: d.stacks_frames,
            ..Entry::new(strings(d.types), strings(d.names), Arc::new(d.check), d.schema)
        }
    }
}

/// Adds `make` to `table` under backend `B`, where there is one.
fn offer<B: Backend, T: ?Sized + 'static>(table: &mut Capability, make: Option<MakeFn<T>>) {
    if let Some(make) = make {
        let make: Make<T> = Arc::new(make);
        add::<B>(table, Arc::new(make));
    }
}

/// Adds the shipped algorithms' parts on `B` to the table, once per backend, before the
/// registry is read or written there.
fn ensure_shipped<B: Backend>() {
    static DONE: OnceLock<Mutex<HashSet<TypeId>>> = OnceLock::new();
    let Ok(mut done) = DONE.get_or_init(Default::default).lock() else {
        return;
    };
    if !done.insert(TypeId::of::<B>()) {
        return;
    }
    if let Ok(mut entries) = registry().write() {
        for parts in shipped_parts::<B>() {
            let Some(entry) = entries
                .iter_mut()
                .find(|e| e.shipped && e.types[0] == parts.description.types[0])
            else {
                continue;
            };
            let build = parts.build;
            entry.builders.insert(TypeId::of::<B>(), Arc::new(build));
            offer::<B, _>(&mut entry.segments, parts.segments);
            offer::<B, _>(&mut entry.tensors, parts.tensors);
            offer::<B, _>(&mut entry.distributed, parts.distributed);
        }
    }
}

/// The table, with every shipped algorithm's description in it (in [`SHIPPED`]'s order,
/// before any registered one).
fn registry() -> &'static RwLock<Vec<Entry>> {
    static REGISTRY: OnceLock<RwLock<Vec<Entry>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(SHIPPED.iter().map(|d| Entry::shipped(d)).collect()))
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
/// environment copy, run around the agent as for the shipped algorithms (the agent then sees
/// the rest of the preprocessing as `preprocessing_spec`). `kind` is matched as RLgraph
/// matches types (case, `-` and `_` ignored). Register once per backend you build on; a kind
/// a shipped algorithm answers to, or one registered on `B` before, is refused, and nothing
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
    let build: Build = Arc::new(move |spec, states, actions, seed| build(settings::<C>(spec)?, states, actions, seed));
    let mut entries = registry()
        .write()
        .map_err(|_| refuse("the registry was poisoned by a panic while registering".into()))?;
    let at = match entries.iter().position(|e| e.names.contains(&key)) {
        Some(at) => at,
        None => {
            let check: Check = Arc::new(|spec| settings::<C>(spec).map(drop));
            entries.push(Entry::new(
                vec![kind.into()],
                vec![key],
                check,
                SchemaSource::Settings(C::json_schema),
            ));
            entries.len() - 1
        }
    };
    let entry = &mut entries[at];
    if entry.shipped {
        return Err(refuse(format!(
            "the shipped algorithm {:?} answers to this name; register yours under another",
            entry.types[0]
        )));
    }
    if entry.builders.contains_key(&TypeId::of::<B>()) {
        return Err(refuse(format!(
            "already registered on the {} backend (as {:?}); register each algorithm once per backend",
            B::NAME,
            entry.types[0]
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
    register_capability(
        kind,
        "register_segment_algorithm",
        &format!("on the {} backend; register it once per backend", B::NAME),
        |e| add::<B>(&mut e.segments, Arc::new(make)),
    )
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
    register_capability(
        kind,
        "register_tensor_algorithm",
        &format!("on the {} backend; register it once per backend", B::NAME),
        |e| add::<B>(&mut e.tensors, Arc::new(make)),
    )
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
    register_capability(
        kind,
        "register_distributed_algorithm",
        &format!("on the {} backend; register it once per backend", B::NAME),
        |e| add::<B>(&mut e.distributed, Arc::new(make)),
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
    let make: Make<ActingPlan> = Arc::new(move |spec| plan(settings::<C>(spec)?).map(Box::new));
    register_capability(
        kind,
        "register_acting_plan",
        "(a plan serves every backend; register it once)",
        |e| {
            // A plan is plain data, the same on every backend.
            e.plan.is_none().then(|| e.plan = Some(make)).is_some()
        },
    )
}

/// Adds `make` to `table` under backend `B`; false where it holds one there already.
fn add<B: Backend>(table: &mut Capability, make: Arc<dyn Any + Send + Sync>) -> bool {
    if table.contains_key(&TypeId::of::<B>()) {
        return false;
    }
    table.insert(TypeId::of::<B>(), make);
    true
}

/// Lets `add` add a capability to the registered algorithm `kind`: refused for a name not
/// registered, a shipped one, or one that offers it already (`again` says where).
fn register_capability(kind: &str, call: &str, again: &str, add: impl FnOnce(&mut Entry) -> bool) -> Result<()> {
    let refuse = |reason: String| CoreError::Config {
        at: format!("{call}({kind:?})"),
        reason,
    };
    let mut entries = registry()
        .write()
        .map_err(|_| refuse("the registry was poisoned by a panic while registering".into()))?;
    let key = normalized_kind(Some(kind), "");
    let Some(entry) = entries.iter_mut().find(|e| e.names.contains(&key)) else {
        return Err(refuse(format!(
            "no algorithm is registered under this name; register it with register_algorithm first \
             (known types: {})",
            type_list(&entries)
        )));
    };
    if entry.shipped {
        return Err(refuse(format!(
            "the shipped algorithm {:?} answers to this name; register yours under another",
            entry.types[0]
        )));
    }
    if !add(entry) {
        return Err(refuse(format!("already registered {again}")));
    }
    Ok(())
}

/// What the algorithm `spec` names offers from the capability `table` picks, made from
/// `spec`; `None` where it offers none on `B`.
fn capability<B: Backend, T: ?Sized + 'static>(
    spec: &Json,
    table: fn(&Entry) -> &Capability,
) -> Result<Option<Box<T>>> {
    ensure_shipped::<B>();
    let make = entry_of(spec, |e| {
        table(e)
            .get(&TypeId::of::<B>())
            .and_then(|m| m.downcast_ref::<Make<T>>())
            .cloned()
    })?;
    // Made without the lock, as a builder is.
    make.map(|make| make(spec)).transpose()
}

/// The algorithms in the table (shipped and registered), by their own spellings.
pub fn registered_algorithms() -> Vec<String> {
    read()
        .map(|entries| entries.iter().map(|e| e.types[0].clone()).collect())
        .unwrap_or_default()
}

/// How [`crate::build_agent`] builds the algorithm `spec` names on `B`: its builder, and
/// whether the normalizer and preprocessing wrap it.
pub(crate) struct Picked {
    /// Builds the agent.
    pub build: Build,
    /// Whether the normalizer and per-copy preprocessing run around it.
    pub wrapped: bool,
}

/// The algorithm `spec`'s type names, as [`crate::build_agent`] builds it on `B`.
pub(crate) fn pick<B: Backend>(spec: &Json) -> Result<Picked> {
    ensure_shipped::<B>();
    let (build, wrapped, kind) = entry_of(spec, |e| {
        (
            e.builders.get(&TypeId::of::<B>()).cloned(),
            e.wrapped,
            e.types[0].clone(),
        )
    })?;
    let build = build.ok_or_else(|| CoreError::Config {
        at: "config.type".into(),
        reason: format!(
            "{kind:?} is registered on other backends, not on {0}; register it with \
             agents::register_algorithm::<{0}, _> too",
            B::NAME
        ),
    })?;
    Ok(Picked { build, wrapped })
}

/// Whether the algorithm `spec` names keeps stacked frames in its replay memory.
pub(crate) fn stacks_frames(spec: &Json) -> bool {
    entry_of(spec, |e| e.stacks_frames).unwrap_or(false)
}

/// How the algorithm `spec` names reads a config without building, and whether the
/// normalizer and preprocessing wrap its agent.
pub(crate) fn checker(spec: &Json) -> Result<(bool, Check)> {
    entry_of(spec, |e| (e.wrapped, e.check.clone()))
}

/// Every shipped algorithm's schema kinds, in the table's order, for the config schema.
pub(crate) fn schema_kinds() -> Vec<&'static SchemaKind> {
    let Ok(entries) = read() else { return vec![] };
    entries
        .iter()
        .filter_map(|e| match e.schema {
            SchemaSource::Keys(kind) => Some(kind),
            SchemaSource::Settings(_) => None,
        })
        .collect()
}

/// Each algorithm with a settings type: its name and the schema of its settings, for the
/// config schema.
pub(crate) fn settings_schemas(generator: &mut SchemaGenerator) -> Vec<(String, Json)> {
    let schemas: Vec<(String, SettingsSchema)> = match read() {
        Ok(entries) => entries
            .iter()
            .filter_map(|e| match e.schema {
                SchemaSource::Settings(schema) => Some((e.types[0].clone(), schema)),
                SchemaSource::Keys(_) => None,
            })
            .collect(),
        Err(_) => vec![],
    };
    schemas
        .into_iter()
        .map(|(kind, schema)| (kind, schema(generator).to_value()))
        .collect()
}

/// The table, to read.
fn read() -> Result<std::sync::RwLockReadGuard<'static, Vec<Entry>>> {
    registry().read().map_err(|_| CoreError::Config {
        at: "config.type".into(),
        reason: "the algorithm registry was poisoned by a panic while registering".into(),
    })
}

/// An algorithm's settings: the config's keys but `type` and `$schema`, as `C`.
pub(crate) fn settings<C: DeserializeOwned>(spec: &Json) -> Result<C> {
    rlgraph_components::read_settings(spec, "config", &NOT_SETTINGS, "an agent config")
}
