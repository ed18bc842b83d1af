//! `DqnAgent`: DQN (Mnih et al. 2015) with double Q, dueling heads, n-step returns and
//! prioritized replay, as RLgraph's `DQNAgent`; with worker-side priorities, Ape-X (Horgan et
//! al. 2018) in one process. Composed of the roles: [`dqn_actor`], [`NStepBuffer`] as the
//! adder, a [`Replay`] from [`dqn_replay`], and the [`DqnLearner`].

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph_core::profiler;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, ErasedExecutor, GraphExecutor, HostState, HostTensor, Result};
use rlgraph_memories::{FrameStacks, PrioritizedReplay, ReplayMemory};

use crate::actor::{Actor, GraphActor};
use crate::agent::{reset_graph, Agent, Transition};
use crate::batch::{stack, transition_space, transitions_batch};
use crate::counters::Counters;
use crate::dqn_actor::{apex_priorities, dqn_actor};
use crate::dqn_config::{DqnConfig, MemoryKind};
use crate::dqn_learner::DqnLearner;
use crate::learner::{GraphLearner, Learner};
use crate::observe_buffer::NStepBuffer;
use crate::replay::Replay;
use crate::update_spec::UpdateSpec;

/// The replay memory `config` asks for, holding transitions of these spaces.
///
/// With `memory_spec.frame_stack`, the states and next states are stored frame by frame, each
/// frame once; a stack that does not split as it says is refused, naming the key and shape.
pub fn dqn_replay(config: &DqnConfig, state_space: &Space, action_space: &Space) -> Result<Box<dyn Replay>> {
    let record_space = transition_space(state_space, action_space)?;
    let frames = config.frame_stack.map(|stack| FrameStacks {
        stack,
        keys: vec!["states".into(), "next_states".into()],
    });
    let at = |e: rlgraph_memories::MemoryError| match (&frames, e) {
        (Some(_), rlgraph_memories::MemoryError::UnsupportedSpace { reason, .. }) => CoreError::Config {
            at: "config.memory_spec.frame_stack".into(),
            reason,
        },
        (_, e) => e.into(),
    };
    Ok(match config.memory {
        MemoryKind::Replay => Box::new(
            ReplayMemory::with_frames("replay-memory", &record_space, config.capacity, frames.as_ref()).map_err(at)?,
        ),
        MemoryKind::Prioritized { alpha, beta } => Box::new(
            PrioritizedReplay::with_frames(
                "prioritized-replay",
                &record_space,
                config.capacity,
                alpha,
                beta,
                frames.as_ref(),
            )
            .map_err(at)?,
        ),
    })
}

/// A DQN agent on backend `B`: an actor, an n-step adder, a replay and a learner, composed
/// in one process. The actor loads the learner's snapshot after every update.
pub struct DqnAgent<B: Backend> {
    actor: GraphActor<B>,
    adder: NStepBuffer,
    replay: Box<dyn Replay>,
    learner: DqnLearner<B>,
    config: DqnConfig,
    counters: Counters,
    state_space: Space,
}

