//! `PgConfig`: RLgraph's PPO (`{"type": "ppo", ...}`) and actor-critic
//! (`{"type": "actor_critic", ...}`) configs, read with RLgraph's defaults; keys not yet
//! supported are errors that name them.

use rlgraph_components::policy::squashed_bounds;
use rlgraph_components::registry::checked_log_std_init;
use rlgraph_components::{BoundedDistribution, OptimizerSpec, TimeDependent};
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Device, Result};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::acting_plan::{ActingHead, ActingPlan};
use crate::actor_critic_networks::ActorCriticSpec;
use crate::agent_parts::AgentParts;
use crate::agent_spec::config;
use crate::agent_spec::SchemaKind;
use crate::agent_spec::{normalized_kind, read_config, refuse_given, schedule, AgentKind, Layers, MemorySpec};
use crate::recurrence::{recurrence, Recurrence};
use crate::update_spec::UpdateSpec;

/// Which policy-gradient algorithm.
#[derive(Clone, Debug, PartialEq)]
pub enum PgAlgorithm {
    /// PPO's clipped surrogate (Schulman et al. 2017), several minibatch steps per batch.
    Ppo {
        /// Epsilon of the ratio clipping, over the time percentage.
        clip_ratio: TimeDependent,
        /// Clip value predictions within this distance of the old ones.
        value_function_clipping: Option<f64>,
        /// Standardize advantages per minibatch.
        standardize_advantages: bool,
    },
    /// Advantage actor-critic (Mnih et al. 2016): one gradient step per batch.
    ActorCritic {
        /// Weight of the policy-gradient term.
        weight_pg: f64,
    },
}

/// A parsed PPO or actor-critic config.
#[derive(Clone, Debug)]
pub struct PgConfig {
    /// Where the graph runs (`execution_spec.default_device`).
    pub device: Device,
    /// The algorithm and its own settings.
    pub algorithm: PgAlgorithm,
    /// `network_spec`: the policy network's layers.
    pub network_spec: Vec<Json>,
    /// `value_function_spec`: a separate value network's layers (empty: the value head
    /// shares the policy network).
    pub value_function_spec: Vec<Json>,
    /// `policy_spec.action_adapter_spec`: the policy's output layer and its pre-network.
    pub action_adapter: Option<Json>,
    /// `policy_spec.bounded_distribution_type`: the distribution on bounded FloatBox actions
    /// (`squashed` by default, `beta`, or `normal`, clipped by the environments).
    pub bounded_distribution: BoundedDistribution,
    /// `policy_spec.log_std_init`: given, a Normal policy's log-std is a state-independent
    /// variable starting there (SB3's and CleanRL's continuous PPO).
    pub log_std_init: Option<f64>,
    /// `preprocessing_spec`.
    pub preprocessing_spec: Vec<Json>,
    /// `action_mask_key`: where Dict states carry their action mask (`action_mask` by default).
    pub action_mask_key: crate::MaskKey,
    /// Gamma.
    pub discount: f64,
    /// GAE's lambda.
    pub gae_lambda: f64,
    /// Entropy-bonus weight, over the time percentage.
    pub weight_entropy: TimeDependent,
    /// Value-loss weight.
    pub weight_vf: f64,
    /// Update on the latest `batch_size` finished episodes rather than the latest
    /// `batch_size` steps.
    pub sample_episodes: bool,
    /// The most recent steps kept (`memory_spec.capacity`).
    pub capacity: usize,
    /// The update schedule; `batch_size` counts steps, or episodes with `sample_episodes`.
    pub update: UpdateSpec,
    /// The optimizer of the policy and value networks together.
    pub optimizer: OptimizerSpec,
    /// The split of `network_spec` around its LSTM layer, when it has one (read from it).
    pub recurrence: Option<Recurrence>,
}

/// The types a PPO or actor-critic config may have.
pub(crate) const KIND: AgentKind = AgentKind {
    default: "",
    names: &["ppo", "ppoagent", "actorcritic", "actorcriticagent", "a2c"],
    what: "a policy-gradient agent (ppo or actor_critic)",
};

/// The keys only PPO reads (an actor-critic config refuses them).
pub(crate) const PPO_ONLY: [&str; 3] = ["clip_ratio", "value_function_clipping", "standardize_advantages"];

