//! Stateful preprocessing (frame stacks, running statistics) on the acting side, as RLgraph's
//! Ape-X workers run it: one preprocessor stack per environment copy, reset when that copy's
//! episode ends. The agent inside sees preprocessed states only, so its memory stores them and
//! its learner never runs the stack on replayed batches (where a frame stack would mix
//! episodes and copies).

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph_components::preprocessor_stack;
use rlgraph_core::convert::{host_to_value, value_to_host};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{
    stack, unstack, Backend, Component, CoreError, Device, ErasedExecutor, GraphExecutor, HostState, Param, Result,
    SavedState,
};
use serde_json::{json, Value as Json};

use crate::agent::{Agent, Transition};
use crate::agent_graph::build_graph;
use crate::normalizer::{NormalizeSpec, Normalizer};
use crate::preprocessing::{preprocessor_kind, stack_members};
use crate::update_spec::UpdateSpec;

/// The name of the host state a checkpoint keeps the stacks under.
const STATE_NAME: &str = "worker_preprocessing";

/// One environment copy's stack and the preprocessed state it gave last.
struct Stream<B: Backend> {
    exec: GraphExecutor<B>,
    /// The preprocessed next state of the last observed step (already pushed), and whether
    /// `get_actions` has used it since.
    last: Option<(Value, bool)>,
}

impl<B: Backend> Stream<B> {
    /// `state` through this copy's stack.
    fn push(&mut self, state: &Value) -> Result<Value> {
        let out = self
            .exec
            .execute("preprocess", &[stack(std::slice::from_ref(state))?])?;
        let batch = out
            .into_iter()
            .next()
            .ok_or_else(|| bad("the preprocessor stack returned nothing".into()))?;
        unstack(&batch)?
            .into_iter()
            .next()
            .ok_or_else(|| bad("the preprocessor stack returned an empty batch".into()))
    }
}

/// The acting side's preprocessing: one preprocessor stack per environment copy, reset when
/// that copy's episode ends, as RLgraph's workers run stateful preprocessing. Copies' stacks
/// are made as copies appear.
///
/// [`WorkerStreams::act_states`] pushes each copy's state through its stack;
/// [`WorkerStreams::observe`] gives a transition with preprocessed states and resets the
/// copy's stack when its episode ends. A state acted on right after `observe` is the observed
/// next state, already pushed, so it is not pushed twice.
pub struct WorkerStreams<B: Backend> {
    specs: Vec<Json>,
    raw_space: Space,
    seed: u64,
    streams: Vec<Stream<B>>,
}

impl<B: Backend> WorkerStreams<B> {
    /// Stacks of the preprocessor specs `specs` (RLgraph's) over observations of `raw_space`.
    pub fn new(specs: Vec<Json>, raw_space: &Space, seed: u64) -> Result<Self> {
        let first = stream_graph::<B>(&specs, raw_space, seed)?;
        Ok(WorkerStreams {
            specs,
            raw_space: raw_space.clone(),
            seed,
            streams: vec![Stream {
                exec: first,
                last: None,
            }],
        })
    }

    /// The states the stacks make: their output space.
    pub fn state_space(&self) -> Result<Space> {
        output_space(&self.streams[0].exec)
    }

    fn stream(&mut self, env_id: usize) -> Result<&mut Stream<B>> {
        while self.streams.len() <= env_id {
            let exec = stream_graph::<B>(&self.specs, &self.raw_space, self.seed)?;
            self.streams.push(Stream { exec, last: None });
        }
        Ok(&mut self.streams[env_id])
    }

    /// The preprocessed states of copies `0..states.len()`, one state each.
    pub fn act_states(&mut self, states: &[Value]) -> Result<Vec<Value>> {
        let mut pre = Vec::with_capacity(states.len());
        for (i, state) in states.iter().enumerate() {
            let stream = self.stream(i)?;
            let p = match &mut stream.last {
                Some((p, used @ false)) => {
                    *used = true;
                    p.clone()
                }
                _ => {
                    let p = stream.push(state)?;
                    stream.last = Some((p.clone(), true));
                    p
                }
            };
            pre.push(p);
        }
        Ok(pre)
    }

    /// Copy `env_id`'s step with both states preprocessed; its stack is reset when the
    /// episode ends.
    pub fn observe(&mut self, env_id: usize, transition: Transition) -> Result<Transition> {
        let stream = self.stream(env_id)?;
        let state = match stream.last.take() {
            Some((p, _)) => p,
            None => stream.push(&transition.state)?,
        };
        let next_state = stream.push(&transition.next_state)?;
        if transition.terminated || transition.truncated {
            stream.exec.execute("reset", &[])?;
        } else {
            stream.last = Some((next_state.clone(), false));
        }
        Ok(Transition {
            state,
            next_state,
            ..transition
        })
    }

