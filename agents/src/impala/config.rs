//! `ImpalaConfig`: RLgraph's IMPALA config (`{"type": "single-impala", ...}`) for the
//! single-process form, read with RLgraph's defaults; keys not yet supported are errors that
//! name them.

use rlgraph_components::losses::RewardClipping;
use rlgraph_components::OptimizerSpec;
use rlgraph_core::{Backend, Device, Result};
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::acting_plan::{ActingHead, ActingPlan};
use crate::actor_critic_networks::ActorCriticSpec;
use crate::agent_parts::AgentParts;
use crate::agent_spec::config;
use crate::agent_spec::SchemaKind;
use crate::agent_spec::{read_config, refuse_given, AgentKind, Layers};
use crate::bounded_numbers::Positive;
use crate::update_spec::UpdateSpec;

/// A parsed IMPALA config.
#[derive(Clone, Debug)]
pub struct ImpalaConfig {
    /// Where the graph runs (`execution_spec.default_device`).
    pub device: Device,
    /// The policy network's layers (`network_spec`, as a list or as `{"layers": [...]}`).
    pub network_spec: Vec<Json>,
    /// A separate value network's layers (empty: a value head on the policy network).
    pub value_function_spec: Vec<Json>,
    /// `preprocessing_spec`.
    pub preprocessing_spec: Vec<Json>,
    /// `action_mask_key`: where Dict states carry their action mask (`action_mask` by default).
    pub action_mask_key: crate::MaskKey,
    /// Steps per rollout (`worker_sample_size`).
    pub rollout_length: usize,
    /// Rollouts the FIFO queue holds between actors and learner (at least `batch_size`).
    pub queue_capacity: usize,
    /// Gamma.
    pub discount: f64,
    /// Policy-gradient weight.
    pub weight_pg: f64,
    /// Value-loss weight.
    pub weight_vf: f64,
    /// Entropy-bonus weight.
    pub weight_entropy: f64,
    /// How rewards are squashed before V-trace (`reward_clipping`; RLgraph's default
    /// `"clamp_one"`, `null` for none).
    pub reward_clipping: RewardClipping,
    /// The update schedule; `batch_size` counts rollouts.
    pub update: UpdateSpec,
    /// The optimizer.
    pub optimizer: OptimizerSpec,
    /// The split of `network_spec` around its LSTM, when the policy is recurrent.
    pub recurrence: Option<crate::Recurrence>,
}

/// The types an IMPALA config may have.
pub(crate) const KIND: AgentKind = AgentKind {
    default: "",
    names: &["impala", "singleimpala", "impalaagent", "singleimpalaagent"],
    what: "an IMPALA agent (single-impala)",
};

/// The keys of an IMPALA config beyond the shared ones.
#[derive(Deserialize, schemars::JsonSchema)]
struct ImpalaKeys {
    /// The value network's layers.
    value_function_spec: Option<Layers>,
    /// Steps per rollout.
    worker_sample_size: Option<Positive>,
    /// The queue of rollouts between actors and learner.
    fifo_queue_spec: Option<QueueSpec>,
    /// Single-process IMPALA takes 1 (use `--num-envs`).
    num_workers: Option<Positive>,
    /// Only false (or 0) is accepted.
    visualize: Option<Json>,
    /// Only false is accepted.
    feed_previous_action_through_nn: Option<bool>,
    /// Only false is accepted.
    feed_previous_reward_through_nn: Option<bool>,
    /// The policy loss's weight.
    weight_pg: Option<f64>,
    /// The value loss's weight.
    weight_vf: Option<f64>,
    /// The entropy bonus's weight.
    weight_entropy: Option<f64>,
    // Always refused, with why: the schema leaves it out.
    #[schemars(skip)]
    environment_spec: Option<Json>,
    // Read from the JSON itself, where `null` (no clipping) differs from absent (the default).
    /// `clamp_one` (default), `soft_asymmetric`, or null for none.
    #[allow(dead_code)]
    reward_clipping: Option<Json>,
}

/// How the config schema describes an IMPALA config.
pub(crate) const SCHEMA: SchemaKind = SchemaKind {
    title: "IMPALA agent",
    names: KIND.names,
    own: keys_schema,
    refused: &[],
    priorities: true,
    n_step: false,
    normalize: true,
};

/// The schema of this config's own keys (beside the shared ones), for the config schema.
pub(crate) fn keys_schema(generator: &mut schemars::SchemaGenerator) -> serde_json::Value {
    <ImpalaKeys as schemars::JsonSchema>::json_schema(generator).to_value()
}

/// `fifo_queue_spec`: the queue of rollouts between actors and learner.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueueSpec {
    #[serde(rename = "type")]
    #[allow(dead_code)] // RLgraph's "fifo_queue", the only kind.
    /// RLgraph's `fifo_queue`, the only kind.
    kind: Option<String>,
    /// Rollouts the queue holds.
    capacity: Option<Positive>,
}

