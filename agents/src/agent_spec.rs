//! Reading RLgraph agent configs through serde: the keys every agent shares, declared once
//! in [`SharedSpec`], and [`read_config`], which reads them beside an agent's own keys,
//! refuses keys no part knows and names the full key path in every error
//! (`config.update_spec.batch_size: ...`).

use rlgraph_components::{MultiGpuSync, TimeDependent};
use rlgraph_core::{CoreError, Device, Result, SpecOnly};
use schemars::JsonSchema;
use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde::{Deserialize, Deserializer, Serialize};
use serde_aux::serde_introspection::serde_introspect;
use serde_json::Value as Json;

use crate::bounded_numbers::Positive;
use crate::mask_key::MaskKey;
use crate::update_spec::UpdateSpecKeys;

/// A config error at `at` (a key path such as `config.update_spec.batch_size`).
pub(crate) fn config(at: &str, reason: String) -> CoreError {
    CoreError::Config { at: at.into(), reason }
}

/// How a config asks for its observations to be stored and sent (`frame_storage`, a key of
/// this project beside RLgraph's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FrameStorage {
    /// Bytes where the observation is bytes and its preprocessing allows it; else as the
    /// preprocessing makes them.
    #[default]
    Auto,
    /// Bytes; a config that cannot keep them is refused, saying why.
    Uint8,
    /// As the preprocessing makes them (float32 stacks, as before bytes were kept).
    Float32,
}

/// The keys every agent config has, whatever the algorithm: network, preprocessing,
/// discount, device, optimizer, update schedule and observation buffering.
#[derive(Deserialize, Default, JsonSchema)]
pub(crate) struct SharedSpec {
    /// The agent type as written (see [`SharedSpec::kind`]).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The policy network's layers.
    pub network_spec: Option<Layers>,
    /// The preprocessor specs.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::components")]
    pub preprocessing_spec: Option<Vec<Json>>,
    /// Where Dict states carry their action mask (Gymnasium's convention, `action_mask` by
    /// default).
    pub action_mask_key: Option<String>,
    /// Gamma, in `[0, 1]`.
    pub discount: Option<Fraction>,
    /// Where the graph runs.
    pub execution_spec: Option<ExecutionSpec>,
    /// TensorBoard summaries: only an empty object is accepted.
    #[allow(dead_code)] // Read only to refuse the keys inside it.
    pub summary_spec: Option<NoKeys>,
    /// Periodic saving: only an empty object is accepted (the worker saves checkpoints).
    #[allow(dead_code)] // Read only to refuse the keys inside it.
    pub saver_spec: Option<NoKeys>,
    /// The optimizer, read by `OptimizerSpec::parse` (shared with the component registry).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::optimizer")]
    pub optimizer_spec: Option<Json>,
    /// The update schedule.
    pub update_spec: Option<UpdateSpecKeys>,
    /// Observation buffering.
    pub observe_spec: Option<ObserveSpec>,
    /// How observations are stored and sent (bytes or floats); read by
    /// [`crate::WorkerLayout::plan`].
    #[allow(dead_code)] // Read for its keys here; `WorkerLayout::plan` reads the value.
    pub frame_storage: Option<FrameStorage>,
}

impl SharedSpec {
    /// The lower-cased `type` with `-` and `_` removed (`single-impala` -> `singleimpala`),
    /// or `default`.
    pub fn kind(&self, default: &str) -> String {
        normalized_kind(self.kind.as_deref(), default)
    }

    /// The device of `execution_spec.default_device`, the CPU when absent.
    pub fn device(&self) -> Device {
        self.execution_spec
            .as_ref()
            .and_then(|e| e.default_device.as_ref())
            .map_or(Device::Cpu, |d| d.0)
    }

