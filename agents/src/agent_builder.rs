//! `AgentBuilder`: an agent composed from Rust values (a network, preprocessors, an
//! optimizer, a replay memory, an exploration schedule; a user's own components among them),
//! each in place of its JSON section, with the rest of the config in RLgraph's JSON.

use std::marker::PhantomData;

use rlgraph_components::{OptimizerSpec, TimeDependent};
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Component, CoreError, Result};
use serde_json::{json, Value as Json};

use crate::agent_parts::{AgentParts, PART_KEYS};
use crate::composed_agent::{Algorithm, ComposedAgent};
use crate::replay::Replay;

/// Builds a [`ComposedAgent`] of algorithm `A` from RLgraph's JSON and Rust values; start it
/// with [`ComposedAgent::builder`] (`DqnAgent::<Candle>::builder(json!({...}))`).
///
/// Each value given replaces one config section (`network` for `network_spec`,
/// `value_network` for `value_function_spec`, `preprocessors` for `preprocessing_spec`,
/// `optimizer` for `optimizer_spec`, `exploration` for `exploration_spec`, `memory` for
/// `memory_spec`); a section given both ways is refused, and so is a value the algorithm has
/// no place for. The agent then goes through the same space checks as one built from JSON.
///
/// ```
/// use agents::{transition_space, Agent, DqnAgent};
/// use backend_candle::Candle;
/// use rlgraph_components::{dense, Activation, DenseSpec, OptimizerSpec, TimeDependent};
/// use rlgraph_envs::{CartPole, Env};
/// use rlgraph_memories::PrioritizedReplay;
///
/// let mut env = CartPole::new(0);
/// let (s, a) = (env.state_space().clone(), env.action_space().clone());
/// let memory = PrioritizedReplay::new("replay", &transition_space(&s, &a)?, 5_000, 0.6, 0.4)?;
/// let mut agent = DqnAgent::<Candle>::builder(serde_json::json!({"type": "dqn", "discount": 0.99}))
///     .network(vec![dense("hidden", DenseSpec { activation: Activation::Relu, ..DenseSpec::new(32) })])
///     .optimizer(OptimizerSpec::adam(0.0005))
///     .exploration(TimeDependent::Linear { from: 1.0, to: 0.02 })
///     .memory(memory)
///     .build(&s, &a, 7)?;
/// let actions = agent.get_actions(&[env.reset(Some(0))?], true, 0.0)?;
/// assert_eq!(actions.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AgentBuilder<B: Backend, A: Algorithm<B>> {
    spec: Json,
    parts: AgentParts<B>,
    algorithm: PhantomData<fn() -> A>,
}

impl<B: Backend, A: Algorithm<B>> ComposedAgent<B, A> {
    /// An agent composed from Rust values: `spec` (RLgraph's JSON) for what `builder` is not
    /// given. See [`AgentBuilder`].
    pub fn builder(spec: Json) -> AgentBuilder<B, A> {
        AgentBuilder::new(spec)
    }
}

impl<B: Backend, A: Algorithm<B>> AgentBuilder<B, A> {
    /// A builder over `spec`, RLgraph's JSON config for what no value is given for.
    pub fn new(spec: Json) -> Self {
        AgentBuilder {
            spec,
            parts: AgentParts::default(),
            algorithm: PhantomData,
        }
    }

    /// The network's layers, in order (in place of `network_spec`); each needs an API method
    /// `call`, and a name of its own among them.
    pub fn network(mut self, layers: Vec<Component<B>>) -> Self {
        self.parts.network = Some(layers);
        self
    }

    /// The value function's layers (in place of `value_function_spec`): PPO, actor-critic,
    /// IMPALA, and SAC's two critics (each a copy).
    pub fn value_network(mut self, layers: Vec<Component<B>>) -> Self {
        self.parts.value_network = Some(layers);
        self
    }

    /// Preprocessors that run in the graph on every state batch, in order (in place of
    /// `preprocessing_spec`); they also run inside updates, so they should keep no state.
    pub fn preprocessors(mut self, preprocessors: Vec<Component<B>>) -> Self {
        self.parts.preprocessors = Some(preprocessors);
        self
    }

    /// The optimizer (in place of `optimizer_spec`; SAC's policy and entropy-weight optimizer).
    pub fn optimizer(mut self, optimizer: OptimizerSpec) -> Self {
        self.parts.optimizer = Some(optimizer);
        self
    }

    /// DQN's epsilon over the run's time percentage (in place of `exploration_spec`).
    pub fn exploration(mut self, epsilon: TimeDependent) -> Self {
        self.parts.exploration = Some(epsilon);
        self
    }

    /// DQN's replay memory (in place of `memory_spec`), over
    /// [`crate::transition_space`] of the agent's spaces; its kind and capacity become the
    /// config's.
    pub fn memory(mut self, memory: impl Replay + 'static) -> Self {
        self.parts.memory = Some(Box::new(memory));
        self
    }

    /// The agent for these spaces, with every random choice drawn from `seed`.
    pub fn build(self, state_space: &Space, action_space: &Space, seed: u64) -> Result<ComposedAgent<B, A>> {
        let mut spec = self.spec;
        let Some(object) = spec.as_object_mut() else {
            return Err(CoreError::Config {
                at: "config".into(),
                reason: format!("expected a JSON object, got {spec}"),
            });
        };
        self.parts.refuse(A::UNUSED_PARTS, A::NAME)?;
        if self.parts.optimizer.is_some()
            && !A::SEPARATE_VALUE_OPTIMIZER
            && object.contains_key("value_function_optimizer_spec")
        {
            return Err(CoreError::Config {
                at: "config.value_function_optimizer_spec".into(),
                reason: format!(
                    "{} steps both networks with one optimizer, given as a Rust value (`AgentBuilder::optimizer`); leave this key out",
                    A::NAME
                ),
            });
        }
        let given = self.parts.given();
        for (part, key) in PART_KEYS {
            if given.contains(&part) && object.contains_key(key) {
                return Err(CoreError::Config {
                    at: format!("config.{key}"),
                    reason: format!("given twice: in the JSON and as a Rust value (`AgentBuilder::{part}`); keep one"),
                });
            }
        }
        // The config readers require these sections where the algorithm needs them; the
        // given layers take the stand-in's place before anything is built.
        for (part, key) in [("network", "network_spec"), ("value_network", "value_function_spec")] {
            if given.contains(&part) {
                object.insert(key.into(), json!([{"type": "dense", "units": 1}]));
            }
        }
        let config = A::parse(&spec)?;
        ComposedAgent::from_parts(config, self.parts, state_space, action_space, seed)
    }
}