impl ImpalaConfig {
    /// The acting graph's parts, for an exporter: the policy's distribution parameters.
    pub fn acting_plan(&self) -> ActingPlan {
        ActingPlan {
            preprocessing: self.preprocessing_spec.clone(),
            network: self.network_spec.clone(),
            head: ActingHead::Policy,
            action_adapter: None,
            mask_key: self.action_mask_key.key.clone(),
            recurrence: self.recurrence.clone(),
        }
    }

    /// The keys that shape the actor-critic networks, for the learner and the actor.
    pub(crate) fn networks<'a, B: Backend>(&'a self, parts: &'a AgentParts<B>) -> ActorCriticSpec<'a, B> {
        ActorCriticSpec {
            parts,
            network: &self.network_spec,
            value_function: &self.value_function_spec,
            action_adapter: None,
            bounded: Default::default(),
            log_std_init: None,
            preprocessing: &self.preprocessing_spec,
            action_mask_key: &self.action_mask_key,
            recurrence: self.recurrence.as_ref(),
            device: self.device,
        }
    }

    /// A recurrent policy's LSTM units (`None` for a memoryless one).
    pub fn memory_units(&self) -> Option<usize> {
        self.recurrence.as_ref().map(|r| r.units)
    }

    /// Parses an RLgraph IMPALA config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let (_, shared, own) = read_config::<ImpalaKeys>(spec, &KIND)?;
        shared.refuse_n_step()?;
        shared.multi_gpu(false)?;
        // RLgraph steps a Gym environment inside the graph; here the caller brings it, through
        // the Gymnasium bridge where it is a Gym id.
        if let Some(env) = &own.environment_spec {
            let gym = env
                .get("type")
                .and_then(Json::as_str)
                .is_some_and(|t| t.replace(['-', '_'], "").eq_ignore_ascii_case("openaigym"));
            return Err(config(
                "config.environment_spec",
                if gym {
                    "an OpenAI Gym environment stepped inside the agent: here environments come from the \
                     caller; remove environment_spec and pass the id to --env through the Gymnasium bridge \
                     (--env gym:CartPole-v1) or as a built-in id"
                        .into()
                } else {
                    "the environment comes from the caller (--env), not the agent config".into()
                },
            ));
        }
        if own.num_workers.is_some_and(|n| n.0 != 1) {
            return Err(config(
                "config.num_workers",
                "single-process IMPALA acts through the worker's environment copies; set 1 and use --num-envs".into(),
            ));
        }
        refuse_given(
            "config",
            &[
                (
                    "feed_previous_action_through_nn",
                    own.feed_previous_action_through_nn == Some(true),
                ),
                (
                    "feed_previous_reward_through_nn",
                    own.feed_previous_reward_through_nn == Some(true),
                ),
            ],
            "is not supported: the policy's input is the state alone (an LSTM in network_spec carries what it needs)",
        )?;
        // RLgraph writes `visualize` as a boolean or as 0/1.
        if own
            .visualize
            .as_ref()
            .is_some_and(|v| v.as_bool() != Some(false) && v.as_u64() != Some(0))
        {
            return Err(config("config.visualize", "rendering is not supported".into()));
        }
        let network_spec = shared.network("a policy needs a network")?;
        let recurrence = crate::recurrence::recurrence(&network_spec, "config.network_spec")?;
        let keys = shared.update_spec.clone().unwrap_or_default();
        let mut update = keys.resolve();
        // The learner looks for full batches after every step; rollouts wait in the queue.
        if keys.update_interval.is_none() {
            update.update_interval = 1;
        }
        if keys.steps_before_update.is_none() {
            update.steps_before_update = 0;
        }
        let queue = own.fifo_queue_spec.unwrap_or_default();
        let optimizer_json = shared.optimizer_json(json!({"type": "adam", "learning_rate": 0.0005}));
        Ok(ImpalaConfig {
            device: shared.device(),
            network_spec,
            value_function_spec: own
                .value_function_spec
                .map(|l| l.checked("config.value_function_spec"))
                .transpose()?
                .unwrap_or_default(),
            preprocessing_spec: shared.preprocessing()?,
            action_mask_key: shared.action_mask_key(),
            rollout_length: own.worker_sample_size.map_or(50, |n| n.0),
            queue_capacity: queue.capacity.map_or(1, |c| c.0).max(update.batch_size),
            discount: shared.discount.map_or(0.99, |d| d.0),
            weight_pg: own.weight_pg.unwrap_or(1.0),
            weight_vf: own.weight_vf.unwrap_or(0.5),
            weight_entropy: own.weight_entropy.unwrap_or(0.01),
            reward_clipping: RewardClipping::parse(spec.get("reward_clipping"), "config.reward_clipping")?,
            update,
            optimizer: OptimizerSpec::parse(&optimizer_json, "config.optimizer_spec")?,
            recurrence,
        })
    }
}