    /// The towers of `execution_spec.device_strategy: multi_gpu_sync` (`None` for the default
    /// strategy). `learner` says whether this agent's learner can be split over towers.
    pub fn multi_gpu(&self, learner: bool) -> Result<Option<MultiGpuSync>> {
        // Each tower is a copy of the learner's graph: a count no machine has would only
        // spend the build (and once, a test's half hour) before failing.
        const MAX_TOWERS: usize = 64;
        let Some(e) = &self.execution_spec else { return Ok(None) };
        let gpu = e.gpu_spec.as_ref();
        if e.device_strategy != Some(DeviceStrategy::MultiGpuSync) {
            return Ok(None);
        }
        if !learner {
            return Err(config(
                "config.execution_spec.device_strategy",
                "multi_gpu_sync is built for the DQN and Ape-X learners so far".into(),
            ));
        }
        if gpu.and_then(|g| g.gpus_enabled) != Some(true) {
            return Err(config(
                "config.execution_spec.gpu_spec.gpus_enabled",
                "multi_gpu_sync needs gpus_enabled: true".into(),
            ));
        }
        let towers = gpu.and_then(|g| g.max_usable_gpus).ok_or_else(|| {
            config(
                "config.execution_spec.gpu_spec.max_usable_gpus",
                "missing; multi_gpu_sync builds one tower per usable GPU".into(),
            )
        })?;
        if towers.0 > MAX_TOWERS {
            return Err(config(
                "config.execution_spec.gpu_spec.max_usable_gpus",
                format!(
                    "{} towers; at most {MAX_TOWERS} (one per GPU, or faked on the CPU)",
                    towers.0
                ),
            ));
        }
        Ok(Some(MultiGpuSync {
            towers: towers.0,
            fake_gpus: gpu.and_then(|g| g.fake_gpus_if_necessary).unwrap_or(false),
        }))
    }

    /// The policy network's layers; an error naming `network_spec` when there are none.
    pub fn network(&self, why: &str) -> Result<Vec<Json>> {
        match &self.network_spec {
            Some(layers) if !layers.0.is_empty() => layers.checked("config.network_spec"),
            _ => Err(config("config.network_spec", format!("missing; {why}"))),
        }
    }

    /// The action mask's key in Dict states (`action_mask` when absent).
    pub fn action_mask_key(&self) -> MaskKey {
        match &self.action_mask_key {
            Some(key) => MaskKey {
                key: key.clone(),
                explicit: true,
            },
            None => MaskKey {
                key: rlgraph_components::action_mask::DEFAULT_MASK_KEY.into(),
                explicit: false,
            },
        }
    }

    /// The preprocessor specs (empty when absent), each checked as [`Layers::checked`] checks
    /// layers.
    pub fn preprocessing(&self) -> Result<Vec<Json>> {
        let specs = self.preprocessing_spec.clone().unwrap_or_default();
        crate::preprocessing::stack_members::<SpecOnly>(&specs)?;
        Ok(specs)
    }

    /// The optimizer spec, or `default` when absent.
    pub fn optimizer_json(&self, default: Json) -> Json {
        self.optimizer_spec.clone().unwrap_or(default)
    }

    /// Refuses `observe_spec.n_step`, which only DQN reads.
    pub fn refuse_n_step(&self) -> Result<()> {
        match self.observe_spec.as_ref().and_then(|o| o.n_step) {
            Some(_) => Err(config(
                "config.observe_spec.n_step",
                "n-step returns are a DQN setting".into(),
            )),
            None => Ok(()),
        }
    }
}

/// `policy_spec.action_adapter_spec` as the policies take it, placed in the config for errors.
pub(crate) fn adapter_spec(spec: Option<&Json>) -> Option<rlgraph_components::AdapterSpec> {
    spec.map(|spec| rlgraph_components::AdapterSpec {
        spec: spec.clone(),
        at: "config.policy_spec.action_adapter_spec".into(),
    })
}

/// `policy_spec.action_adapter_spec`, checked as the policies will read it (see
/// [`rlgraph_components::AdapterSpec::check`]), so its errors come when the config loads.
pub(crate) fn checked_adapter(spec: Option<Json>) -> Result<Option<Json>> {
    if let Some(adapter) = adapter_spec(spec.as_ref()) {
        adapter.check()?;
    }
    Ok(spec)
}

/// Refuses the first of `keys` that is given (`(key, given)` pairs under `at`, such as
/// `config` or `config.memory_spec`), saying `why`.
pub(crate) fn refuse_given(at: &str, keys: &[(&str, bool)], why: &str) -> Result<()> {
    match keys.iter().find(|(_, given)| *given) {
        Some((key, _)) => Err(config(&format!("{at}.{key}"), why.into())),
        None => Ok(()),
    }
}

/// `kind` lower-cased with `-` and `_` removed, or `default`.
pub(crate) fn normalized_kind(kind: Option<&str>, default: &str) -> String {
    kind.unwrap_or(default).to_lowercase().replace(['-', '_'], "")
}

