//! The agents GA3C can run: which actor its predictors run, which learner its trainers
//! share, and how a trainer turns experience segments into that learner's batch.

use agents::{
    agent_family, impala_actor, pg_actor, rollout_record, stack, AgentFamily, GraphActor, GraphLearner, ImpalaConfig,
    ImpalaLearner, Learner, PgConfig, PgLearner, RolloutBatch, StepMemory, Transition, WeightSnapshot,
};
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, GraphExecutor, HostState, Result};
use serde_json::Value as Json;

/// Consecutive steps of one agent, sent to the training queue as one piece.
#[derive(Clone, Debug, Default)]
pub(crate) struct Segment {
    /// The steps.
    pub transitions: Vec<Transition>,
    /// The behaviour policy's log-likelihood of each action (IMPALA's V-trace needs them).
    pub log_probs: Vec<f64>,
    /// The weight version each action was predicted with.
    pub versions: Vec<u64>,
    /// What a recurrent policy acted from at each step (empty for a memoryless one).
    pub memories: Vec<StepMemory>,
}

impl Segment {
    pub fn len(&self) -> usize {
        self.transitions.len()
    }
}

/// An agent config GA3C runs: PPO and actor-critic (A3C, as in the paper), or IMPALA (whose
/// V-trace corrects the policy lag).
#[derive(Clone, Debug)]
pub enum Ga3cAlgorithm {
    /// PPO or actor-critic: segments of at most `t_max` steps, cut at episode ends.
    PolicyGradient(PgConfig),
    /// IMPALA: rollouts of `worker_sample_size` steps, running across episode ends.
    Impala(ImpalaConfig),
}

impl Ga3cAlgorithm {
    /// The algorithm of an agent config; other agent types are refused by name.
    pub fn from_config(config: &Json) -> Result<Self> {
        match agent_family(config)? {
            AgentFamily::PolicyGradient => Ok(Ga3cAlgorithm::PolicyGradient(PgConfig::parse(config)?)),
            AgentFamily::Impala => Ok(Ga3cAlgorithm::Impala(ImpalaConfig::parse(config)?)),
            _ => Err(CoreError::Config {
                at: "config.execution_spec.executor".into(),
                reason: format!(
                    "ga3c runs agents with an actor-critic policy (ppo, actor_critic, single-impala), not type {}",
                    config.get("type").unwrap_or(&Json::Null)
                ),
            }),
        }
    }

    /// Steps per segment, and whether an episode's end cuts a segment short. A recurrent
    /// policy's segments all have `t_max` steps, so the learner unrolls them as one batch;
    /// its memory restarts where an episode does.
    pub(crate) fn segment_length(&self, t_max: usize) -> (usize, bool) {
        match self {
            Ga3cAlgorithm::PolicyGradient(c) => (t_max, c.recurrence.is_none()),
            Ga3cAlgorithm::Impala(c) => (c.rollout_length, false),
        }
    }

    /// A recurrent policy's LSTM units (`None` for a memoryless one).
    pub(crate) fn memory_units(&self) -> Option<usize> {
        match self {
            Ga3cAlgorithm::PolicyGradient(c) => c.recurrence.as_ref().map(|r| r.units),
            Ga3cAlgorithm::Impala(c) => c.memory_units(),
        }
    }

    /// The frames a trainer gathers before an update, unless the spec sets them: the
    /// config's `batch_size` (IMPALA: that many rollouts).
    pub(crate) fn default_min_batch(&self) -> usize {
        match self {
            Ga3cAlgorithm::PolicyGradient(c) => c.update.batch_size,
            Ga3cAlgorithm::Impala(c) => c.update.batch_size * c.rollout_length,
        }
    }

    /// A predictor's actor, seeded with `seed`.
    pub(crate) fn actor<B: Backend>(&self, state: &Space, action: &Space, seed: u64) -> Result<GraphActor<B>> {
        match self {
            Ga3cAlgorithm::PolicyGradient(c) => pg_actor(c, state, action, seed),
            Ga3cAlgorithm::Impala(c) => impala_actor(c, state, action, seed),
        }
    }

    /// The one learner the trainers share.
    pub(crate) fn learner<B: Backend>(&self, state: &Space, action: &Space, seed: u64) -> Result<Ga3cLearner<B>> {
        Ok(match self {
            Ga3cAlgorithm::PolicyGradient(c) => Ga3cLearner::PolicyGradient(PgLearner::new(c, state, action, seed)?),
            Ga3cAlgorithm::Impala(c) => Ga3cLearner::Impala(ImpalaLearner::new(c, state, action, seed)?),
        })
    }
}

/// The learner, typed, so segments reach it without a round trip through a `Value` batch.
// One learner per run, behind a mutex: the size of its variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Ga3cLearner<B: Backend> {
    PolicyGradient(PgLearner<B>),
    Impala(ImpalaLearner<B>),
}

impl<B: Backend> Ga3cLearner<B> {
    /// One update on `segments` at `time_percentage` of the run; returns the loss.
    pub fn learn(&mut self, segments: &[Segment], time_percentage: f64) -> Result<f64> {
        match self {
            Ga3cLearner::PolicyGradient(l) => {
                let mut batch = RolloutBatch::default();
                for s in segments {
                    batch.push_sequence(s.transitions.iter());
                    for m in &s.memories {
                        batch.memory.push(m.memory.clone());
                        batch.starts.push(m.start);
                    }
                }
                l.learn_rollout(&batch, time_percentage)
            }
            Ga3cLearner::Impala(l) => {
                let records = segments
                    .iter()
                    .map(|s| {
                        let memories = (!s.memories.is_empty()).then_some(s.memories.as_slice());
                        rollout_record(&s.transitions, &s.log_probs, memories)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(l.learn(&stack(&records)?, time_percentage)?.loss)
            }
        }
    }

    /// The update graph.
    pub fn executor(&self) -> &GraphExecutor<B> {
        match self {
            Ga3cLearner::PolicyGradient(l) => l.executor(),
            Ga3cLearner::Impala(l) => l.executor(),
        }
    }

    /// Saves the learner (variables, optimizer state, counters) and `parts` beside it.
    pub fn save_checkpoint<'a>(
        &'a self,
        path: &std::path::Path,
        parts: Vec<(&'a str, &'a dyn HostState)>,
    ) -> Result<()> {
        match self {
            Ga3cLearner::PolicyGradient(l) => l.save_checkpoint(path, parts, &[]),
            Ga3cLearner::Impala(l) => l.save_checkpoint(path, parts, &[]),
        }
    }

    /// Restores what `save_checkpoint` wrote; on error nothing changes.
    pub fn restore_checkpoint<'a>(
        &'a mut self,
        path: &std::path::Path,
        parts: Vec<(&'a str, &'a mut dyn HostState)>,
    ) -> Result<()> {
        match self {
            Ga3cLearner::PolicyGradient(l) => l.restore_checkpoint(path, parts, &mut []),
            Ga3cLearner::Impala(l) => l.restore_checkpoint(path, parts, &mut []),
        }
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        match self {
            Ga3cLearner::PolicyGradient(l) => l.updates(),
            Ga3cLearner::Impala(l) => l.updates(),
        }
    }

    /// A snapshot of the policy's weights, one version after the last.
    pub fn publish(&mut self) -> Result<WeightSnapshot> {
        match self {
            Ga3cLearner::PolicyGradient(l) => l.publish(),
            Ga3cLearner::Impala(l) => l.publish(),
        }
    }
}
