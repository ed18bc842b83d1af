//! `PgAgent`: the on-policy policy-gradient agents, PPO and advantage actor-critic, as
//! RLgraph's `PPOAgent` and `ActorCriticAgent`, composed of the roles: an actor from
//! [`pg_actor`], a [`Rollout`] (the adder and buffer of recent steps) and a [`PgLearner`].
//!
//! As in RLgraph, both keep the latest `memory_spec.capacity` steps per environment copy,
//! and each update learns from the latest `batch_size` of them (or the latest `batch_size`
//! finished episodes, with `sample_episodes`); the worker calls `update` every
//! `update_interval` steps, so batches overlap when the interval is the smaller. The actor
//! takes the learner's weights after every update.

use std::path::Path;

use rlgraph_core::profiler;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, ErasedExecutor, GraphExecutor, HostState, Result, Tree};

use crate::actor::{Actor, GraphActor};
use crate::agent::{reset_graph, Agent, Transition};
use crate::carried_memory::CarriedMemory;
use crate::counters::Counters;
use crate::learner::{GraphLearner, Learner};
use crate::pg_config::PgConfig;
use crate::pg_learner::{pg_actor, PgLearner, TensorRollout};
use crate::rollout::{Rollout, RolloutBatch};
use crate::update_spec::UpdateSpec;

/// A PPO or actor-critic agent on backend `B`: an actor, a rollout of recent steps and a
/// learner, composed in one process.
pub struct PgAgent<B: Backend> {
    actor: GraphActor<B>,
    rollout: Rollout,
    learner: PgLearner<B>,
    counters: Counters,
    state_space: Space,
    /// A recurrent policy's memory per environment copy.
    memory: Option<CarriedMemory>,
}

impl<B: Backend> PgAgent<B> {
    /// A PPO or actor-critic agent for `state_space` and `action_space` (an IntBox, or a
    /// FloatBox for a Gaussian policy), with every random choice drawn from `seed`.
    pub fn new(config: PgConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let mut learner = PgLearner::new(&config, state_space, action_space, seed)?;
        let mut actor = pg_actor(&config, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        Ok(PgAgent {
            actor,
            rollout: Rollout::new(config.capacity, state_space, action_space),
            learner,
            counters: Counters::new(seed),
            state_space: state_space.with_batch_rank(false),
            memory: config.recurrence.as_ref().map(|r| CarriedMemory::new(r.units)),
        })
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.learner.updates()
    }

    /// The space of one state.
    pub fn state_space(&self) -> &Space {
        &self.state_space
    }

    /// The learner's graph (for the meta graph and direct API calls).
    pub fn executor(&self) -> &GraphExecutor<B> {
        self.learner.executor()
    }

    /// The actor.
    pub fn actor(&self) -> &GraphActor<B> {
        &self.actor
    }

    /// The learner.
    pub fn learner(&self) -> &PgLearner<B> {
        &self.learner
    }

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
        self.learner.publish_to(&mut self.actor)?;
        Ok(loss)
    }

    /// Whether the policy carries an LSTM's memory from step to step.
    pub fn is_recurrent(&self) -> bool {
        self.memory.is_some()
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

    /// Learns from `batch` and hands the actor the learner's new weights.
    fn learn(&mut self, batch: &RolloutBatch, time_percentage: f64) -> Result<f64> {
        let loss = {
            let _op = profiler::operation("backpropagation");
            self.learner.learn_rollout(batch, time_percentage)?
        };
        let _op = profiler::operation("weight_sync");
        self.learner.publish_to(&mut self.actor)?;
        Ok(loss)
    }

    fn resync_actor(&mut self) -> Result<()> {
        self.learner.republish_to(&mut self.actor)
    }

    /// The latest `batch_size` steps (or finished episodes), once the rollout holds that many.
    fn next_batch(&self) -> Option<RolloutBatch> {
        let config = self.learner.config();
        let n = config.update.batch_size;
        let batch = if config.sample_episodes {
            (self.rollout.episodes() >= n).then(|| self.rollout.recent_episodes(n))
        } else {
            (self.rollout.steps() >= n).then(|| self.rollout.recent_steps(n))
        };
        batch.filter(|b| !b.is_empty())
    }
}

impl<B: Backend> Agent for PgAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        Ok(match &mut self.memory {
            Some(memory) => memory.act(&mut self.actor, states, explore)?,
            None => self.actor.act(states, explore, time_percentage)?,
        }
        .actions)
    }

    /// A recurrent policy's step is kept with the memory its actor acted from; a step that
    /// ends an episode starts the copy's next one from a zero memory.
    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        match &mut self.memory {
            Some(memory) => {
                let acted = memory.observed(env_id, &transition)?;
                self.rollout.push_with_memory(env_id, transition, acted);
            }
            None => self.rollout.push(env_id, transition),
        }
        self.counters.timesteps += 1;
        Ok(())
    }

    /// Copies that restart while exploring also end the steps held for them (see
    /// [`Rollout::cut`]).
    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        if let Some(memory) = &mut self.memory {
            memory.begin(explore, copies);
        }
        if explore {
            for &copy in copies {
                self.rollout.cut(copy);
            }
        }
        Ok(())
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        match self.next_batch() {
            Some(batch) => self.learn(&batch, time_percentage).map(Some),
            None => Ok(None),
        }
    }

    /// Steps of one or more sequences: `states`, `actions`, `rewards`, `terminals`, and
    /// optional `sequence_indices` (see [`RolloutBatch::from_value`]).
    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        let batch = RolloutBatch::from_value(batch, "update_from_batch")?;
        self.learn(&batch, time_percentage)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.learner.config().update
    }

    /// Saves the learner (variables, RNG, counters), the actor's RNG and version, the recent
    /// steps and the agent's counters.
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let mut parts: Vec<(&str, &dyn HostState)> = vec![
            ("rollout", &self.rollout),
            ("agent", &self.counters),
            ("actor", &self.actor),
        ];
        if let Some(memory) = &self.memory {
            parts.push(("memory", memory));
        }
        self.learner.save_checkpoint(path, parts, extra)
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let PgAgent {
            learner,
            rollout,
            counters,
            actor,
            memory,
            ..
        } = self;
        let mut parts: Vec<(&str, &mut dyn HostState)> =
            vec![("rollout", rollout), ("agent", counters), ("actor", actor)];
        if let Some(memory) = memory {
            parts.push(("memory", memory));
        }
        learner.restore_checkpoint(path, parts, extra)?;
        self.resync_actor()
    }

    fn weights_changed(&mut self) -> Result<()> {
        self.resync_actor()
    }

    /// Resets the preprocessors and a recurrent policy's memories; the recent steps stay.
    fn reset(&mut self) -> Result<()> {
        if let Some(memory) = &mut self.memory {
            memory.clear();
        }
        reset_graph(self.actor.executor_mut())?;
        reset_graph(self.learner.executor_mut())
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        Some(self.learner.executor())
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        Some(self.learner.executor_mut())
    }
}