impl<B: Backend> DqnAgent<B> {
    /// A DQN agent for `state_space` and a discrete `action_space` (an IntBox, or a Dict or
    /// Tuple of them), from `config`, with every random choice drawn from `seed`.
    pub fn new(config: DqnConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let mut learner = DqnLearner::new(&config, state_space, action_space, seed)?;
        let mut actor = dqn_actor(&config, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        Ok(DqnAgent {
            actor,
            adder: NStepBuffer::new(config.n_step, config.discount, state_space, action_space),
            replay: dqn_replay(&config, state_space, action_space)?,
            learner,
            counters: Counters::new(seed),
            state_space: state_space.with_batch_rank(false),
            config,
        })
    }

    /// Learns from `batch`, feeds new priorities back to the replay, and hands the actor the
    /// learner's new snapshot.
    fn learn(&mut self, batch: &Value, indices: Option<Vec<usize>>, time_percentage: f64) -> Result<f64> {
        let learned = {
            let _op = profiler::operation("backpropagation");
            self.learner.learn(batch, time_percentage)?
        };
        if let (Some(indices), Some(priorities)) = (indices, &learned.priorities) {
            let _op = profiler::operation("replay");
            self.replay.update_priorities(&indices, priorities)?;
        }
        let _op = profiler::operation("weight_sync");
        self.learner.publish_to(&mut self.actor)?;
        Ok(learned.loss)
    }

    /// After the learner's variables changed outside `learn` (restore, import, set): the
    /// actor takes them at the current version.
    fn resync_actor(&mut self) -> Result<()> {
        self.learner.republish_to(&mut self.actor)
    }

    /// The Q-values of a batch of states, from the actor: one row per state, holding the
    /// Q-values of every action element in flat-key order (`categories` numbers for a
    /// scalar IntBox action).
    pub fn q_values(&mut self, states: &[Value]) -> Result<Vec<Vec<f32>>> {
        let batch = stack(states)?;
        let out = self.actor.executor_mut().execute("get_q_values", &[batch])?;
        let bad = |reason: String| CoreError::Config {
            at: "dqn-agent/get_q_values".into(),
            reason,
        };
        let q = out.first().ok_or_else(|| bad("no Q-values came back".into()))?;
        let mut rows = vec![vec![]; states.len()];
        for (key, leaf) in q.flatten() {
            let Value::Float32(a) = leaf else {
                return Err(bad(format!(
                    "expected float Q-values at {key:?}, got {}",
                    leaf.kind_name()
                )));
            };
            let width = a.data().len() / states.len().max(1);
            for (row, chunk) in rows.iter_mut().zip(a.data().chunks(width.max(1))) {
                row.extend_from_slice(chunk);
            }
        }
        Ok(rows)
    }

    /// Every variable of the learner by scope path (policy, target, optimizer state).
    pub fn get_weights(&self) -> Result<BTreeMap<String, HostTensor>> {
        self.learner.executor().variables()
    }

    /// Overwrites the learner's variables by scope path (all are checked before any is
    /// written); the actor follows.
    pub fn set_weights(&mut self, weights: &BTreeMap<String, HostTensor>) -> Result<()> {
        self.learner.executor().set_variables(weights)?;
        self.resync_actor()
    }

    /// Saves everything a resumed run needs: the learner's variables, RNG and counters, the
    /// actor's RNG and version, the replay memory, the pending n-step steps, and the agent's
    /// counters and RNG.
    pub fn save_checkpoint(&self, path: impl AsRef<Path>) -> Result<()> {
        Agent::save_checkpoint_with(self, path.as_ref(), &[])
    }

    /// Restores a checkpoint written by `save_checkpoint`; on error nothing changes.
    pub fn restore_checkpoint(&mut self, path: impl AsRef<Path>) -> Result<()> {
        Agent::restore_checkpoint_with(self, path.as_ref(), &mut [])
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.learner.updates()
    }

    /// The priorities of the records held (`p^alpha`, as the sum tree holds them), oldest
    /// slot first; `None` for uniform replay.
    pub fn priorities(&self) -> Option<Vec<f64>> {
        self.replay.priorities()
    }

    /// Records held by the replay memory.
    pub fn memory_size(&self) -> usize {
        self.replay.size()
    }

    /// The learner's graph, for `rlgraph graph`.
    pub fn executor(&self) -> &GraphExecutor<B> {
        self.learner.executor()
    }

    /// The actor.
    pub fn actor(&self) -> &GraphActor<B> {
        &self.actor
    }

    /// The learner.
    pub fn learner(&self) -> &DqnLearner<B> {
        &self.learner
    }

    /// The space of one state.
    pub fn state_space(&self) -> &Space {
        &self.state_space
    }

    /// Stores finished n-step transitions; Ape-X gives each its own priority first.
    fn insert(&mut self, transitions: Vec<Transition>) -> Result<()> {
        if transitions.is_empty() {
            return Ok(());
        }
        let batch = transitions_batch(&transitions)?;
        let prioritized = matches!(self.config.memory, MemoryKind::Prioritized { .. });
        let priorities = if prioritized && self.config.worker_side_priorities {
            Some(apex_priorities(
                &mut self.actor,
                &batch,
                self.config.discount,
                self.config.n_step,
            )?)
        } else {
            None
        };
        self.replay.insert(&batch, priorities.as_deref())
    }
}

impl<B: Backend> Agent for DqnAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        Ok(self.actor.act(states, explore, time_percentage)?.actions)
    }

    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        self.counters.timesteps += 1;
        let _op = profiler::operation("replay");
        let done = self.adder.push(env_id, transition);
        self.insert(done)
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        let batch_size = self.config.update.batch_size;
        // A batch larger than the memory is drawn with replacement once it is full (RLgraph).
        if self.replay.size() < batch_size.min(self.config.capacity) {
            return Ok(None);
        }
        let (batch, indices) = {
            let _op = profiler::operation("replay");
            let sample = self.replay.sample(batch_size, &mut self.counters.rng)?;
            (sample.batch()?, sample.indices)
        };
        self.learn(&batch, indices, time_percentage).map(Some)
    }

    /// Records as the agent's own replay holds them (`states`, `actions`, `rewards`,
    /// `terminals`, `next_states`, and with prioritized replay optional
    /// `importance_weights`, else ones); priorities are not touched.
    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        self.learn(batch, None, time_percentage)
    }

    /// Copies that restart while exploring drop their pending n-step steps (see
    /// [`NStepBuffer::cut`]).
    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        if explore {
            for &copy in copies {
                self.adder.cut(copy);
            }
        }
        Ok(())
    }

    /// Clears the n-step buffers and resets the preprocessors.
    fn reset(&mut self) -> Result<()> {
        self.adder.clear();
        reset_graph(self.actor.executor_mut())?;
        reset_graph(self.learner.executor_mut())
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }

    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        self.learner.save_checkpoint(
            path,
            vec![
                ("memory", self.replay.state()),
                ("n_step", &self.adder),
                ("agent", &self.counters),
                ("actor", &self.actor),
            ],
            extra,
        )
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let DqnAgent {
            learner,
            replay,
            adder,
            counters,
            actor,
            ..
        } = self;
        learner.restore_checkpoint(
            path,
            vec![
                ("memory", replay.state_mut()),
                ("n_step", adder),
                ("agent", counters),
                ("actor", actor),
            ],
            extra,
        )?;
        self.resync_actor()
    }

    fn weights_changed(&mut self) -> Result<()> {
        self.resync_actor()
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        Some(self.learner.executor())
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        Some(self.learner.executor_mut())
    }
}
