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
use crate::preprocessing::{is_stateful, preprocessor_kind, stack_members};
use crate::update_spec::UpdateSpec;

/// The name of the host state a checkpoint keeps the stacks under.
const STATE_NAME: &str = "worker_preprocessing";

/// The config's preprocessor specs when one of them keeps state (then the whole stack runs
/// on the acting side), else `None`.
pub(crate) fn stateful_preprocessing(spec: &Json) -> Option<Vec<Json>> {
    let specs = spec.get("preprocessing_spec")?.as_array()?;
    specs.iter().any(is_stateful).then(|| specs.clone())
}

/// `spec` without its preprocessing, for the agent inside [`PreprocessedAgent`].
pub(crate) fn without_preprocessing(spec: &Json) -> Json {
    let mut spec = spec.clone();
    if let Some(map) = spec.as_object_mut() {
        map.insert("preprocessing_spec".into(), json!([]));
    }
    spec
}

/// One environment copy's stack and the preprocessed state it gave last.
struct Stream<B: Backend> {
    exec: GraphExecutor<B>,
    /// The preprocessed next state of the last observed step (already pushed), and whether
    /// `get_actions` has used it since.
    last: Option<(Value, bool)>,
}

/// An agent whose states pass through a stateful preprocessor stack per environment copy
/// before it sees them (RLgraph's worker-side preprocessing). Build it with
/// [`crate::build_agent`], which uses it whenever a `preprocessing_spec` keeps state.
///
/// `get_actions` pushes each copy's state through that copy's stack; `observe` stores the
/// preprocessed state and next state, and resets the copy's stack when its episode ends.
/// A state `get_actions` receives right after `observe` is the observed next state, already
/// pushed, so it is not pushed twice. Updates from external batches take preprocessed states.
pub struct PreprocessedAgent<B: Backend> {
    inner: Box<dyn Agent + Send>,
    specs: Vec<Json>,
    raw_space: Space,
    preprocessed_space: Space,
    seed: u64,
    streams: Vec<Stream<B>>,
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
        let probe = stream_graph::<B>(&specs, state_space, seed)?;
        let preprocessed_space = output_space(&probe)?;
        let inner = build(&preprocessed_space)?;
        Ok(PreprocessedAgent {
            inner,
            specs,
            raw_space: state_space.clone(),
            preprocessed_space,
            seed,
            streams: vec![Stream {
                exec: probe,
                last: None,
            }],
        })
    }

    /// The states the agent inside sees (the stack's output space).
    pub fn preprocessed_space(&self) -> &Space {
        &self.preprocessed_space
    }

    fn stream(&mut self, env_id: usize) -> Result<&mut Stream<B>> {
        while self.streams.len() <= env_id {
            let exec = stream_graph::<B>(&self.specs, &self.raw_space, self.seed)?;
            self.streams.push(Stream { exec, last: None });
        }
        Ok(&mut self.streams[env_id])
    }

    /// `state` through copy `env_id`'s stack.
    fn push(&mut self, env_id: usize, state: &Value) -> Result<Value> {
        let stream = self.stream(env_id)?;
        let out = stream
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
            if let (true, Some(map)) = (preprocessor_kind(&s) == "sequence", s.as_object_mut()) {
                map.insert("batch_size".into(), json!(1));
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
        let mut pre = Vec::with_capacity(states.len());
        for (i, state) in states.iter().enumerate() {
            let reuse = match &mut self.stream(i)?.last {
                Some((p, used @ false)) => {
                    *used = true;
                    Some(p.clone())
                }
                _ => None,
            };
            pre.push(match reuse {
                Some(p) => p,
                None => {
                    let p = self.push(i, state)?;
                    self.streams[i].last = Some((p.clone(), true));
                    p
                }
            });
        }
        self.inner.get_actions(&pre, explore, time_percentage)
    }

    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        let state = match self.stream(env_id)?.last.take() {
            Some((p, _)) => p,
            None => self.push(env_id, &transition.state)?,
        };
        let next_state = self.push(env_id, &transition.next_state)?;
        let stream = &mut self.streams[env_id];
        if transition.terminated || transition.truncated {
            stream.exec.execute("reset", &[])?;
        } else {
            stream.last = Some((next_state.clone(), false));
        }
        self.inner.observe(
            env_id,
            Transition {
                state,
                next_state,
                ..transition
            },
        )
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        self.inner.update(time_percentage)
    }

    fn update_spec(&self) -> &UpdateSpec {
        self.inner.update_spec()
    }

    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let streams = StreamsState(&self.streams);
        let mut all: Vec<(&str, &dyn HostState)> = extra.to_vec();
        all.push((STATE_NAME, &streams));
        self.inner.save_checkpoint_with(path, &all)
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let mut loaded = LoadedStreams(None);
        {
            let mut all: Vec<(&str, &mut dyn HostState)> = Vec::with_capacity(extra.len() + 1);
            for (name, state) in extra.iter_mut() {
                let state: &mut dyn HostState = &mut **state;
                all.push((name, state));
            }
            all.push((STATE_NAME, &mut loaded));
            self.inner.restore_checkpoint_with(path, &mut all)?;
        }
        if let Some(state) = loaded.0 {
            self.load_streams(state)?;
        }
        Ok(())
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
        for stream in &mut self.streams {
            stream.exec.execute("reset", &[])?;
            stream.last = None;
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
/// its last preprocessed state's leaves under `i/last/KEY`, with the `used` flags in meta.
struct StreamsState<'a, B: Backend>(&'a [Stream<B>]);

impl<B: Backend> HostState for StreamsState<'_, B> {
    fn save_state(&self) -> Result<SavedState> {
        let mut tensors = BTreeMap::new();
        let mut used = vec![];
        for (i, stream) in self.0.iter().enumerate() {
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
            meta: json!({"streams": self.0.len(), "used": used}),
        })
    }

    fn check_state(&self, _: &SavedState) -> Result<()> {
        Ok(())
    }

    fn load_state(&mut self, _: SavedState) -> Result<()> {
        Err(bad("the stacks are restored by PreprocessedAgent".into()))
    }
}

/// Receives the stacks' saved state during a restore; [`PreprocessedAgent`] applies it after
/// the agent inside accepted the whole checkpoint.
struct LoadedStreams(Option<SavedState>);

impl HostState for LoadedStreams {
    fn save_state(&self) -> Result<SavedState> {
        Ok(self.0.clone().unwrap_or_default())
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        match state.meta.get("streams").and_then(Json::as_u64) {
            Some(n) if n <= 1 << 16 => Ok(()),
            _ => Err(bad(format!(
                "the checkpoint's {STATE_NAME} has no sane stream count: {}",
                state.meta
            ))),
        }
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        self.0 = Some(state);
        Ok(())
    }
}

impl<B: Backend> PreprocessedAgent<B> {
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