/// One kind of agent config, as its algorithm's folder describes it for the schema: the
/// `type` names that pick it and how its keys differ from the shared ones.
pub(crate) struct SchemaKind {
    /// The kind, as the schema and the reference page title it.
    pub title: &'static str,
    /// The normalized `type` names.
    pub names: &'static [&'static str],
    /// The schema of the algorithm's own keys.
    pub own: fn(&mut schemars::SchemaGenerator) -> Json,
    /// Keys this kind refuses (shared ones, or the algorithm's that belong to a sibling).
    pub refused: &'static [&'static str],
    /// Whether `memory_spec.alpha` and `beta` may be given (prioritized replay: DQN's).
    pub priorities: bool,
    /// Whether `observe_spec.n_step` is read (DQN only).
    pub n_step: bool,
    /// Whether `normalize_spec` may wrap the agent.
    pub normalize: bool,
}

/// Which `type` values an agent's config may have.
pub(crate) struct AgentKind {
    /// The type assumed when the config has none (`""`: the type is required).
    pub default: &'static str,
    /// The accepted types, normalized (see [`normalized_kind`]).
    pub names: &'static [&'static str],
    /// The agent, for the error (`"a DQN agent (dqn or apex)"`).
    pub what: &'static str,
}

/// Reads `spec` as the shared keys plus the agent's own keys `T`, and returns its normalized
/// type beside them. The type is checked first, so another agent's config fails on its type
/// rather than its first foreign key. A key neither part knows is an error that names it and
/// lists the known ones; every other error names its key path.
pub(crate) fn read_config<T: DeserializeOwned>(spec: &Json, kind: &AgentKind) -> Result<(String, SharedSpec, T)> {
    let Some(map) = spec.as_object() else {
        return Err(config("config", format!("expected a JSON object, got {}", brief(spec))));
    };
    let shared: SharedSpec = part(spec)?;
    let name = shared.kind(kind.default);
    if !kind.names.contains(&name.as_str()) {
        let written = shared.kind.as_deref().unwrap_or("");
        return Err(config("config.type", format!("{written:?} is not {}", kind.what)));
    }
    let known: Vec<&str> = serde_introspect::<SharedSpec>()
        .iter()
        .chain(serde_introspect::<T>())
        .copied()
        .collect();
    if map.contains_key("normalize_spec") {
        return Err(config(
            "config.normalize_spec",
            "the normalizer runs around an agent that build_agent makes (rlgraph train, bench, evaluate); \
             this layout builds its roles itself and cannot run it yet"
                .into(),
        ));
    }
    // `$schema` names the config schema for editors; it means nothing to the agent.
    if let Some(key) = map.keys().find(|k| *k != "$schema" && !known.contains(&k.as_str())) {
        return Err(config(
            &format!("config.{key}"),
            format!("not a key of {} config (known: {})", kind.what, known.join(", ")),
        ));
    }
    Ok((name, shared, part(spec)?))
}

/// A time-dependent parameter (a number or an RLgraph schedule) found at `at`, or the
/// constant `default` when absent.
pub(crate) fn schedule(value: Option<&Json>, default: f64, at: &str) -> Result<TimeDependent> {
    match value {
        None => Ok(TimeDependent::Constant(default)),
        Some(v) => TimeDependent::parse(v, at),
    }
}

/// Reads one part of a config, an error naming the key path where it fails.
fn part<T: DeserializeOwned>(spec: &Json) -> Result<T> {
    serde_path_to_error::deserialize(spec).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            "config".to_string()
        } else {
            format!("config.{path}")
        };
        config(&at, e.inner().to_string())
    })
}

/// A JSON value, cut short for an error message.
fn brief(value: &Json) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

/// A layer list, also accepted in RLgraph's `{"layers": [...], "scope": ...}` form.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layers(pub Vec<Json>);

impl Layers {
    /// The layer specs, each made into its component on [`SpecOnly`], which computes nothing:
    /// so a typo key or a value of the wrong type is refused when the config loads, at its
    /// key path under `at` (`config.network_spec[1].units`), not when the graph is built.
    pub fn checked(&self, at: &str) -> Result<Vec<Json>> {
        rlgraph_components::layers_from_spec::<SpecOnly>(&self.0, at)?;
        Ok(self.0.clone())
    }
}

impl<'de> Deserialize<'de> for Layers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Scoped {
            layers: Vec<Json>,
            #[allow(dead_code)] // RLgraph's variable scope; names here come from the component tree.
            scope: Option<String>,
        }
        match Json::deserialize(d)? {
            Json::Array(layers) => Ok(Layers(layers)),
            Json::Object(o) => {
                let scoped: Scoped = serde_json::from_value(Json::Object(o)).map_err(D::Error::custom)?;
                Ok(Layers(scoped.layers))
            }
            other => Err(D::Error::invalid_type(
                unexpected(&other),
                &"a list of layer specs or {\"layers\": [...]}",
            )),
        }
    }
}

