//! `DqnAgent`: DQN (Mnih et al. 2015) with double Q, dueling heads, n-step returns and
//! prioritized replay, as RLgraph's `DQNAgent`; with worker-side priorities, Ape-X (Horgan et
//! al. 2018) in one process. Composed of the roles: [`dqn_actor`], [`NStepBuffer`] as the
//! adder, a [`Replay`] from [`dqn_replay`], and the [`DqnLearner`].

use rand_chacha::ChaCha8Rng;
use rlgraph_core::profiler;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, HostState, Result};
use rlgraph_memories::{FrameStacks, PrioritizedReplay, ReplayMemory};
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::adders::n_step::NStepBuffer;
use crate::adders::{AddedStep, Adder};
use crate::agent::Transition;
use crate::agent_parts::{checked_memory, AgentParts};
use crate::batch::{stack, transition_space, transitions_batch};
use crate::carried_memory::StepMemory;
use crate::composed_agent::{Algorithm, ComposedAgent, Roles};
use crate::dqn::actor::{apex_priorities, dqn_actor_with};
use crate::dqn::config::{DqnConfig, MemoryKind};
use crate::dqn::learner::DqnLearner;
use crate::learner::{GraphLearner, Learner};
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

/// DQN's part of a composed agent: an n-step adder into a replay memory (uniform or
/// prioritized), and updates on batches sampled from it.
pub struct Dqn {
    adder: NStepBuffer,
    replay: Box<dyn Replay>,
    config: DqnConfig,
}

/// A DQN agent on backend `B`: an actor, an n-step adder, a replay and a learner, composed
/// in one process. The actor loads the learner's snapshot after every update.
pub type DqnAgent<B> = ComposedAgent<B, Dqn>;

impl Dqn {
    /// Learns from `batch` and feeds new priorities back to the replay.
    fn learn<B: Backend>(
        &mut self,
        learner: &mut DqnLearner<B>,
        batch: &Value,
        indices: Option<Vec<usize>>,
        time_percentage: f64,
    ) -> Result<f64> {
        let learned = {
            let _op = profiler::operation("backpropagation");
            learner.learn(batch, time_percentage)?
        };
        if let (Some(indices), Some(priorities)) = (indices, &learned.priorities) {
            let _op = profiler::operation("replay");
            self.replay.update_priorities(&indices, priorities)?;
        }
        Ok(learned.loss)
    }

    /// Stores finished n-step transitions; Ape-X gives each its own priority first.
    fn insert<B: Backend>(&mut self, transitions: Vec<Transition>, actor: &mut GraphActor<B>) -> Result<()> {
        if transitions.is_empty() {
            return Ok(());
        }
        let batch = transitions_batch(&transitions)?;
        let prioritized = matches!(self.config.memory, MemoryKind::Prioritized { .. });
        let priorities = if prioritized && self.config.worker_side_priorities {
            Some(apex_priorities(
                actor,
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

impl<B: Backend> Algorithm<B> for Dqn {
    type Config = DqnConfig;
    type Learner = DqnLearner<B>;
    type Adder = NStepBuffer;

    const NAME: &'static str = "DQN";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[(
        "value_network",
        "its Q-values come from `network`; a dueling state-value stream is `policy_spec`'s",
    )];

    fn parse(spec: &Json) -> Result<DqnConfig> {
        DqnConfig::parse(spec)
    }

    /// A DQN agent's roles for `state_space` and a discrete `action_space` (an IntBox, or a
    /// Dict or Tuple of them). A given memory sets the config's memory kind and capacity.
    fn build(
        mut config: DqnConfig,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>> {
        parts.take_optimizer(&mut config.optimizer);
        if let Some(epsilon) = parts.exploration.take() {
            config.epsilon =
                epsilon.within(0.0, 1.0, "builder.exploration", "epsilon is a probability, from 0 to 1")?;
        }
        let replay = match parts.memory.take() {
            Some(memory) => {
                (config.memory, config.capacity) =
                    checked_memory(memory.as_ref(), &transition_space(state_space, action_space)?)?;
                if config.worker_side_priorities && config.memory == MemoryKind::Replay {
                    return Err(CoreError::Config {
                        at: "builder.memory".into(),
                        reason: "Ape-X needs prioritized replay: give a PrioritizedReplay".into(),
                    });
                }
                memory
            }
            None => dqn_replay(&config, state_space, action_space)?,
        };
        let mut learner = DqnLearner::with_parts(&config, &parts, state_space, action_space, seed)?;
        let mut actor = dqn_actor_with(&config, &parts, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        Ok(Roles {
            actor,
            learner,
            memory_units: None,
            algorithm: Dqn {
                adder: NStepBuffer::new(config.n_step, config.discount, state_space, action_space),
                replay,
                config,
            },
        })
    }

    fn adder(&mut self) -> &mut NStepBuffer {
        &mut self.adder
    }

    fn observe(
        &mut self,
        env_id: usize,
        transition: Transition,
        _memory: Option<StepMemory>,
        actor: &mut GraphActor<B>,
    ) -> Result<()> {
        let _op = profiler::operation("replay");
        let done = self.adder.add(AddedStep::plain(env_id, transition))?;
        self.insert(done, actor)
    }

    fn update(
        &mut self,
        learner: &mut DqnLearner<B>,
        rng: &mut ChaCha8Rng,
        time_percentage: f64,
    ) -> Result<Option<f64>> {
        let batch_size = self.config.update.batch_size;
        // A batch larger than the memory is drawn with replacement once it is full (RLgraph).
        if self.replay.size() < batch_size.min(self.config.capacity) {
            return Ok(None);
        }
        let (batch, indices) = {
            let _op = profiler::operation("replay");
            let sample = self.replay.sample(batch_size, rng)?;
            (sample.batch()?, sample.indices)
        };
        self.learn(learner, &batch, indices, time_percentage).map(Some)
    }

    /// Records as the agent's own replay holds them (`states`, `actions`, `rewards`,
    /// `terminals`, `next_states`, and with prioritized replay optional
    /// `importance_weights`, else ones); priorities are not touched.
    fn update_from_batch(&mut self, learner: &mut DqnLearner<B>, batch: &Value, time_percentage: f64) -> Result<f64> {
        self.learn(learner, batch, None, time_percentage)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }

    fn parts(&self) -> Vec<(&'static str, &dyn HostState)> {
        vec![("memory", self.replay.state()), ("n_step", &self.adder)]
    }

    fn parts_mut(&mut self) -> Vec<(&'static str, &mut dyn HostState)> {
        vec![("memory", self.replay.state_mut()), ("n_step", &mut self.adder)]
    }
}

impl<B: Backend> ComposedAgent<B, Dqn> {
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

    /// The priorities of the records held (`p^alpha`, as the sum tree holds them), oldest
    /// slot first; `None` for uniform replay.
    pub fn priorities(&self) -> Option<Vec<f64>> {
        self.algorithm.replay.priorities()
    }

    /// Records held by the replay memory.
    pub fn memory_size(&self) -> usize {
        self.algorithm.replay.size()
    }
}