/// The keys of a PPO or actor-critic config beyond the shared ones.
#[derive(Deserialize, JsonSchema)]
struct PgKeys {
    /// The value network's layers.
    value_function_spec: Option<Layers>,
    /// The rollout buffer (`ring_buffer`) and its capacity.
    memory_spec: Option<MemorySpec>,
    /// The value network's optimizer (the policy's when absent).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::optimizer")]
    value_function_optimizer_spec: Option<Json>,
    /// GAE's lambda.
    gae_lambda: Option<f64>,
    /// The entropy bonus's weight (a schedule for PPO).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::optional_schedule")]
    weight_entropy: Option<Json>,
    /// The value loss's weight.
    weight_vf: Option<f64>,
    /// The policy loss's weight (actor-critic).
    weight_pg: Option<f64>,
    /// PPO's clip ratio (a number or a schedule).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::optional_schedule")]
    clip_ratio: Option<Json>,
    /// PPO: clip value updates to this distance from the old values.
    value_function_clipping: Option<f64>,
    /// PPO: standardize advantages per minibatch.
    standardize_advantages: Option<bool>,
    /// Update from whole episodes rather than fixed-length rollouts.
    sample_episodes: Option<bool>,
    /// The policy: its action adapter and how bounded actions are drawn.
    policy_spec: Option<PolicySpec>,
}

/// The `type` names that pick PPO; the others of [`KIND`] pick actor-critic.
const PPO_NAMES: [&str; 2] = ["ppo", "ppoagent"];

/// How the config schema describes PPO configs.
pub(crate) const PPO_SCHEMA: SchemaKind = SchemaKind {
    title: "PPO agent",
    names: &PPO_NAMES,
    own: keys_schema,
    // Actor-critic's policy-loss weight; PPO's loss has none.
    refused: &["weight_pg"],
    priorities: false,
    n_step: false,
    normalize: true,
};

/// How the config schema describes actor-critic configs.
pub(crate) const ACTOR_CRITIC_SCHEMA: SchemaKind = SchemaKind {
    title: "actor-critic agent",
    names: &["actorcritic", "actorcriticagent", "a2c"],
    own: keys_schema,
    refused: &PPO_ONLY,
    priorities: false,
    n_step: false,
    normalize: true,
};

/// The schema of this config's own keys (beside the shared ones), for the config schema.
pub(crate) fn keys_schema(generator: &mut schemars::SchemaGenerator) -> serde_json::Value {
    <PgKeys as schemars::JsonSchema>::json_schema(generator).to_value()
}

/// `policy_spec`: only the plain policy.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PgPolicySpec")]
struct PolicySpec {
    /// The policy type (only the plain policy).
    #[serde(rename = "type")]
    kind: Option<String>,
    /// The action layer's settings and pre-network.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::action_adapter")]
    action_adapter_spec: Option<Json>,
    /// `normal` for a plain Normal on bounded actions (clipped by the environment); squashed by default.
    bounded_distribution_type: Option<String>,
    /// The initial log standard deviation of a Normal policy.
    log_std_init: Option<f64>,
}

impl PgConfig {
    /// The acting graph's parts, for an exporter: the policy's distribution parameters.
    pub fn acting_plan(&self) -> ActingPlan {
        ActingPlan {
            preprocessing: self.preprocessing_spec.clone(),
            network: self.network_spec.clone(),
            head: ActingHead::Policy,
            action_adapter: self.action_adapter.clone(),
            mask_key: self.action_mask_key.key.clone(),
            recurrence: self.recurrence.clone(),
        }
    }

    /// The actions the agent's graphs and rollout take: a FloatBox that gets a plain Normal
    /// (`bounded_distribution_type: "normal"`, or bounds that differ per element, which
    /// nothing squashes into) loses its bounds, since the Normal's samples leave them; the
    /// environments clip what they are sent.
    pub fn sampled_action_space(&self, action_space: &Space) -> Space {
        let plain = |leaf: &Space| {
            matches!(leaf, Space::Float(_))
                && (self.bounded_distribution == BoundedDistribution::Normal || squashed_bounds(leaf).is_none())
        };
        action_space.map(|_, leaf| match plain(leaf) {
            true => crate::without_float_bounds(leaf),
            false => leaf.clone(),
        })
    }

    /// The keys that shape the actor-critic networks, for the learner and the actor.
    pub(crate) fn networks<'a, B: Backend>(&'a self, parts: &'a AgentParts<B>) -> ActorCriticSpec<'a, B> {
        ActorCriticSpec {
            parts,
            network: &self.network_spec,
            value_function: &self.value_function_spec,
            action_adapter: self.action_adapter.as_ref(),
            bounded: self.bounded_distribution,
            log_std_init: self.log_std_init,
            preprocessing: &self.preprocessing_spec,
            action_mask_key: &self.action_mask_key,
            recurrence: self.recurrence.as_ref(),
            device: self.device,
        }
    }

