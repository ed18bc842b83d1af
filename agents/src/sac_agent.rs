//! `SacAgent`: soft actor-critic (Haarnoja et al. 2018), as RLgraph's `SACAgent`: a
//! tanh-squashed Gaussian policy for bounded continuous actions, or for discrete ones a
//! Gumbel-softmax policy whose relaxed one-hot actions the critics read (RLgraph's
//! `gumbel_softmax_temperature`; the environment gets their argmax); twin critics with
//! Polyak-averaged targets, and a temperature alpha tuned toward a target entropy.
//!
//! Composed of the roles: an actor from [`sac_actor`], one-step transitions into a uniform
//! [`Replay`] memory, and the [`SacLearner`]. The actor takes the learner's weights after
//! every update.

use std::path::Path;

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, ErasedExecutor, GraphExecutor, HostState, Result};
use rlgraph_memories::ReplayMemory;

use crate::actor::{Actor, GraphActor};
use crate::agent::{reset_graph, Agent, Transition};
use crate::batch::{transition_space, transitions_batch};
use crate::counters::Counters;
use crate::learner::{GraphLearner, Learner};
use crate::replay::Replay;
use crate::sac_config::SacConfig;
use crate::sac_learner::{sac_actor, SacLearner};
use crate::update_spec::UpdateSpec;

/// A SAC agent on backend `B`: an actor, a replay memory and a learner, composed in one
/// process.
pub struct SacAgent<B: Backend> {
    actor: GraphActor<B>,
    replay: ReplayMemory,
    learner: SacLearner<B>,
    counters: Counters,
}

impl<B: Backend> SacAgent<B> {
    /// A SAC agent for `state_space` and a bounded FloatBox (or scalar IntBox)
    /// `action_space`, with every random choice drawn from `seed`.
    pub fn new(config: SacConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let mut learner = SacLearner::new(&config, state_space, action_space, seed)?;
        let mut actor = sac_actor(&config, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        let replay = ReplayMemory::new(
            "replay-memory",
            &transition_space(state_space, action_space)?,
            config.capacity,
        )?;
        Ok(SacAgent {
            actor,
            replay,
            learner,
            counters: Counters::new(seed),
        })
    }

    /// The current temperature alpha.
    pub fn alpha(&mut self) -> Result<f64> {
        self.learner.alpha()
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.learner.updates()
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
    pub fn learner(&self) -> &SacLearner<B> {
        &self.learner
    }

    fn resync_actor(&mut self) -> Result<()> {
        self.learner.republish_to(&mut self.actor)
    }
}

impl<B: Backend> Agent for SacAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        Ok(self.actor.act(states, explore, time_percentage)?.actions)
    }

    fn observe(&mut self, _env_id: usize, transition: Transition) -> Result<()> {
        self.counters.timesteps += 1;
        Replay::insert(&mut self.replay, &transitions_batch(&[transition])?, None)
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        let batch_size = self.learner.config().update.batch_size;
        // A batch larger than the memory is drawn with replacement once it is full (RLgraph).
        if Replay::size(&self.replay) < batch_size.min(self.learner.config().capacity) {
            return Ok(None);
        }
        let sample = self.replay.sample(batch_size, &mut self.counters.rng)?;
        self.update_from_batch(&sample.records, time_percentage).map(Some)
    }

    /// Records as the replay memory holds them: `states`, `actions`, `rewards`, `terminals`,
    /// `next_states`.
    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        let learned = self.learner.learn(batch, time_percentage)?;
        self.learner.publish_to(&mut self.actor)?;
        Ok(learned.loss)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.learner.config().update
    }

    /// Saves the learner (variables, RNG, counters), the actor's RNG and version, the replay
    /// memory and the agent's counters.
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        self.learner.save_checkpoint(
            path,
            vec![
                ("memory", &self.replay),
                ("agent", &self.counters),
                ("actor", &self.actor),
            ],
            extra,
        )
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let SacAgent {
            learner,
            replay,
            counters,
            actor,
            ..
        } = self;
        learner.restore_checkpoint(
            path,
            vec![("memory", replay), ("agent", counters), ("actor", actor)],
            extra,
        )?;
        self.resync_actor()
    }

    fn weights_changed(&mut self) -> Result<()> {
        self.resync_actor()
    }

    /// Resets the preprocessors; the replay memory stays.
    fn reset(&mut self) -> Result<()> {
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