/// What serde's messages call a JSON value that is not the expected kind.
fn unexpected(value: &Json) -> Unexpected<'_> {
    match value {
        Json::Null => Unexpected::Unit,
        Json::Bool(b) => Unexpected::Bool(*b),
        Json::Number(n) => n.as_f64().map_or(Unexpected::Other("number"), Unexpected::Float),
        Json::String(s) => Unexpected::Str(s),
        Json::Array(_) => Unexpected::Seq,
        Json::Object(_) => Unexpected::Map,
    }
}

/// RLgraph's `execution_spec`: the device, and the device strategy with its GPU settings.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecutionSpec {
    /// `cpu` or `cuda:N`.
    pub default_device: Option<DeviceName>,
    /// `default` (one device) or `multi_gpu_sync` (towers; see `MultiGpuSync`).
    pub device_strategy: Option<DeviceStrategy>,
    /// The GPU settings that strategy reads.
    pub gpu_spec: Option<GpuSpec>,
    /// Which executor runs the agent: `single_threaded` (the default) or `ga3c` (batched
    /// prediction and training queues; `executors::ga3c` reads `ga3c_spec`).
    #[allow(dead_code)] // Read by the executors, from the JSON.
    pub executor: Option<ExecutorName>,
    /// The settings of the `ga3c` executor, checked by `executors::ga3c::Ga3cSpec`.
    #[allow(dead_code)] // Read by the executors, from the JSON.
    pub ga3c_spec: Option<Json>,
    /// RLgraph's graph seed; `rlgraph train` uses it when `--seed` is not given.
    #[allow(dead_code)] // Read by the command-line program, from the JSON.
    pub seed: Option<u64>,
    /// TensorFlow session options (soft placement, thread pools): no libtorch or candle
    /// equivalent; reported by [`unused_keys`].
    #[allow(dead_code)] // Read only to report it.
    pub session_config: Option<Json>,
    /// TensorFlow's monitored-session switch: nothing to switch here; reported by
    /// [`unused_keys`].
    #[allow(dead_code)] // Read only to report it.
    pub disable_monitoring: Option<bool>,
    /// Ray's executor settings: reported by [`unused_keys`] (one process runs every role).
    #[allow(dead_code)] // Read only to report it.
    pub ray_spec: Option<Json>,
    /// TensorFlow's timeline tracing: the profiler (`rlgraph train --profile`) does this here;
    /// reported by [`unused_keys`].
    #[allow(dead_code)] // Read only to report it.
    pub trace_enabled: Option<bool>,
}

/// The executors an `execution_spec` may name.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExecutorName {
    /// One thread steps the environments and updates (`SingleThreadedWorker`).
    SingleThreaded,
    /// GA3C's agents, predictors and trainers on threads of their own.
    Ga3c,
}

/// RLgraph's device strategies.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DeviceStrategy {
    /// Everything on the default device (or as the device map says).
    Default,
    /// The learner's update split over towers, gradients averaged.
    MultiGpuSync,
}

/// RLgraph's `execution_spec.gpu_spec`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GpuSpec {
    /// Whether GPUs may be used at all.
    pub gpus_enabled: Option<bool>,
    /// How many GPUs (towers, with `multi_gpu_sync`).
    pub max_usable_gpus: Option<Positive>,
    /// With fewer GPUs than towers, put the towers on the CPU rather than refuse.
    pub fake_gpus_if_necessary: Option<bool>,
    /// TensorFlow's cap on one process's share of GPU memory: libtorch and candle allocate
    /// what they need; reported by [`unused_keys`].
    #[allow(dead_code)] // Read only to report it.
    pub per_process_gpu_memory_fraction: Option<f64>,
    /// TensorFlow's on-demand allocation; libtorch and candle always allocate on demand, so
    /// only `true` is accepted.
    #[allow(dead_code)] // Read only to refuse false.
    pub allow_memory_growth: Option<AlwaysTrue>,
}

/// A flag that can only be `true` here.
pub(crate) struct AlwaysTrue;

