//! `Td3`: TD3's part of a composed agent (Fujimoto et al. 2018, at CleanRL's
//! `td3_continuous_action` settings): one-step transitions into a uniform replay memory,
//! actions drawn uniformly at random for the first `steps_before_update` steps, then the
//! policy's with Gaussian noise; updates on batches sampled from the memory.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, HostState, Result};
use rlgraph_memories::ReplayMemory;
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::adders::n_step::NStepBuffer;
use crate::adders::{AddedStep, Adder};
use crate::agent::Transition;
use crate::agent_parts::AgentParts;
use crate::batch::{transition_space, transitions_batch};
use crate::carried_memory::StepMemory;
use crate::composed_agent::{Algorithm, ComposedAgent, Roles};
use crate::learner::{GraphLearner, Learner};
use crate::replay::Replay;
use crate::td3::config::Td3Config;
use crate::td3::learner::{td3_actor_with, Td3Learner};
use crate::update_spec::UpdateSpec;

/// TD3's part of a composed agent.
pub struct Td3 {
    adder: NStepBuffer,
    replay: ReplayMemory,
    update: UpdateSpec,
}

/// A TD3 agent on backend `B`: an actor, a replay memory and a learner in one process.
pub type Td3Agent<B> = ComposedAgent<B, Td3>;

impl<B: Backend> Algorithm<B> for Td3 {
    type Config = Td3Config;
    type Learner = Td3Learner<B>;
    type Adder = NStepBuffer;

    const NAME: &'static str = "TD3";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[
        ("exploration", "set `exploration_noise` in the config"),
        ("memory", "set `memory_spec.capacity` in the config"),
    ];
    const SEPARATE_VALUE_OPTIMIZER: bool = true;

    fn parse(spec: &Json) -> Result<Td3Config> {
        Td3Config::parse(spec)
    }

    /// A TD3 agent's roles for `state_space` and a bounded FloatBox `action_space`.
    fn build(
        mut config: Td3Config,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>> {
        parts.take_optimizer(&mut config.optimizer);
        let mut learner = Td3Learner::with_parts(&config, &parts, state_space, action_space, seed)?;
        let mut actor = td3_actor_with(&config, &parts, state_space, action_space, seed)?;
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
            algorithm: Td3 {
                // One-step transitions: n = 1 passes each step straight through.
                adder: NStepBuffer::new(1, config.discount, state_space, action_space),
                replay,
                update: config.update,
            },
        })
    }

    fn adder(&mut self) -> &mut NStepBuffer {
        &mut self.adder
    }

    /// CleanRL's and SB3's warm-up: before `steps_before_update` steps there is nothing to
    /// learn from, and uniform actions cover the range better than an untrained policy.
    fn acts_uniformly(&self, timesteps: u64) -> bool {
        timesteps < self.update.steps_before_update
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
        learner: &mut Td3Learner<B>,
        rng: &mut ChaCha8Rng,
        time_percentage: f64,
    ) -> Result<Option<f64>> {
        if Replay::size(&self.replay) < self.update.batch_size.min(self.replay.capacity()) {
            return Ok(None);
        }
        let sample = self.replay.sample(self.update.batch_size, rng)?;
        Ok(Some(learner.learn(&sample.records, time_percentage)?.loss))
    }

    /// Records as the replay memory holds them: `states`, `actions`, `rewards`, `terminals`,
    /// `next_states`.
    fn update_from_batch(&mut self, learner: &mut Td3Learner<B>, batch: &Value, time_percentage: f64) -> Result<f64> {
        Ok(learner.learn(batch, time_percentage)?.loss)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.update
    }

    fn parts(&self) -> Vec<(&'static str, &dyn HostState)> {
        vec![("memory", &self.replay)]
    }

    fn parts_mut(&mut self) -> Vec<(&'static str, &mut dyn HostState)> {
        vec![("memory", &mut self.replay)]
    }
}