    /// Resets every copy's stack.
    pub fn reset(&mut self) -> Result<()> {
        for stream in &mut self.streams {
            stream.exec.execute("reset", &[])?;
            stream.last = None;
        }
        Ok(())
    }
}

/// An agent whose states pass through a stateful preprocessor stack per environment copy
/// ([`WorkerStreams`]) and then, with a `normalize_spec`, the running normalizer
/// ([`Normalizer`]) before it sees them. Build it with [`crate::build_agent`], which uses it
/// whenever a `preprocessing_spec` keeps state or a config normalizes. `observe` stores
/// preprocessed states; updates from external batches take preprocessed states.
pub struct PreprocessedAgent<B: Backend> {
    inner: Box<dyn Agent + Send>,
    streams: Option<WorkerStreams<B>>,
    normalizer: Option<Normalizer>,
    preprocessed_space: Space,
}

impl<B: Backend> PreprocessedAgent<B> {
    /// Wraps the agent `build` makes for the preprocessed state space with the preprocessor
    /// stack `specs` (RLgraph preprocessor specs) over `state_space`, one stack per copy.
    pub fn new(
        specs: Vec<Json>,
        state_space: &Space,
        seed: u64,
        build: impl FnOnce(&Space) -> Result<Box<dyn Agent + Send>>,
    ) -> Result<Self> {
        PreprocessedAgent::with_normalizer(Some(specs), None, state_space, seed, build)
    }

    /// [`PreprocessedAgent::new`] with the stack optional and, after it, the normalizer
    /// `normalize` describes (its spec and the discount of the returns it scales rewards by).
    pub fn with_normalizer(
        specs: Option<Vec<Json>>,
        normalize: Option<(&NormalizeSpec, f64)>,
        state_space: &Space,
        seed: u64,
        build: impl FnOnce(&Space) -> Result<Box<dyn Agent + Send>>,
    ) -> Result<Self> {
        let streams = specs
            .map(|specs| WorkerStreams::<B>::new(specs, state_space, seed))
            .transpose()?;
        let preprocessed_space = match &streams {
            Some(streams) => streams.state_space()?,
            None => state_space.clone(),
        };
        let normalizer = normalize
            .map(|(spec, gamma)| Normalizer::new(spec, &preprocessed_space, gamma))
            .transpose()?;
        let inner = build(&preprocessed_space)?;
        Ok(PreprocessedAgent {
            inner,
            streams,
            normalizer,
            preprocessed_space,
        })
    }

    /// The states the agent inside sees (the stack's output space).
    pub fn preprocessed_space(&self) -> &Space {
        &self.preprocessed_space
    }
}

/// The states a stack of the preprocessor specs `specs` makes of observations of
/// `raw_space`.
pub(crate) fn preprocessed_space<B: Backend>(specs: &[Json], raw_space: &Space, seed: u64) -> Result<Space> {
    output_space(&stream_graph::<B>(specs, raw_space, seed)?)
}

fn bad(reason: String) -> CoreError {
    CoreError::Config {
        at: "preprocessing_spec".into(),
        reason,
    }
}

/// A graph with API methods `preprocess(states)` and `reset()` over one stream (batch 1): a
/// `sequence`'s `batch_size` counts streams, and here every copy has a stack of its own.
fn stream_graph<B: Backend>(specs: &[Json], state_space: &Space, seed: u64) -> Result<GraphExecutor<B>> {
    let specs: Vec<Json> = specs
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if preprocessor_kind(&s) == "sequence" {
                if let Some(map) = s.as_object_mut() {
                    map.insert("batch_size".into(), json!(1));
                }
            }
            s
        })
        .collect();
    let layers = stack_members::<B>(&specs)?;
    let root = Component::<B>::new("worker-preprocessing")
        .with_sub(preprocessor_stack("stack", layers))
        .api("preprocess", vec![Param::new("states")], |ctx, args| {
            ctx.call("stack", "preprocess", &[args.get(0)?])
        })
        .api("reset", vec![], |ctx, _| ctx.call("stack", "reset", &[]));
    let spaces = BTreeMap::from([("states".to_string(), state_space.with_batch_rank(true))]);
    build_graph(root, &spaces, Device::Cpu, seed)
}

