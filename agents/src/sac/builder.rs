//! `SacAgent`: soft actor-critic (Haarnoja et al. 2018), as RLgraph's `SACAgent`: a
//! tanh-squashed Gaussian policy for bounded continuous actions, or for discrete ones a
//! Gumbel-softmax policy whose relaxed one-hot actions the critics read (RLgraph's
//! `gumbel_softmax_temperature`; the environment gets their argmax); twin critics with
//! Polyak-averaged targets, and a temperature alpha tuned toward a target entropy.
//!
//! Composed of the roles: an actor from [`sac_actor`], one-step transitions into a uniform
//! [`Replay`] memory, and the [`SacLearner`]. The actor takes the learner's weights after
//! every update.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, HostState, Result};
use rlgraph_memories::ReplayMemory;
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::adders::n_step::NStepBuffer;
use crate::adders::{AddedStep, Adder};
use crate::agent::Transition;
use crate::agent_parts::{AgentParts, SAMPLES_ITS_POLICY};
use crate::batch::{transition_space, transitions_batch};
use crate::carried_memory::StepMemory;
use crate::composed_agent::{Algorithm, ComposedAgent, Roles};
use crate::learner::{GraphLearner, Learner};
use crate::replay::Replay;
use crate::sac::config::SacConfig;
use crate::sac::learner::{sac_actor_with, SacLearner};
use crate::update_spec::UpdateSpec;

/// SAC's part of a composed agent: one-step transitions into a uniform replay memory, and
/// updates on batches sampled from it.
pub struct Sac {
    adder: NStepBuffer,
    replay: ReplayMemory,
    batch_size: usize,
    capacity: usize,
    update: UpdateSpec,
}

/// A SAC agent on backend `B`: an actor, a replay memory and a learner, composed in one
/// process.
pub type SacAgent<B> = ComposedAgent<B, Sac>;

impl<B: Backend> Algorithm<B> for Sac {
    type Config = SacConfig;
    type Learner = SacLearner<B>;
    type Adder = NStepBuffer;

    const NAME: &'static str = "SAC";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[
        ("exploration", SAMPLES_ITS_POLICY),
        ("memory", "set `memory_spec.capacity` in the config"),
    ];
    const SEPARATE_VALUE_OPTIMIZER: bool = true;

    fn parse(spec: &Json) -> Result<SacConfig> {
        SacConfig::parse(spec)
    }

    /// A SAC agent's roles for `state_space` and a bounded FloatBox (or scalar IntBox)
    /// `action_space`.
    fn build(
        mut config: SacConfig,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>> {
        // The critics follow the given optimizer unless the JSON gave them their own.
        if let (Some(optimizer), true) = (&parts.optimizer, config.value_function_optimizer_follows) {
            config.value_function_optimizer = optimizer.clone();
        }
        parts.take_optimizer(&mut config.optimizer);
        let mut learner = SacLearner::with_parts(&config, &parts, state_space, action_space, seed)?;
        let mut actor = sac_actor_with(&config, &parts, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        let replay = ReplayMemory::new(
            "replay-memory",
            &transition_space(state_space, action_space)?,
            config.capacity,
        )?;
        Ok(Roles {
            actor,
            learner,
            memory_units: None,
            algorithm: Sac {
                // One-step transitions: n = 1 passes each step straight through.
                adder: NStepBuffer::new(1, config.discount, state_space, action_space),
                replay,
                batch_size: config.update.batch_size,
                capacity: config.capacity,
                update: config.update,
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
        _actor: &mut GraphActor<B>,
    ) -> Result<()> {
        let done = self.adder.add(AddedStep::plain(env_id, transition))?;
        if done.is_empty() {
            return Ok(());
        }
        Replay::insert(&mut self.replay, &transitions_batch(&done)?, None)
    }

    fn update(
        &mut self,
        learner: &mut SacLearner<B>,
        rng: &mut ChaCha8Rng,
        time_percentage: f64,
    ) -> Result<Option<f64>> {
        // A batch larger than the memory is drawn with replacement once it is full (RLgraph).
        if Replay::size(&self.replay) < self.batch_size.min(self.capacity) {
            return Ok(None);
        }
        let sample = self.replay.sample(self.batch_size, rng)?;
        Ok(Some(learner.learn(&sample.records, time_percentage)?.loss))
    }

    /// Records as the replay memory holds them: `states`, `actions`, `rewards`, `terminals`,
    /// `next_states`.
    fn update_from_batch(&mut self, learner: &mut SacLearner<B>, batch: &Value, time_percentage: f64) -> Result<f64> {
        Ok(learner.learn(batch, time_percentage)?.loss)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.update
    }

    /// The replay memory; the one-step adder holds nothing between steps (each step leaves
    /// it as a transition), so checkpoints keep the parts they had before it existed.
    fn parts(&self) -> Vec<(&'static str, &dyn HostState)> {
        vec![("memory", &self.replay)]
    }

    fn parts_mut(&mut self) -> Vec<(&'static str, &mut dyn HostState)> {
        vec![("memory", &mut self.replay)]
    }
}

impl<B: Backend> ComposedAgent<B, Sac> {
    /// The current temperature alpha.
    pub fn alpha(&mut self) -> Result<f64> {
        self.learner.alpha()
    }
}
