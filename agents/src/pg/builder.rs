//! `PgAgent`: the on-policy policy-gradient agents, PPO and advantage actor-critic, as
//! RLgraph's `PPOAgent` and `ActorCriticAgent`, composed of the roles: an actor from
//! [`pg_actor`], a [`Rollout`] (the adder and buffer of recent steps) and a [`PgLearner`].
//!
//! As in RLgraph, both keep the latest `memory_spec.capacity` steps per environment copy,
//! and each update learns from the latest `batch_size` of them (or the latest `batch_size`
//! finished episodes, with `sample_episodes`); the worker calls `update` every
//! `update_interval` steps, so batches overlap when the interval is the smaller. The actor
//! takes the learner's weights after every update.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::profiler;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, HostState, Result, Tree};
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::adders::rollout::{Rollout, RolloutBatch};
use crate::adders::{AddedStep, Adder};
use crate::agent::Transition;
use crate::agent_parts::{AgentParts, SAMPLES_ITS_POLICY};
use crate::carried_memory::StepMemory;
use crate::composed_agent::{Algorithm, ComposedAgent, Roles};
use crate::learner::GraphLearner;
use crate::pg::actor::pg_actor_with;
use crate::pg::config::PgConfig;
use crate::pg::learner::PgLearner;
use crate::tensor_rollouts::TensorRollout;
use crate::update_spec::UpdateSpec;

/// The policy-gradient part of a composed agent: a [`Rollout`] of recent steps (adder and
/// store at once), and updates on its latest steps or episodes.
pub struct PolicyGradient {
    rollout: Rollout,
    batch_size: usize,
    sample_episodes: bool,
    update: UpdateSpec,
}

/// A PPO or actor-critic agent on backend `B`: an actor, a rollout of recent steps and a
/// learner, composed in one process.
pub type PgAgent<B> = ComposedAgent<B, PolicyGradient>;

impl PolicyGradient {
    /// The latest `batch_size` steps (or finished episodes), once the rollout holds that many.
    fn next_batch(&self) -> Option<RolloutBatch> {
        let n = self.batch_size;
        let batch = if self.sample_episodes {
            (self.rollout.episodes() >= n).then(|| self.rollout.recent_episodes(n))
        } else {
            (self.rollout.steps() >= n).then(|| self.rollout.recent_steps(n))
        };
        batch.filter(|b| !b.is_empty())
    }
}

/// Learns from `batch`.
fn learn<B: Backend>(learner: &mut PgLearner<B>, batch: &RolloutBatch, time_percentage: f64) -> Result<f64> {
    let _op = profiler::operation("backpropagation");
    learner.learn_rollout(batch, time_percentage)
}

impl<B: Backend> Algorithm<B> for PolicyGradient {
    type Config = PgConfig;
    type Learner = PgLearner<B>;
    type Adder = Rollout;

    /// A PPO or actor-critic agent's roles for `state_space` and `action_space` (an IntBox,
    /// or a FloatBox for a Gaussian policy).
    const NAME: &'static str = "PPO and actor-critic";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[
        ("exploration", SAMPLES_ITS_POLICY),
        (
            "memory",
            "it keeps a rollout of recent steps; set `memory_spec.capacity` in the config",
        ),
    ];

    fn parse(spec: &Json) -> Result<PgConfig> {
        PgConfig::parse(spec)
    }

    fn build(
        mut config: PgConfig,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>> {
        parts.take_optimizer(&mut config.optimizer);
        let action_space = &config.sampled_action_space(action_space);
        let mut learner = PgLearner::with_parts(&config, &parts, state_space, action_space, seed)?;
        let mut actor = pg_actor_with(&config, &parts, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        Ok(Roles {
            actor,
            learner,
            memory_units: config.recurrence.as_ref().map(|r| r.units),
            algorithm: PolicyGradient {
                rollout: Rollout::new(config.capacity, state_space, action_space),
                batch_size: config.update.batch_size,
                sample_episodes: config.sample_episodes,
                update: config.update,
            },
        })
    }

    fn adder(&mut self) -> &mut Rollout {
        &mut self.rollout
    }

    fn observe(
        &mut self,
        env_id: usize,
        transition: Transition,
        memory: Option<StepMemory>,
        _actor: &mut GraphActor<B>,
    ) -> Result<()> {
        self.rollout.add(AddedStep {
            memory,
            ..AddedStep::plain(env_id, transition)
        })
    }

    fn update(
        &mut self,
        learner: &mut PgLearner<B>,
        _rng: &mut ChaCha8Rng,
        time_percentage: f64,
    ) -> Result<Option<f64>> {
        match self.next_batch() {
            Some(batch) => learn(learner, &batch, time_percentage).map(Some),
            None => Ok(None),
        }
    }

    /// Steps of one or more sequences: `states`, `actions`, `rewards`, `terminals`, and
    /// optional `sequence_indices` (see [`RolloutBatch::from_value`]).
    fn update_from_batch(&mut self, learner: &mut PgLearner<B>, batch: &Value, time_percentage: f64) -> Result<f64> {
        learn(
            learner,
            &RolloutBatch::from_value(batch, "update_from_batch")?,
            time_percentage,
        )
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.update
    }

    fn parts(&self) -> Vec<(&'static str, &dyn HostState)> {
        vec![("rollout", &self.rollout)]
    }

    fn parts_mut(&mut self) -> Vec<(&'static str, &mut dyn HostState)> {
        vec![("rollout", &mut self.rollout)]
    }
}

impl<B: Backend> ComposedAgent<B, PolicyGradient> {
    /// The log-likelihoods of `actions` and the state values of `states` under the current
    /// networks.
    pub fn evaluate(&mut self, states: &[Value], actions: &[Value]) -> Result<(Vec<f64>, Vec<f64>)> {
        self.learner.evaluate(states, actions)
    }

    /// Actions for states already on the device (`[N, ...]`), with no host conversion and no
    /// space check: the acting path of device-resident environments.
    pub fn act_tensors(&mut self, states: &B::Tensor, explore: bool) -> Result<B::Tensor> {
        self.refuse_memory("act_tensors")?;
        let out = self.actor.act_tensors(&Tree::Leaf(states.clone()), explore, 0.0)?;
        out.into_iter()
            .next()
            .and_then(Tree::into_leaf)
            .ok_or_else(|| CoreError::Config {
                at: "pg-agent/act_tensors".into(),
                reason: "no action tensor came back".into(),
            })
    }

    /// A PPO update from a rollout on the device ([`PgLearner::update_from_tensors`]); the
    /// actor takes the new weights.
    pub fn update_from_tensors(&mut self, rollout: &TensorRollout<B>, time_percentage: f64) -> Result<f64> {
        self.refuse_memory("update_from_tensors")?;
        let loss = self.learner.update_from_tensors(rollout, time_percentage)?;
        self.counters.timesteps += rollout.frames() as u64;
        self.publish()?;
        Ok(loss)
    }

    /// Turns recording of device updates on or off ([`PgLearner::set_recording`]).
    pub fn set_recording(&mut self, on: bool) {
        self.learner.set_recording(on);
    }

    /// Whether device updates replay a recording ([`PgLearner::recording`]).
    pub fn recording(&self) -> Option<std::result::Result<(), String>> {
        self.learner.recording()
    }

    fn refuse_memory(&self, what: &str) -> Result<()> {
        match self.memory {
            Some(_) => Err(CoreError::Config {
                at: format!("pg-agent/{what}"),
                reason: "a recurrent policy acts and learns through get_actions and observe, \
                         which carry each copy's memory; device-resident rollouts do not"
                    .into(),
            }),
            None => Ok(()),
        }
    }
}
