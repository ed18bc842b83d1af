//! `AgentParts`: the parts of an agent given as Rust values (a user's own components among
//! them), each taking the place of its JSON section when the algorithm builds its roles.

use rlgraph_components::spec::normalize_type;
use rlgraph_components::{layers_from_spec, OptimizerSpec, TimeDependent};
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Component, CoreError, Result};
use serde_json::Value as Json;

use crate::dqn::config::MemoryKind;
use crate::preprocessing::is_stateful_kind;
use crate::recurrence::is_lstm_kind;
use crate::replay::Replay;

/// Parts of an agent given as values rather than JSON; `None` keeps the config's section.
///
/// Components are cloned where a role needs its own copy (the actor, the learner, a target
/// network), as the JSON path builds one per role.
pub struct AgentParts<B: Backend> {
    /// The network's layers, in order (for `network_spec`). Each needs an API method `call`.
    pub network: Option<Vec<Component<B>>>,
    /// The value function's layers (for `value_function_spec`: PPO, actor-critic, IMPALA and
    /// SAC's critics).
    pub value_network: Option<Vec<Component<B>>>,
    /// Preprocessors run in the graph on every state batch, in order (for
    /// `preprocessing_spec`). Each needs an API method `call`; they run inside updates too, so
    /// they should keep no state between calls.
    pub preprocessors: Option<Vec<Component<B>>>,
    /// The optimizer (for `optimizer_spec`).
    pub optimizer: Option<OptimizerSpec>,
    /// DQN's epsilon over the run's time percentage (for `exploration_spec`).
    pub exploration: Option<TimeDependent>,
    /// DQN's replay memory (for `memory_spec`); it must hold transitions of the agent's
    /// spaces ([`crate::transition_space`]).
    pub memory: Option<Box<dyn Replay>>,
}

impl<B: Backend> Default for AgentParts<B> {
    fn default() -> Self {
        AgentParts {
            network: None,
            value_network: None,
            preprocessors: None,
            optimizer: None,
            exploration: None,
            memory: None,
        }
    }
}

/// Why PPO, actor-critic, IMPALA and SAC take no exploration schedule.
pub(crate) const SAMPLES_ITS_POLICY: &str = "it explores by sampling its policy";

/// Each part's builder method and the config key it stands for.
pub(crate) const PART_KEYS: [(&str, &str); 6] = [
    ("network", "network_spec"),
    ("value_network", "value_function_spec"),
    ("preprocessors", "preprocessing_spec"),
    ("optimizer", "optimizer_spec"),
    ("exploration", "exploration_spec"),
    ("memory", "memory_spec"),
];

impl<B: Backend> AgentParts<B> {
    /// The parts given, by builder method name.
    pub(crate) fn given(&self) -> Vec<&'static str> {
        let given = [
            self.network.is_some(),
            self.value_network.is_some(),
            self.preprocessors.is_some(),
            self.optimizer.is_some(),
            self.exploration.is_some(),
            self.memory.is_some(),
        ];
        PART_KEYS
            .iter()
            .zip(given)
            .filter(|(_, g)| *g)
            .map(|((part, _), _)| *part)
            .collect()
    }

    /// Refuses the given parts that `agent` has no place for, naming each and what to do.
    pub(crate) fn refuse(&self, unused: &[(&'static str, &'static str)], agent: &str) -> Result<()> {
        let given = self.given();
        match unused.iter().find(|(part, _)| given.contains(part)) {
            Some((part, advice)) => Err(CoreError::Config {
                at: format!("builder.{part}"),
                reason: format!("{agent} has no {part} to replace; {advice}"),
            }),
            None => Ok(()),
        }
    }

    /// Puts a given optimizer in `slot`.
    pub(crate) fn take_optimizer(&mut self, slot: &mut OptimizerSpec) {
        if let Some(optimizer) = self.optimizer.take() {
            *slot = optimizer;
        }
    }

    /// The policy network's layers: the given ones, checked, or those `spec` describes.
    pub(crate) fn network_layers(&self, spec: &[Json]) -> Result<Vec<Component<B>>> {
        match &self.network {
            Some(layers) => checked_layers(layers, "builder.network", "layer"),
            None => layers_from_spec::<B>(spec, "config.network_spec"),
        }
    }

    /// The value function's layers: the given ones, checked, or those `spec` describes.
    pub(crate) fn value_layers(&self, spec: &[Json]) -> Result<Vec<Component<B>>> {
        match &self.value_network {
            Some(layers) => checked_layers(layers, "builder.value_network", "layer"),
            None => layers_from_spec::<B>(spec, "config.value_function_spec"),
        }
    }

    /// Whether the value function is separate from the policy's network (given, or a
    /// non-empty `spec`).
    pub(crate) fn separate_value_function(&self, spec: &[Json]) -> bool {
        self.value_network.is_some() || !spec.is_empty()
    }

    /// The given preprocessors, checked; `None` where the config's stack is used.
    pub(crate) fn preprocessor_members(&self) -> Result<Option<Vec<Component<B>>>> {
        self.preprocessors
            .as_ref()
            .map(|p| checked_layers(p, "builder.preprocessors", "preprocessor"))
            .transpose()
    }
}