/// The item space of `preprocess`'s output.
fn output_space<B: Backend>(exec: &GraphExecutor<B>) -> Result<Space> {
    let meta = exec.meta_graph();
    let out = meta
        .methods()
        .get("preprocess")
        .and_then(|io| io.outputs.first())
        .and_then(|&node| meta.graph()[node].spaces.first().cloned().flatten())
        .ok_or_else(|| bad("the preprocessor stack's output space is unknown".into()))?;
    Ok(out.with_batch_rank(false))
}

impl<B: Backend> Agent for PreprocessedAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        let mut pre = match &mut self.streams {
            Some(streams) => streams.act_states(states)?,
            None => states.to_vec(),
        };
        if let Some(normalizer) = &mut self.normalizer {
            pre = normalizer.act_states(&pre, explore)?;
        }
        self.inner.get_actions(&pre, explore, time_percentage)
    }

    fn observe(&mut self, env_id: usize, mut transition: Transition) -> Result<()> {
        if let Some(streams) = &mut self.streams {
            transition = streams.observe(env_id, transition)?;
        }
        if let Some(normalizer) = &mut self.normalizer {
            transition = normalizer.observe(env_id, transition)?;
        }
        self.inner.observe(env_id, transition)
    }

    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        self.inner.begin_episodes(explore, copies)
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        self.inner.update(time_percentage)
    }

    fn update_spec(&self) -> &UpdateSpec {
        self.inner.update_spec()
    }

    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let streams = match &self.streams {
            Some(streams) => Some(SavedStreams {
                state: Some(streams.streams_state()?),
                var_shapes: BTreeMap::new(),
                last_space: None,
            }),
            None => None,
        };
        let mut all: Vec<(&str, &dyn HostState)> = extra.to_vec();
        if let Some(streams) = &streams {
            all.push((STATE_NAME, streams));
        }
        if let Some(normalizer) = &self.normalizer {
            all.push((crate::normalizer::STATE_NAME, normalizer));
        }
        self.inner.save_checkpoint_with(path, &all)
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let mut loaded = match &self.streams {
            // Every copy's stack has the variables of the first.
            Some(streams) => Some(SavedStreams {
                state: None,
                var_shapes: streams.streams[0]
                    .exec
                    .variables()?
                    .into_iter()
                    .map(|(path, t)| (path, t.shape))
                    .collect(),
                last_space: Some(self.preprocessed_space.clone()),
            }),
            None => None,
        };
        {
            let mut all: Vec<(&str, &mut dyn HostState)> = Vec::with_capacity(extra.len() + 2);
            for (name, state) in extra.iter_mut() {
                let state: &mut dyn HostState = &mut **state;
                all.push((name, state));
            }
            if let Some(loaded) = &mut loaded {
                all.push((STATE_NAME, loaded));
            }
            if let Some(normalizer) = &mut self.normalizer {
                all.push((crate::normalizer::STATE_NAME, normalizer));
            }
            self.inner.restore_checkpoint_with(path, &mut all)?;
        }
        match (&mut self.streams, loaded.and_then(|l| l.state)) {
            (Some(streams), Some(state)) => streams.load_streams(state),
            _ => Ok(()),
        }
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        self.inner.graph()
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        self.inner.graph_mut()
    }

    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        self.inner.update_from_batch(batch, time_percentage)
    }

    fn reset(&mut self) -> Result<()> {
        if let Some(streams) = &mut self.streams {
            streams.reset()?;
        }
        if let Some(normalizer) = &mut self.normalizer {
            normalizer.reset();
        }
        self.inner.reset()
    }

    fn get_weights(&self) -> Result<BTreeMap<String, rlgraph_core::HostTensor>> {
        self.inner.get_weights()
    }

    fn set_weights(&mut self, weights: &BTreeMap<String, rlgraph_core::HostTensor>) -> Result<()> {
        self.inner.set_weights(weights)
    }

    fn weights_changed(&mut self) -> Result<()> {
        self.inner.weights_changed()
    }

    fn import_model(&mut self, path: &Path) -> Result<()> {
        self.inner.import_model(path)
    }

    fn export_model(&self, path: &Path) -> Result<()> {
        self.inner.export_model(path)
    }
}