    /// Parses an RLgraph PPO or actor-critic config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let (kind, shared, own) = read_config::<PgKeys>(spec, &KIND)?;
        let ppo = PPO_NAMES.contains(&kind.as_str());
        shared.refuse_n_step()?;
        shared.multi_gpu(false)?;
        if let Some(p) = &own.policy_spec {
            if normalized_kind(p.kind.as_deref(), "policy") != "policy" {
                return Err(config(
                    "config.policy_spec.type",
                    "only \"policy\" is supported here".into(),
                ));
            }
        }
        let policy = own.policy_spec.as_ref();
        let bounded_distribution = match policy.and_then(|p| p.bounded_distribution_type.as_deref()) {
            None => BoundedDistribution::default(),
            Some(name) => BoundedDistribution::parse(name).ok_or_else(|| {
                config(
                    "config.policy_spec.bounded_distribution_type",
                    format!("{name:?}: use \"squashed\", \"beta\" or \"normal\""),
                )
            })?,
        };
        let log_std_init = policy
            .and_then(|p| p.log_std_init)
            .map(|x| checked_log_std_init(x, "config.policy_spec.log_std_init"))
            .transpose()?;
        let network_spec = shared.network("a policy needs a network")?;
        let m = own.memory_spec.unwrap_or_default();
        if !matches!(m.kind("ring_buffer").as_str(), "ringbuffer" | "ring") {
            return Err(config(
                "config.memory_spec.type",
                "on-policy agents learn from their latest experience: use ring_buffer".into(),
            ));
        }
        m.refuse_priorities()?;
        let capacity = m.capacity(1000);
        let optimizer_json = shared.optimizer_json(json!({"type": "adam", "learning_rate": 0.001}));
        if let Some(vf) = &own.value_function_optimizer_spec {
            // One optimizer steps both networks on the summed loss; a second one with other
            // settings would need a second backward pass.
            if *vf != optimizer_json {
                return Err(config(
                    "config.value_function_optimizer_spec",
                    "a value-function optimizer that differs from optimizer_spec is not yet supported".into(),
                ));
            }
        }
        let algorithm = if ppo {
            if own.weight_pg.is_some() {
                return Err(config("config.weight_pg", "not used by PPO".into()));
            }
            PgAlgorithm::Ppo {
                clip_ratio: schedule(own.clip_ratio.as_ref(), 0.2, "config.clip_ratio")?.within(
                    0.0,
                    f64::MAX,
                    "config.clip_ratio",
                    "a clip ratio is a finite number of at least 0",
                )?,
                value_function_clipping: own.value_function_clipping,
                standardize_advantages: own.standardize_advantages.unwrap_or(false),
            }
        } else {
            let given = |key: &str| match key {
                "clip_ratio" => own.clip_ratio.is_some(),
                "value_function_clipping" => own.value_function_clipping.is_some(),
                "standardize_advantages" => own.standardize_advantages.is_some(),
                _ => false,
            };
            refuse_given(
                "config",
                &PPO_ONLY.map(|key| (key, given(key))),
                "is a PPO setting; actor-critic has none",
            )?;
            PgAlgorithm::ActorCritic {
                weight_pg: own.weight_pg.unwrap_or(1.0),
            }
        };
        let weight_entropy = schedule(own.weight_entropy.as_ref(), 0.01, "config.weight_entropy")?;
        if !ppo && !matches!(weight_entropy, TimeDependent::Constant(_)) {
            return Err(config(
                "config.weight_entropy",
                "a schedule is supported for PPO only; give a number".into(),
            ));
        }
        let sample_episodes = own.sample_episodes.unwrap_or(!ppo);
        let update = shared.update_spec.clone().unwrap_or_default().resolve();
        if !sample_episodes && update.batch_size > capacity {
            return Err(config(
                "config.update_spec.batch_size",
                format!("{} steps do not fit memory_spec.capacity {capacity}", update.batch_size),
            ));
        }
        let recurrence = recurrence(&network_spec, "config.network_spec")?;
        if recurrence.is_some() && sample_episodes {
            return Err(config(
                "config.sample_episodes",
                "a recurrent policy learns from each environment copy's latest steps as equal-length \
                 sequences; set sample_episodes: false (actor-critic's default is true)"
                    .into(),
            ));
        }
        Ok(PgConfig {
            recurrence,
            device: shared.device(),
            algorithm,
            capacity,
            network_spec,
            value_function_spec: own
                .value_function_spec
                .map(|l| l.checked("config.value_function_spec"))
                .transpose()?
                .unwrap_or_default(),
            action_adapter: crate::agent_spec::checked_adapter(
                own.policy_spec.as_ref().and_then(|p| p.action_adapter_spec.clone()),
            )?,
            bounded_distribution,
            log_std_init,
            preprocessing_spec: shared.preprocessing()?,
            action_mask_key: shared.action_mask_key(),
            discount: shared.discount.map_or(0.98, |d| d.0),
            gae_lambda: own.gae_lambda.unwrap_or(1.0),
            weight_entropy,
            weight_vf: own.weight_vf.unwrap_or(0.5),
            sample_episodes,
            update,
            optimizer: OptimizerSpec::parse(&optimizer_json, "config.optimizer_spec")?,
        })
    }
}
