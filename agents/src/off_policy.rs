//! `OffPolicy`: the algorithm part SAC and TD3 share. Each observed step becomes a one-step
//! transition in a uniform replay memory, and an update learns from a batch sampled from it;
//! what differs per algorithm is only how its learner and actor are made
//! ([`OffPolicyRoles`]). Across processes ([`DistributedOffPolicy`]) the actors feed those
//! transitions to replay shards instead.

use std::marker::PhantomData;

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
use crate::algorithm_registry::{Description, Parts};
use crate::batch::{transition_space, transitions_batch};
use crate::carried_memory::StepMemory;
use crate::composed_agent::{Algorithm, Roles};
use crate::distributed_roles::{DistributedAlgorithm, Experience, ReplayFeed};
use crate::learner::{GraphLearner, Learner};
use crate::replay::Replay;
use crate::update_spec::UpdateSpec;

/// What an off-policy algorithm on a uniform replay memory makes of its config.
pub trait OffPolicyRoles<B: Backend>: 'static {
    /// The parsed config.
    type Config;
    /// The learner.
    type Learner: GraphLearner<B>;
    /// See [`Algorithm::NAME`].
    const NAME: &'static str;
    /// See [`Algorithm::UNUSED_PARTS`].
    const UNUSED_PARTS: &'static [(&'static str, &'static str)];
    /// Whether exploring actions are uniform until the first update (see
    /// [`Algorithm::acts_uniformly`]).
    const WARMS_UP_UNIFORMLY: bool;
    /// Reads the config from its JSON.
    fn parse(spec: &Json) -> Result<Self::Config>;
    /// The memory's settings in `config`.
    fn replay(config: &Self::Config) -> ReplaySettings;
    /// The learner and the actor for these spaces. (A distributed role that needs one makes
    /// both: the learner's variables cost an actor process little beside its environments.)
    fn make(
        config: Self::Config,
        parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<(Self::Learner, GraphActor<B>)>;
}

/// The memory's side of an off-policy config.
pub struct ReplaySettings {
    /// Gamma, for the one-step adder.
    pub discount: f64,
    /// The replay memory's capacity.
    pub capacity: usize,
    /// When to update, and the batch size.
    pub update: UpdateSpec,
}

/// The uniform memory of one-step transitions both layouts hold: the agent's own, and each
/// replay shard's across processes.
fn uniform_replay(state_space: &Space, action_space: &Space, capacity: usize) -> Result<ReplayMemory> {
    Ok(ReplayMemory::new(
        "replay-memory",
        &transition_space(state_space, action_space)?,
        capacity,
    )?)
}

/// The part of a composed agent for the off-policy algorithm `R`.
pub struct OffPolicy<R> {
    adder: NStepBuffer,
    replay: ReplayMemory,
    update: UpdateSpec,
    roles: PhantomData<fn() -> R>,
}

impl<B: Backend, R: OffPolicyRoles<B>> Algorithm<B> for OffPolicy<R> {
    type Config = R::Config;
    type Learner = R::Learner;
    type Adder = NStepBuffer;

    const NAME: &'static str = R::NAME;
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = R::UNUSED_PARTS;
    const SEPARATE_VALUE_OPTIMIZER: bool = true;

    fn parse(spec: &Json) -> Result<R::Config> {
        R::parse(spec)
    }

    fn build(
        config: R::Config,
        parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>> {
        let settings = R::replay(&config);
        let (mut learner, mut actor) = R::make(config, parts, state_space, action_space, seed)?;
        learner.publish_to(&mut actor)?;
        let replay = uniform_replay(state_space, action_space, settings.capacity)?;
        Ok(Roles {
            actor,
            learner,
            memory_units: None,
            algorithm: OffPolicy {
                // One-step transitions: n = 1 passes each step straight through.
                adder: NStepBuffer::new(1, settings.discount, state_space, action_space),
                replay,
                update: settings.update,
                roles: PhantomData,
            },
        })
    }

    fn adder(&mut self) -> &mut NStepBuffer {
        &mut self.adder
    }

    /// Before `steps_before_update` steps there is nothing to learn from, and uniform actions
    /// cover the range better than an untrained policy (SB3's `learning_starts`).
    fn acts_uniformly(&self, timesteps: u64) -> bool {
        R::WARMS_UP_UNIFORMLY && timesteps < self.update.steps_before_update
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

    fn update(&mut self, learner: &mut R::Learner, rng: &mut ChaCha8Rng, time_percentage: f64) -> Result<Option<f64>> {
        // A batch larger than the memory is drawn with replacement once it is full (RLgraph).
        let batch_size = self.update.batch_size;
        if Replay::size(&self.replay) < batch_size.min(self.replay.capacity()) {
            return Ok(None);
        }
        let sample = self.replay.sample(batch_size, rng)?;
        Ok(Some(learner.learn(&sample.records, time_percentage)?.loss))
    }

    /// Records as the replay memory holds them: `states`, `actions`, `rewards`, `terminals`,
    /// `next_states`.
    fn update_from_batch(&mut self, learner: &mut R::Learner, batch: &Value, time_percentage: f64) -> Result<f64> {
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

/// An off-policy algorithm's config run across processes: actors feed one-step transitions to
/// replay shards that each hold a uniform memory, and the learner samples them. The actors
/// act with the policy's exploration from the first step (no uniform warm-up: the shards
/// fill from many actors at once).
pub struct DistributedOffPolicy<R: OffPolicyRoles<B>, B: Backend> {
    config: R::Config,
}

/// The parts of the off-policy algorithm `R` on `B` that `description` describes: its
/// [`ComposedAgent`](crate::ComposedAgent), and its roles across processes.
pub(crate) fn parts<R: OffPolicyRoles<B>, B: Backend>(description: &'static Description) -> Parts<B>
where
    R::Config: Clone + Send + Sync,
{
    Parts {
        distributed: Some(|spec| Ok(Box::new(DistributedOffPolicy::<R, B>::new(R::parse(spec)?)))),
        ..Parts::composed::<OffPolicy<R>>(description)
    }
}

impl<B: Backend, R: OffPolicyRoles<B>> DistributedOffPolicy<R, B> {
    /// The distributed form of `config`.
    pub fn new(config: R::Config) -> Self {
        DistributedOffPolicy { config }
    }

    /// The learner and the actor, as the single-process agent makes them.
    fn made(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<(R::Learner, GraphActor<B>)>
    where
        R::Config: Clone,
    {
        R::make(
            self.config.clone(),
            AgentParts::default(),
            state_space,
            action_space,
            seed,
        )
    }
}

impl<B: Backend, R: OffPolicyRoles<B>> DistributedAlgorithm<B> for DistributedOffPolicy<R, B>
where
    R::Config: Clone + Send + Sync,
{
    fn experience(&self) -> Experience {
        let settings = R::replay(&self.config);
        Experience::Replay(ReplayFeed {
            n_step: 1,
            discount: settings.discount,
            update: settings.update,
        })
    }

    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>> {
        Ok(self.made(state_space, action_space, seed)?.1)
    }

    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn GraphLearner<B>>> {
        Ok(Box::new(self.made(state_space, action_space, seed)?.0))
    }

    fn replay(&self, state_space: &Space, action_space: &Space) -> Result<Box<dyn crate::replay::Replay>> {
        let capacity = R::replay(&self.config).capacity;
        Ok(Box::new(uniform_replay(state_space, action_space, capacity)?))
    }
}
