//! The actor role: an acting-only graph that turns a batch of states into actions and the
//! per-action extras an algorithm needs, with the policy weights of a known snapshot.

use std::collections::BTreeMap;

use rlgraph_core::spaces::Value;
use rlgraph_core::{
    rng_from_json, rng_to_json, Backend, CoreError, DType, GraphExecutor, HostState, Outputs, Result, SavedState, Tree,
};

use crate::batch::{stack, unstack};
use crate::snapshot::WeightSnapshot;

/// What an actor hands back for a batch of states.
#[derive(Clone, Debug, PartialEq)]
pub struct Acted {
    /// One action per state.
    pub actions: Vec<Value>,
    /// Per-action extras by name, each batched like the states (`behaviour_log_probs` for
    /// IMPALA).
    pub extras: BTreeMap<String, Value>,
}

/// The policy side of an agent: acts on batches of states and loads weight snapshots.
pub trait Actor: Send {
    /// Actions for `states` (one per environment copy). With `explore`, the behaviour policy
    /// (sampling, epsilon-greedy at `time_percentage`, 0 to 1); without, the greedy one.
    fn act(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Acted>;
    /// Loads the policy weights of `snapshot`; on error nothing changes.
    fn load(&mut self, snapshot: &WeightSnapshot) -> Result<()>;
    /// The version of the last snapshot loaded (`None`: still the initial weights).
    fn version(&self) -> Option<u64>;
}

/// An [`Actor`] over a graph with `get_action(states[, time_percentage])` and
/// `get_deterministic_action(states)`; both return the actions first, then the extras.
pub struct GraphActor<B: Backend> {
    exec: GraphExecutor<B>,
    extras: Vec<String>,
    takes_time: bool,
    version: Option<u64>,
    /// For [`GraphActor::sync_from`]: each trainable variable's index here and in the
    /// learner's store, found (and checked) on the first sync.
    links: Vec<(usize, usize)>,
}

impl<B: Backend> GraphActor<B> {
    /// An actor running `exec`. `extras` names `get_action`'s outputs after the actions;
    /// `takes_time` says whether `get_action` takes `time_percentage` as its second input.
    pub fn new(exec: GraphExecutor<B>, extras: &[&str], takes_time: bool) -> Self {
        GraphActor {
            exec,
            extras: extras.iter().map(|s| s.to_string()).collect(),
            takes_time,
            version: None,
            links: vec![],
        }
    }

    /// Takes the policy weights of a learner in the same process directly from its graph,
    /// device to device, as the snapshot `version`: no host copies and no lookups by path
    /// after the first call. (A learner elsewhere sends a [`WeightSnapshot`] instead.)
    pub fn sync_from(&mut self, learner: &GraphExecutor<B>, version: u64) -> Result<()> {
        if self.links.is_empty() {
            self.links = self.link(learner)?;
        }
        let (mine, theirs) = (self.exec.store(), learner.store());
        for &(a, l) in &self.links {
            B::var_set(mine.var(a), B::var_tensor(theirs.var(l)))?;
        }
        self.version = Some(version);
        Ok(())
    }

    /// Pairs each trainable variable of the actor with the learner's of the same path,
    /// shape and dtype.
    fn link(&self, learner: &GraphExecutor<B>) -> Result<Vec<(usize, usize)>> {
        let store = learner.store();
        self.exec
            .variable_infos()
            .iter()
            .enumerate()
            .filter(|(_, info)| info.decl.trainable)
            .map(|(a, info)| {
                let l = store.index(&info.path)?;
                let theirs = &store.info(l).decl;
                if (&theirs.shape, theirs.dtype) != (&info.decl.shape, info.decl.dtype) {
                    return Err(CoreError::Config {
                        at: format!("actor sync {}", info.path),
                        reason: format!(
                            "the learner's is {:?} {:?}, the actor's {:?} {:?}",
                            theirs.dtype, theirs.shape, info.decl.dtype, info.decl.shape
                        ),
                    });
                }
                Ok((a, l))
            })
            .collect()
    }

    /// The acting graph (to call its other API methods, such as `get_q_values`).
    pub fn executor(&self) -> &GraphExecutor<B> {
        &self.exec
    }

    /// The acting graph, mutably.
    pub fn executor_mut(&mut self) -> &mut GraphExecutor<B> {
        &mut self.exec
    }

