//! `DqnConfig`: RLgraph's DQN agent config (`{"type": "dqn", "network_spec": [...], ...}`)
//! (and Ape-X's, `{"type": "apex", ...}`) read with RLgraph's defaults; keys not yet supported are errors that name them.

use rlgraph_components::losses::ContainerLoss;
use rlgraph_components::{MultiGpuSync, OptimizerSpec, TimeDependent};
use rlgraph_core::{Device, Result};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::acting_plan::{ActingHead, ActingPlan};
use crate::agent_spec::config;
use crate::agent_spec::SchemaKind;
use crate::agent_spec::{normalized_kind, read_config, AgentKind, MemorySpec};
use crate::bounded_numbers::Positive;
use crate::update_spec::UpdateSpec;

/// Which replay memory.
#[derive(Clone, Debug, PartialEq)]
pub enum MemoryKind {
    /// Uniform replay.
    Replay,
    /// Proportional prioritized replay with `alpha` and `beta`.
    Prioritized {
        /// Priority exponent.
        alpha: f64,
        /// Importance-weight exponent.
        beta: f64,
    },
}

/// A parsed DQN config.
#[derive(Clone, Debug)]
pub struct DqnConfig {
    /// Where the graph runs (`execution_spec.default_device`).
    pub device: Device,
    /// `network_spec`: the layer specs.
    pub network_spec: Vec<Json>,
    /// `preprocessing_spec`: the preprocessor specs (may be empty).
    pub preprocessing_spec: Vec<Json>,
    /// `action_mask_key`: where Dict states carry their action mask (`action_mask` by default).
    pub action_mask_key: crate::MaskKey,
    /// Dueling Q heads (`policy_spec.type == "dueling-policy"` or `dueling_q`).
    pub dueling: bool,
    /// Units of the dueling state-value stream.
    pub units_state_value_stream: usize,
    /// `policy_spec.action_adapter_spec`: the Q-value (advantage) layer's settings and
    /// pre-network.
    pub action_adapter: Option<Json>,
    /// Replay memory kind.
    pub memory: MemoryKind,
    /// Replay capacity.
    pub capacity: usize,
    /// `memory_spec.frame_stack`: how stacked states split into frames, each stored once in
    /// the replay (set by [`crate::WorkerLayout`] for frame-stacking preprocessing).
    pub frame_stack: Option<rlgraph_memories::FrameStack>,
    /// Epsilon over the time percentage.
    pub epsilon: TimeDependent,
    /// Gamma.
    pub discount: f64,
    /// Double Q-learning.
    pub double_q: bool,
    /// Huber loss.
    pub huber_loss: bool,
    /// n-step returns.
    pub n_step: usize,
    /// How container actions' TD errors make one loss (`container_actions_loss`).
    pub container_loss: ContainerLoss,
    /// RLgraph's `shared_container_action_target`.
    pub shared_container_action_target: bool,
    /// Ape-X: new records enter prioritized replay at their own TD error rather than at
    /// the largest priority seen.
    pub worker_side_priorities: bool,
    /// The update schedule.
    pub update: UpdateSpec,
    /// The optimizer.
    pub optimizer: OptimizerSpec,
    /// `multi_gpu_sync`: the update's loss split over towers (`None`: one device).
    pub multi_gpu: Option<MultiGpuSync>,
}

/// The types a DQN config may have (Ape-X's too).
pub(crate) const KIND: AgentKind = AgentKind {
    default: "dqn",
    names: &["dqn", "dqnagent", "apex", "apexagent"],
    what: "a DQN agent (dqn or apex)",
};

/// The keys of a DQN config beyond the shared ones.
#[derive(Deserialize, JsonSchema)]
struct DqnKeys {
    /// The Q policy: plain or dueling, and its action adapter.
    policy_spec: Option<PolicySpec>,
    /// The replay memory (`replay` or `prioritized-replay`) and its capacity.
    memory_spec: Option<MemorySpec>,
    /// Epsilon-greedy exploration and its schedule.
    exploration_spec: Option<ExplorationSpec>,
    /// Double Q-learning (default true).
    double_q: Option<bool>,
    /// Dueling Q heads.
    dueling_q: Option<bool>,
    /// The Huber loss on TD errors instead of the squared error.
    huber_loss: Option<bool>,
    /// n-step returns (also `observe_spec.n_step`).
    n_step: Option<Positive>,
    /// RLgraph's `shared_container_action_target` for container actions.
    shared_container_action_target: Option<bool>,
    /// How container actions' TD errors make one loss: `average_td` (default) or `per_action`.
    container_actions_loss: Option<String>,
}

/// How the config schema describes a DQN or Ape-X config.
pub(crate) const SCHEMA: SchemaKind = SchemaKind {
    title: "DQN or Ape-X agent",
    names: KIND.names,
    own: keys_schema,
    refused: &[],
    priorities: true,
    n_step: true,
    normalize: true,
};

/// The schema of this config's own keys (beside the shared ones), for the config schema.
pub(crate) fn keys_schema(generator: &mut schemars::SchemaGenerator) -> serde_json::Value {
    <DqnKeys as schemars::JsonSchema>::json_schema(generator).to_value()
}

