//! `ComposedAgent`: the one [`Agent`] every algorithm is, in one process: an actor, a learner
//! and the algorithm's own part ([`Algorithm`]: its adder, the store the adder writes into, and
//! how an update draws from it). Acting, recurrent memories, counters, weight hand-over,
//! checkpoints and resets are written here once.

use std::path::Path;

use rand_chacha::ChaCha8Rng;
use rlgraph_core::profiler;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, ErasedExecutor, GraphExecutor, HostState, Result};
use serde_json::Value as Json;

use crate::actor::{Acted, Actor, GraphActor};
use crate::adders::Adder;
use crate::agent::{reset_graph, Agent, Transition};
use crate::agent_parts::AgentParts;
use crate::carried_memory::{CarriedMemory, StepMemory};
use crate::counters::Counters;
use crate::learner::GraphLearner;
use crate::update_spec::UpdateSpec;

/// What one algorithm adds to the actor and learner every composed agent has. Its builder
/// ([`Algorithm::build`]) makes all the roles from the algorithm's config.
pub trait Algorithm<B: Backend>: Send + Sized {
    /// The parsed config.
    type Config;
    /// The learner.
    type Learner: GraphLearner<B>;
    /// The adder.
    type Adder: Adder;

    /// The algorithm's name in messages.
    const NAME: &'static str;
    /// The parts of [`AgentParts`] it has no place for, each with what to do instead; the
    /// builder refuses them before it reads the config.
    const UNUSED_PARTS: &'static [(&'static str, &'static str)];
    /// Whether a given optimizer leaves a JSON `value_function_optimizer_spec` its own (SAC's
    /// critics have their own optimizer; PPO steps both networks with one).
    const SEPARATE_VALUE_OPTIMIZER: bool = false;
    /// Reads the config from RLgraph's JSON.
    fn parse(spec: &Json) -> Result<Self::Config>;
    /// The builder: the actor (with the learner's weights), the learner and this part, for
    /// these spaces, with every random choice drawn from `seed`; each part given in `parts`
    /// takes the place of its config section (one this algorithm has no place for is refused).
    fn build(
        config: Self::Config,
        parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Roles<B, Self>>;
    /// The adder, for the agent to cut copies' episodes short and drop partial steps.
    fn adder(&mut self) -> &mut Self::Adder;
    /// What the actor said of the actions it just chose (IMPALA keeps each one's
    /// log-likelihood until the step is observed).
    fn acted(&mut self, acted: &Acted, explore: bool) -> Result<()> {
        let _ = (acted, explore);
        Ok(())
    }
    /// Whether exploring actions are drawn uniformly from the action space (with the agent's
    /// seeded RNG) instead of asked of the actor, `timesteps` steps into the run: an
    /// off-policy algorithm's warm-up (TD3's, as SB3's `learning_starts`).
    fn acts_uniformly(&self, timesteps: u64) -> bool {
        let _ = timesteps;
        false
    }
    /// Refuses a step of copy `env_id` before the agent changes anything for it (IMPALA: a
    /// step of a copy it handed no action to).
    fn check_observe(&self, env_id: usize) -> Result<()> {
        let _ = env_id;
        Ok(())
    }
    /// Takes one observed step of copy `env_id` (acted from `memory`, for a recurrent
    /// actor) through the adder into the store. `actor`: Ape-X prioritizes records with it.
    fn observe(
        &mut self,
        env_id: usize,
        transition: Transition,
        memory: Option<StepMemory>,
        actor: &mut GraphActor<B>,
    ) -> Result<()>;
    /// One update from the store, if it holds enough: the loss, or `None`.
    fn update(
        &mut self,
        learner: &mut Self::Learner,
        rng: &mut ChaCha8Rng,
        time_percentage: f64,
    ) -> Result<Option<f64>>;
    /// One update from a batch given from outside, in the layout the store holds.
    fn update_from_batch(&mut self, learner: &mut Self::Learner, batch: &Value, time_percentage: f64) -> Result<f64>;
    /// When to update.
    fn update_spec(&self) -> &UpdateSpec;
    /// The parts of this algorithm a checkpoint holds, by name.
    fn parts(&self) -> Vec<(&'static str, &dyn HostState)>;
    /// The same, to restore.
    fn parts_mut(&mut self) -> Vec<(&'static str, &mut dyn HostState)>;
}

/// What an algorithm's builder makes.
pub struct Roles<B: Backend, A: Algorithm<B>> {
    /// The actor, holding the learner's first weights.
    pub actor: GraphActor<B>,
    /// The learner.
    pub learner: A::Learner,
    /// The algorithm's own part.
    pub algorithm: A,
    /// A recurrent actor's LSTM units.
    pub memory_units: Option<usize>,
}

/// An agent on backend `B` composed of an actor, a learner and the algorithm `A`'s part.
pub struct ComposedAgent<B: Backend, A: Algorithm<B>> {
    pub(crate) actor: GraphActor<B>,
    pub(crate) learner: A::Learner,
    pub(crate) algorithm: A,
    pub(crate) counters: Counters,
    /// A recurrent policy's memory per environment copy.
    pub(crate) memory: Option<CarriedMemory>,
    state_space: Space,
    action_space: Space,
}

impl<B: Backend, A: Algorithm<B>> ComposedAgent<B, A> {
    /// The agent `config` describes, for these spaces, with every random choice drawn from
    /// `seed`.
    pub fn new(config: A::Config, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        ComposedAgent::from_parts(config, AgentParts::default(), state_space, action_space, seed)
    }

    /// The agent `config` describes with the given `parts` in place of their sections.
    pub(crate) fn from_parts(
        config: A::Config,
        parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<Self> {
        let roles = A::build(config, parts, state_space, action_space, seed)?;
        Ok(ComposedAgent {
            actor: roles.actor,
            learner: roles.learner,
            algorithm: roles.algorithm,
            counters: Counters::new(seed),
            memory: roles.memory_units.map(CarriedMemory::new),
            state_space: state_space.with_batch_rank(false),
            action_space: action_space.with_batch_rank(false),
        })
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        crate::learner::Learner::updates(&self.learner)
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
    pub fn learner(&self) -> &A::Learner {
        &self.learner
    }

    /// Whether the policy carries an LSTM's memory from step to step.
    pub fn is_recurrent(&self) -> bool {
        self.memory.is_some()
    }

    /// Saves everything a resumed run needs: the learner's variables, RNG and counters, the
    /// actor's RNG and version, the algorithm's adder and store, a recurrent policy's
    /// memories, and the agent's counters and RNG.
    pub fn save_checkpoint(&self, path: impl AsRef<Path>) -> Result<()> {
        Agent::save_checkpoint_with(self, path.as_ref(), &[])
    }

    /// Restores a checkpoint written by `save_checkpoint`; on error nothing changes.
    pub fn restore_checkpoint(&mut self, path: impl AsRef<Path>) -> Result<()> {
        Agent::restore_checkpoint_with(self, path.as_ref(), &mut [])
    }

    /// Hands the actor the learner's weights as a new version, after an update.
    pub(crate) fn publish(&mut self) -> Result<()> {
        let _op = profiler::operation("weight_sync");
        self.learner.publish_to(&mut self.actor)
    }

    /// After the learner's variables changed outside an update (restore, import, set): the
    /// actor takes them at the current version.
    fn resync_actor(&mut self) -> Result<()> {
        self.learner.republish_to(&mut self.actor)
    }
}

impl<B: Backend, A: Algorithm<B>> Agent for ComposedAgent<B, A> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        if explore && self.algorithm.acts_uniformly(self.counters.timesteps) {
            let rng = &mut self.counters.rng;
            return Ok(states.iter().map(|_| self.action_space.sample(None, rng)).collect());
        }
        let acted = match &mut self.memory {
            Some(memory) => memory.act(&mut self.actor, states, explore)?,
            None => self.actor.act(states, explore, time_percentage)?,
        };
        self.algorithm.acted(&acted, explore)?;
        Ok(acted.actions)
    }

    /// A recurrent policy's step is kept with the memory its actor acted from; a step that
    /// ends an episode starts the copy's next one from a zero memory.
    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        self.algorithm.check_observe(env_id)?;
        let memory = match &mut self.memory {
            Some(m) => Some(m.observed(env_id, &transition)?),
            None => None,
        };
        self.counters.timesteps += 1;
        self.algorithm.observe(env_id, transition, memory, &mut self.actor)
    }

    /// Copies that restart while exploring also end the steps held for them (see
    /// [`Adder::cut`]).
    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        if let Some(memory) = &mut self.memory {
            memory.begin(explore, copies);
        }
        if explore {
            let adder = self.algorithm.adder();
            for &copy in copies {
                adder.cut(copy);
            }
        }
        Ok(())
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        let loss = self
            .algorithm
            .update(&mut self.learner, &mut self.counters.rng, time_percentage)?;
        if loss.is_some() {
            self.publish()?;
        }
        Ok(loss)
    }

    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        let loss = self
            .algorithm
            .update_from_batch(&mut self.learner, batch, time_percentage)?;
        self.publish()?;
        Ok(loss)
    }

    fn update_spec(&self) -> &UpdateSpec {
        self.algorithm.update_spec()
    }

    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let mut parts = self.algorithm.parts();
        parts.push(("agent", &self.counters));
        parts.push(("actor", &self.actor));
        if let Some(memory) = &self.memory {
            parts.push(("memory", memory));
        }
        self.learner.save_checkpoint(path, parts, extra)
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let ComposedAgent {
            learner,
            algorithm,
            counters,
            actor,
            memory,
            ..
        } = self;
        let mut parts = algorithm.parts_mut();
        parts.push(("agent", counters));
        parts.push(("actor", actor));
        if let Some(memory) = memory {
            parts.push(("memory", memory));
        }
        learner.restore_checkpoint(path, parts, extra)?;
        self.resync_actor()
    }

    fn weights_changed(&mut self) -> Result<()> {
        self.resync_actor()
    }

    /// Drops partial records, resets the preprocessors and forgets a recurrent policy's
    /// memories; learned weights and stored records stay.
    fn reset(&mut self) -> Result<()> {
        self.algorithm.adder().drop_partial();
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