/// The stacks as a checkpoint holds them: per copy `i`, its variables under `i/var/PATH` and
/// its last preprocessed state's leaves under `i/last/KEY`, with the stream count and the
/// `used` flags in meta. On save it carries the snapshot; on restore it receives it, after
/// `check_state` held it to the variables every stack has, so that [`PreprocessedAgent`]
/// can apply it once the agent inside accepted the whole checkpoint, without failing then.
struct SavedStreams {
    state: Option<SavedState>,
    /// Each stack variable's path and shape (restore only).
    var_shapes: BTreeMap<String, Vec<usize>>,
    /// The states the stacks make, which a saved last state must be (restore only).
    last_space: Option<Space>,
}

impl HostState for SavedStreams {
    fn save_state(&self) -> Result<SavedState> {
        Ok(self.state.clone().unwrap_or_default())
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        let wrong = |what: String| Err(bad(format!("the checkpoint's {STATE_NAME}: {what}")));
        let n = match state.meta.get("streams").and_then(Json::as_u64) {
            Some(n) if n <= 1 << 16 => n as usize,
            _ => return wrong(format!("no sane stream count in {}", state.meta)),
        };
        let used = state.meta.get("used").and_then(Json::as_array).map_or(0, Vec::len);
        if used != n {
            return wrong(format!("{used} used flags for {n} streams"));
        }
        for (key, t) in &state.tensors {
            let Some((i, rest)) = key.split_once('/') else {
                return wrong(format!("unknown entry {key:?}"));
            };
            if i.parse::<usize>().map_or(true, |i| i >= n) {
                return wrong(format!("entry {key:?} names no stream of {n}"));
            }
            if let Some(path) = rest.strip_prefix("var/") {
                match self.var_shapes.get(path) {
                    Some(shape) if *shape == t.shape => {}
                    Some(shape) => return wrong(format!("{key} has shape {:?}, expected {shape:?}", t.shape)),
                    None => return wrong(format!("{key} is no variable of the stack")),
                }
            } else if let Some(leaf) = rest.strip_prefix("last/") {
                // A state of another layout (float stacks where the stacks now make bytes,
                // say) is refused here, not fed to the agent at its next step.
                let want = self
                    .last_space
                    .as_ref()
                    .and_then(|s| s.flatten().into_iter().find(|(k, _)| k == leaf));
                let got = host_to_value(t.clone(), None)?;
                if let Some((_, space)) = want {
                    if let Err(e) = space.check(&got) {
                        return wrong(format!("{key} is not a state the stacks make: {e}"));
                    }
                }
            } else {
                return wrong(format!("unknown entry {key:?}"));
            }
        }
        Ok(())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        self.state = Some(state);
        Ok(())
    }
}

impl<B: Backend> WorkerStreams<B> {
    /// Every copy's stack and last state, as [`SavedStreams`] lays them out.
    fn streams_state(&self) -> Result<SavedState> {
        let mut tensors = BTreeMap::new();
        let mut used = vec![];
        for (i, stream) in self.streams.iter().enumerate() {
            for (path, t) in stream.exec.variables()? {
                tensors.insert(format!("{i}/var/{path}"), t);
            }
            used.push(match &stream.last {
                Some((p, used)) => {
                    for (key, leaf) in p.flatten() {
                        tensors.insert(format!("{i}/last/{key}"), value_to_host(leaf)?);
                    }
                    json!(used)
                }
                None => Json::Null,
            });
        }
        Ok(SavedState {
            tensors,
            meta: json!({"streams": self.streams.len(), "used": used}),
        })
    }

    fn load_streams(&mut self, state: SavedState) -> Result<()> {
        let n = state.meta.get("streams").and_then(Json::as_u64).unwrap_or(0) as usize;
        let used = state
            .meta
            .get("used")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        for i in 0..n {
            let prefix = format!("{i}/var/");
            let vars: BTreeMap<String, rlgraph_core::HostTensor> = state
                .tensors
                .iter()
                .filter_map(|(k, t)| k.strip_prefix(&prefix).map(|p| (p.to_string(), t.clone())))
                .collect();
            let last_prefix = format!("{i}/last/");
            let leaves = state
                .tensors
                .iter()
                .filter_map(|(k, t)| k.strip_prefix(&last_prefix).map(|key| (key.to_string(), t.clone())))
                .map(|(key, t)| Ok((key, host_to_value(t, None)?)))
                .collect::<Result<Vec<_>>>()?;
            let last = match used.get(i).and_then(Json::as_bool) {
                Some(used) if !leaves.is_empty() => Some((Value::unflatten(leaves)?, used)),
                _ => None,
            };
            let stream = self.stream(i)?;
            stream.exec.set_variables(&vars)?;
            stream.last = last;
        }
        Ok(())
    }
}