impl<'de> Deserialize<'de> for AlwaysTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match bool::deserialize(d)? {
            true => Ok(AlwaysTrue),
            false => Err(D::Error::custom(
                "libtorch and candle allocate GPU memory as they need it; only true is supported",
            )),
        }
    }
}

/// A device written as RLgraph writes it (`cpu`, `cuda:0`, `/device:GPU:0`).
pub(crate) struct DeviceName(pub Device);

impl<'de> Deserialize<'de> for DeviceName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Device::parse(&text)
            .map(DeviceName)
            .ok_or_else(|| D::Error::custom(format!("{text:?} is not a device; use cpu or cuda:N")))
    }
}

/// An object that must be empty: the spec exists in RLgraph but none of its keys is
/// supported yet.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoKeys {}

/// RLgraph's `observe_spec`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObserveSpec {
    /// RLgraph's per-environment buffer before records reach memory; buffering here is
    /// per environment and unbounded until an episode or n-step window closes, so the value
    /// is accepted and not needed.
    #[allow(dead_code)]
    pub buffer_size: Option<u64>,
    /// n-step returns (DQN).
    pub n_step: Option<Positive>,
}

/// RLgraph's `memory_spec`.
#[derive(Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemorySpec {
    /// The memory type as written.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// How many records it holds.
    pub capacity: Option<Positive>,
    /// Prioritized replay's priority exponent.
    pub alpha: Option<f64>,
    /// Prioritized replay's importance-weight exponent.
    pub beta: Option<f64>,
    /// Stacked states stored frame by frame (set for frame-stacking preprocessing).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::frame_stack")]
    pub frame_stack: Option<rlgraph_memories::FrameStack>,
}

impl MemorySpec {
    /// The normalized type (see [`SharedSpec::kind`]), or `default`.
    pub fn kind(&self, default: &str) -> String {
        normalized_kind(self.kind.as_deref(), default)
    }

    /// The capacity, or `default`.
    pub fn capacity(&self, default: usize) -> usize {
        self.capacity.map_or(default, |c| c.0)
    }

    /// Refuses `alpha` and `beta`, which only prioritized replay reads.
    pub fn refuse_priorities(&self) -> Result<()> {
        refuse_given(
            "config.memory_spec",
            &[("alpha", self.alpha.is_some()), ("beta", self.beta.is_some())],
            "a prioritized-replay setting; this memory has no priorities",
        )
    }
}

/// A number in `[0, 1]`: a discount or a probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Fraction(pub f64);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match f64::deserialize(d)? {
            x if (0.0..=1.0).contains(&x) => Ok(Fraction(x)),
            x => Err(D::Error::invalid_value(Unexpected::Float(x), &"a number from 0 to 1")),
        }
    }
}

/// The keys of `spec` that RLgraph reads and that this project accepts without a use for
/// them (TensorFlow session settings), each with why; the command-line program prints them,
/// so no key is ignored silently.
pub fn unused_keys(spec: &Json) -> Vec<(String, &'static str)> {
    const UNUSED: [(&str, &str); 5] = [
        (
            "/execution_spec/ray_spec",
            "Ray's distributed settings; rlgraph train runs every role in this process, as RLgraph's \
             agents do outside its Ray executors",
        ),
        (
            "/execution_spec/trace_enabled",
            "TensorFlow timeline tracing; use rlgraph train --profile DIR",
        ),
        (
            "/execution_spec/session_config",
            "TensorFlow session options; libtorch and candle have no session",
        ),
        (
            "/execution_spec/disable_monitoring",
            "TensorFlow's monitored session; nothing to monitor here",
        ),
        (
            "/execution_spec/gpu_spec/per_process_gpu_memory_fraction",
            "TensorFlow's GPU memory cap; libtorch and candle allocate as needed",
        ),
    ];
    UNUSED
        .iter()
        .filter(|(pointer, _)| spec.pointer(pointer).is_some())
        .map(|(pointer, why)| (format!("config{}", pointer.replace('/', ".")), *why))
        .collect()
}

crate::bounded_numbers::inline_schema!(Fraction, "Fraction", {"type": "number", "minimum": 0, "maximum": 1});
crate::bounded_numbers::inline_schema!(AlwaysTrue, "AlwaysTrue", {"const": true});
crate::bounded_numbers::inline_schema!(DeviceName, "DeviceName", {
    "type": "string",
    "description": "cpu, cuda:N or RLgraph's /device:GPU:N"
});
crate::bounded_numbers::inline_schema!(Layers, "Layers", {"$ref": "#/$defs/layer_list"});