/// Copies of `layers` (each a `what`: layer or preprocessor), each with an API method `call`
/// and a name of its own among them; errors name `at[i]`. Recurrent layers and stateful
/// preprocessors are refused: the JSON path handles them (an LSTM's memory, a stack run per
/// environment copy), a given value would run as if they kept no state.
fn checked_layers<B: Backend>(layers: &[Component<B>], at: &str, what: &str) -> Result<Vec<Component<B>>> {
    for (i, layer) in layers.iter().enumerate() {
        // Kinds as a spec's `type` names them (`moving_standardize`) or as constructors do.
        let kind = normalize_type(layer.kind());
        let stateful = if is_lstm_kind(&kind) {
            Some("a recurrent network must come from `network_spec`, which carries the LSTM's memory")
        } else if is_stateful_kind(&kind) {
            Some(
                "a preprocessor that keeps state must come from `preprocessing_spec` through `build_agent`, \
                 which runs it per environment copy; inside the graph it would also run on replayed batches",
            )
        } else {
            None
        };
        if let Some(advice) = stateful {
            return Err(CoreError::Config {
                at: format!("{at}[{i}]"),
                reason: format!("{:?} is a {:?} {what}: {advice}", layer.name(), layer.kind()),
            });
        }
        let methods: Vec<&str> = layer.api_methods().iter().map(|m| m.name.as_str()).collect();
        if !methods.contains(&"call") {
            return Err(CoreError::Config {
                at: format!("{at}[{i}]"),
                reason: format!(
                    "component {:?} has no API method `call`, which a {what} needs (its methods: {}); \
                     add `.api(\"call\", vec![Param::new(\"inputs\")], ...)` or wrap it in a component that has one",
                    layer.name(),
                    if methods.is_empty() {
                        "none".into()
                    } else {
                        methods.join(", ")
                    }
                ),
            });
        }
        if let Some(j) = layers[..i].iter().position(|l| l.name() == layer.name()) {
            return Err(CoreError::Config {
                at: format!("{at}[{i}]"),
                reason: format!(
                    "the name {:?} is already taken by {at}[{j}]; give one of them another name \
                     (`Component::copy_as(\"other-name\", true)`)",
                    layer.name()
                ),
            });
        }
    }
    if layers.is_empty() {
        return Err(CoreError::Config {
            at: at.into(),
            reason: format!("no {what} given; give at least one"),
        });
    }
    Ok(layers.to_vec())
}

/// A given replay memory, checked against the transitions of these spaces: its kind and
/// capacity, which the learner and the update schedule read.
pub(crate) fn checked_memory(memory: &dyn Replay, records: &Space) -> Result<(MemoryKind, usize)> {
    if memory.record_space() != records {
        return Err(CoreError::Config {
            at: "builder.memory".into(),
            reason: format!(
                "the memory holds records of {}, but this agent stores transitions of {}; \
                 build it over `agents::transition_space(&state_space, &action_space)`",
                memory.record_space().describe(),
                records.describe()
            ),
        });
    }
    Ok((memory.kind(), memory.capacity()))
}
