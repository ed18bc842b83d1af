//! `PgConfig`: RLgraph's PPO (`{"type": "ppo", ...}`) and actor-critic
//! (`{"type": "actor_critic", ...}`) configs, read with RLgraph's defaults; keys not yet
//! supported are errors that name them.

use rlgraph_components::{OptimizerSpec, TimeDependent};
use rlgraph_core::{Device, Result};
use serde_json::{json, Value as Json};

use crate::agent::{config, UpdateSpec};
use crate::config_reader::Obj;

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
    /// `preprocessing_spec`.
    pub preprocessing_spec: Vec<Json>,
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
}

const KEYS: [&str; 22] = [
    "type",
    "network_spec",
    "value_function_spec",
    "preprocessing_spec",
    "memory_spec",
    "observe_spec",
    "update_spec",
    "optimizer_spec",
    "value_function_optimizer_spec",
    "discount",
    "gae_lambda",
    "weight_entropy",
    "weight_vf",
    "weight_pg",
    "clip_ratio",
    "value_function_clipping",
    "standardize_advantages",
    "sample_episodes",
    "execution_spec",
    "summary_spec",
    "saver_spec",
    "policy_spec",
];

impl PgConfig {
    /// Parses an RLgraph PPO or actor-critic config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let obj = Obj::new(spec, "config")?;
        let ppo = match obj.kind("").as_str() {
            "ppo" | "ppoagent" => true,
            "actorcritic" | "actorcriticagent" | "a2c" => false,
            other => {
                return Err(config(
                    "config.type",
                    format!("{other:?} is not a policy-gradient agent (ppo or actor_critic)"),
                ))
            }
        };
        obj.only(&KEYS)?;
        let device = obj.execution_device()?;
        if let Some(p) = obj.get("policy_spec") {
            let p = Obj::new(p, "config.policy_spec")?;
            p.only(&["type"])?;
            if p.kind("policy") != "policy" {
                return Err(config(
                    "config.policy_spec.type",
                    "only \"policy\" is supported here".into(),
                ));
            }
        }
        let network_spec = obj.list("network_spec")?;
        if network_spec.is_empty() {
            return Err(config(
                "config.network_spec",
                "missing; a policy needs a network".into(),
            ));
        }
        let memory_spec = obj.get("memory_spec").cloned().unwrap_or_else(|| json!({}));
        let m = Obj::new(&memory_spec, "config.memory_spec")?;
        m.only(&["type", "capacity"])?;
        if !matches!(m.kind("ring_buffer").as_str(), "ringbuffer" | "ring") {
            return Err(config(
                "config.memory_spec.type",
                "on-policy agents learn from their latest experience: use ring_buffer".into(),
            ));
        }
        let capacity = m.positive("capacity", 1000)?;
        if let Some(o) = obj.get("observe_spec") {
            Obj::new(o, "config.observe_spec")?.only(&["buffer_size"])?;
        }
        let optimizer_json = obj
            .get("optimizer_spec")
            .cloned()
            .unwrap_or_else(|| json!({"type": "adam", "learning_rate": 0.001}));
        if let Some(vf) = obj.get("value_function_optimizer_spec") {
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
            PgAlgorithm::Ppo {
                clip_ratio: obj.schedule("clip_ratio", 0.2)?,
                value_function_clipping: obj
                    .get("value_function_clipping")
                    .map(|_| obj.num("value_function_clipping", 0.0))
                    .transpose()?,
                standardize_advantages: obj.flag("standardize_advantages", false)?,
            }
        } else {
            for key in ["clip_ratio", "value_function_clipping", "standardize_advantages"] {
                if obj.get(key).is_some() {
                    return Err(config(&obj.path(key), "is a PPO setting; actor-critic has none".into()));
                }
            }
            PgAlgorithm::ActorCritic {
                weight_pg: obj.num("weight_pg", 1.0)?,
            }
        };
        if ppo && obj.get("weight_pg").is_some() {
            return Err(config("config.weight_pg", "not used by PPO".into()));
        }
        let weight_entropy = obj.schedule("weight_entropy", 0.01)?;
        if !ppo && !matches!(weight_entropy, TimeDependent::Constant(_)) {
            return Err(config(
                "config.weight_entropy",
                "a schedule is supported for PPO only; give a number".into(),
            ));
        }
        let sample_episodes = obj.flag("sample_episodes", !ppo)?;
        let update = UpdateSpec::parse(obj.get("update_spec"), "config.update_spec")?;
        if !sample_episodes && update.batch_size > capacity {
            return Err(config(
                "config.update_spec.batch_size",
                format!("{} steps do not fit memory_spec.capacity {capacity}", update.batch_size),
            ));
        }
        Ok(PgConfig {
            device,
            algorithm,
            capacity,
            network_spec,
            value_function_spec: obj.list("value_function_spec")?,
            preprocessing_spec: obj.list("preprocessing_spec")?,
            discount: obj.num("discount", 0.98)?,
            gae_lambda: obj.num("gae_lambda", 1.0)?,
            weight_entropy,
            weight_vf: obj.num("weight_vf", 0.5)?,
            sample_episodes,
            update,
            optimizer: OptimizerSpec::parse(&optimizer_json, "config.optimizer_spec")?,
        })
    }
}