    /// Actions (and extras) for a batch of states that is already a tensor on the actor's
    /// device: no host conversion on either side.
    pub fn act_tensors(
        &mut self,
        states: &Tree<B::Tensor>,
        explore: bool,
        time_percentage: f64,
    ) -> Result<Outputs<B::Tensor>> {
        if !explore {
            return self.exec.execute_tensors("get_deterministic_action", [states]);
        }
        if !self.takes_time {
            return self.exec.execute_tensors("get_action", [states]);
        }
        let device = match states {
            Tree::Leaf(s) => B::device(s),
            _ => self
                .exec
                .variable_infos()
                .first()
                .map_or(Default::default(), |v| v.device),
        };
        let t = Tree::Leaf(B::full(&[], time_percentage.clamp(0.0, 1.0), DType::F32, device)?);
        self.exec.execute_tensors("get_action", [states, &t])
    }
}

impl<B: Backend> GraphActor<B> {
    /// [`Actor::act`] for a recurrent policy: `memory` (the Tuple `(c, h)` per state) and
    /// `starts` go in after the states, and the memory after the step comes back beside the
    /// actions (see [`crate::CarriedMemory`]).
    pub fn act_with_memory(&mut self, states: &[Value], memory: [Value; 2], explore: bool) -> Result<(Acted, Value)> {
        let (acted, memory) = self.act_from(states, explore, 0.0, Some(memory))?;
        let memory = memory.ok_or_else(|| CoreError::Config {
            at: "actor/get_action".into(),
            reason: "no memory came back".into(),
        })?;
        Ok((acted, memory))
    }

    fn act_from(
        &mut self,
        states: &[Value],
        explore: bool,
        time_percentage: f64,
        memory: Option<[Value; 2]>,
    ) -> Result<(Acted, Option<Value>)> {
        // The stacked batch is ours: its data moves into the upload rather than being copied.
        let mut inputs = vec![stack(states)?];
        if explore && self.takes_time {
            inputs.push(Value::f32(time_percentage.clamp(0.0, 1.0) as f32));
        }
        let recurrent = memory.is_some();
        inputs.extend(memory.into_iter().flatten());
        let method = if explore {
            "get_action"
        } else {
            "get_deterministic_action"
        };
        // Actions leave as host values, so no gradient flows back through them.
        let mut out = self.exec.execute_without_grad(method, inputs)?;
        let memory = if recurrent { out.pop() } else { None };
        let mut out = out.into_iter();
        let actions = out.next().ok_or_else(|| CoreError::Config {
            at: format!("actor/{method}"),
            reason: "no actions came back".into(),
        })?;
        let acted = Acted {
            actions: unstack(&actions)?,
            extras: self.extras.iter().cloned().zip(out).collect(),
        };
        Ok((acted, memory))
    }
}

impl<B: Backend> Actor for GraphActor<B> {
    fn act(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Acted> {
        Ok(self.act_from(states, explore, time_percentage, None)?.0)
    }

    /// Every trainable variable of the actor must be in the snapshot; entries it has no
    /// variable for (a value head it never evaluates) are skipped.
    fn load(&mut self, snapshot: &WeightSnapshot) -> Result<()> {
        let mine = self
            .exec
            .variable_infos()
            .iter()
            .filter(|i| i.decl.trainable)
            .map(|info| {
                let value = snapshot.weights.get(&info.path).ok_or_else(|| CoreError::Config {
                    at: format!("snapshot {}", snapshot.version),
                    reason: format!("has no {}, which the actor needs", info.path),
                })?;
                Ok((&info.path, value))
            })
            .collect::<Result<Vec<_>>>()?;
        self.exec.set_variables(mine.iter().copied())?;
        self.version = Some(snapshot.version);
        Ok(())
    }

    fn version(&self) -> Option<u64> {
        self.version
    }
}

/// The actor's RNG position and version ride in checkpoints; its weights come from the
/// learner's, which the checkpoint holds.
impl<B: Backend> HostState for GraphActor<B> {
    fn save_state(&self) -> Result<SavedState> {
        let mut meta = rng_to_json(self.exec.rng());
        meta["version"] = self.version.into();
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta,
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        parse_actor(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        let (rng, version) = parse_actor(&state)?;
        self.exec.set_rng(rng);
        self.version = version;
        Ok(())
    }
}

fn parse_actor(state: &SavedState) -> Result<(rand_chacha::ChaCha8Rng, Option<u64>)> {
    let bad = |reason: String| CoreError::Checkpoint {
        path: "(actor)".into(),
        reason,
    };
    let rng = rng_from_json(&state.meta).map_err(bad)?;
    let version = match &state.meta["version"] {
        serde_json::Value::Null => None,
        v => Some(v.as_u64().ok_or_else(|| bad(format!("version {v} is not a count")))?),
    };
    Ok((rng, version))
}