/// `policy_spec`: a plain or dueling Q policy.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "DqnPolicySpec")]
struct PolicySpec {
    /// `dueling-policy` for dueling Q heads.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Units of the dueling state-value stream.
    units_state_value_stream: Option<Positive>,
    /// The Q-value layer's settings and pre-network.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::action_adapter")]
    action_adapter_spec: Option<Json>,
}

/// `exploration_spec`: epsilon-greedy with an epsilon schedule.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExplorationSpec {
    #[serde(rename = "type")]
    #[allow(dead_code)] // RLgraph's "epsilon_exploration", the only kind.
    /// RLgraph's `epsilon_exploration`, the only kind.
    kind: Option<String>,
    /// The epsilon schedule.
    epsilon_spec: EpsilonSpec,
}

/// `exploration_spec.epsilon_spec`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EpsilonSpec {
    /// Epsilon over the share of training: a number or a schedule.
    #[schemars(schema_with = "crate::schema_refs::schedule")]
    decay_spec: Json,
}

impl DqnConfig {
    /// The acting graph's parts, for an exporter: a Q head, dueling where the config says.
    pub fn acting_plan(&self) -> ActingPlan {
        ActingPlan {
            preprocessing: self.preprocessing_spec.clone(),
            network: self.network_spec.clone(),
            head: ActingHead::QValues {
                dueling: self.dueling.then_some(self.units_state_value_stream),
            },
            action_adapter: self.action_adapter.clone(),
            mask_key: self.action_mask_key.key.clone(),
            recurrence: None,
        }
    }

    /// Parses an RLgraph DQN config (`type` `dqn`, or `apex` for Ape-X: prioritized replay
    /// with alpha 0.6 and beta 0.4 by default, and priorities computed as records arrive).
    pub fn parse(spec: &Json) -> Result<Self> {
        let (kind, shared, own) = read_config::<DqnKeys>(spec, &KIND)?;
        let apex = kind.starts_with("apex");
        let network_spec = shared.network("a DQN needs a network")?;
        crate::recurrence::refuse_recurrence(&network_spec, "config.network_spec", "DQN")?;
        let mut dueling = own.dueling_q.unwrap_or(false);
        let mut units_state_value_stream = 128;
        if let Some(p) = &own.policy_spec {
            match normalized_kind(p.kind.as_deref(), "policy").as_str() {
                "duelingpolicy" => dueling = true,
                "policy" => {}
                t => return Err(config("config.policy_spec.type", format!("{t:?} is not a DQN policy"))),
            }
            units_state_value_stream = p.units_state_value_stream.map_or(128, |u| u.0);
        }
        let m = own.memory_spec.unwrap_or_default();
        let capacity = m.capacity(1000);
        let memory = match m.kind(if apex { "prioritized_replay" } else { "replay" }).as_str() {
            "replay" | "replaymemory" => {
                m.refuse_priorities()?;
                MemoryKind::Replay
            }
            "prioritizedreplay" | "memprioritizedreplay" => MemoryKind::Prioritized {
                alpha: m.alpha.unwrap_or(if apex { 0.6 } else { 1.0 }),
                beta: m.beta.unwrap_or(if apex { 0.4 } else { 0.0 }),
            },
            other => {
                return Err(config(
                    "config.memory_spec.type",
                    format!("{other:?}: use replay or prioritized_replay"),
                ))
            }
        };
        if apex && memory == MemoryKind::Replay {
            return Err(config(
                "config.memory_spec.type",
                "Ape-X needs prioritized_replay".into(),
            ));
        }
        let epsilon = match &own.exploration_spec {
            None => TimeDependent::parse(&json!(["linear", 1.0, 0.05]), "config.exploration_spec")?,
            Some(e) => TimeDependent::parse(
                &e.epsilon_spec.decay_spec,
                "config.exploration_spec.epsilon_spec.decay_spec",
            )?
            .within(
                0.0,
                1.0,
                "config.exploration_spec.epsilon_spec.decay_spec",
                "epsilon is a probability, from 0 to 1",
            )?,
        };
        let n_step = match shared.observe_spec.as_ref().and_then(|o| o.n_step) {
            Some(n) => n.0,
            None => own.n_step.map_or(1, |n| n.0),
        };
        let optimizer = OptimizerSpec::parse(
            &shared.optimizer_json(json!({"type": "adam", "learning_rate": 0.001})),
            "config.optimizer_spec",
        )?;
        let update = shared.update_spec.clone().unwrap_or_default().resolve();
        Ok(DqnConfig {
            device: shared.device(),
            network_spec,
            preprocessing_spec: shared.preprocessing()?,
            action_mask_key: shared.action_mask_key(),
            dueling,
            units_state_value_stream,
            action_adapter: crate::agent_spec::checked_adapter(
                own.policy_spec.as_ref().and_then(|p| p.action_adapter_spec.clone()),
            )?,
            memory,
            capacity,
            frame_stack: m.frame_stack,
            epsilon,
            discount: shared.discount.map_or(0.98, |d| d.0),
            double_q: own.double_q.unwrap_or(true),
            huber_loss: own.huber_loss.unwrap_or(false),
            n_step,
            container_loss: ContainerLoss::parse(
                own.container_actions_loss.as_deref().unwrap_or("average_td"),
                "config.container_actions_loss",
            )?,
            shared_container_action_target: own.shared_container_action_target.unwrap_or(true),
            worker_side_priorities: apex,
            multi_gpu: shared.multi_gpu(true)?,
            update,
            optimizer,
        })
    }
}
