//! `SacConfig`: RLgraph's soft actor-critic config (`{"type": "sac", ...}`), read with
//! RLgraph's defaults; keys not yet supported are errors that name them.

use rlgraph_components::OptimizerSpec;
use rlgraph_core::{Device, Result};
use serde_json::{json, Value as Json};

use crate::agent::{config, UpdateSpec};
use crate::config_reader::Obj;

/// A parsed SAC config.
#[derive(Clone, Debug)]
pub struct SacConfig {
    /// Where the graph runs (`execution_spec.default_device`).
    pub device: Device,
    /// `network_spec`: the policy network's layers.
    pub network_spec: Vec<Json>,
    /// `value_function_spec`: each Q network's layers (input: state and action, concatenated).
    pub value_function_spec: Vec<Json>,
    /// `preprocessing_spec`.
    pub preprocessing_spec: Vec<Json>,
    /// Replay capacity.
    pub capacity: usize,
    /// Gamma.
    pub discount: f64,
    /// Alpha at the start (tuned toward the target entropy from there).
    pub initial_alpha: f64,
    /// The entropy alpha is tuned toward (`None`: minus the number of action dimensions, or
    /// of categories for discrete actions).
    pub target_entropy: Option<f64>,
    /// The Gumbel-softmax temperature of discrete actions.
    pub gumbel_softmax_temperature: f64,
    /// The update schedule; `sync_tau` moves the target critics (Polyak averaging).
    pub update: UpdateSpec,
    /// The policy's and alpha's optimizer.
    pub optimizer: OptimizerSpec,
    /// The critics' optimizer (`optimizer_spec` when absent).
    pub value_function_optimizer: OptimizerSpec,
}

const KEYS: [&str; 17] = [
    "gumbel_softmax_temperature",
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
    "initial_alpha",
    "target_entropy",
    "double_q",
    "execution_spec",
    "summary_spec",
    "saver_spec",
];

impl SacConfig {
    /// Parses an RLgraph SAC config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let obj = Obj::new(spec, "config")?;
        if !matches!(obj.kind("").as_str(), "sac" | "sacagent") {
            return Err(config("config.type", "not a SAC agent (sac)".into()));
        }
        obj.only(&KEYS)?;
        let device = obj.execution_device()?;
        if !obj.flag("double_q", true)? {
            return Err(config(
                "config.double_q",
                "SAC here always learns twin critics; a single critic is not supported".into(),
            ));
        }
        let network_spec = obj.list("network_spec")?;
        let value_function_spec = obj.list("value_function_spec")?;
        for (key, list) in [
            ("network_spec", &network_spec),
            ("value_function_spec", &value_function_spec),
        ] {
            if list.is_empty() {
                return Err(config(
                    &obj.path(key),
                    "missing; SAC needs a policy and a Q network".into(),
                ));
            }
        }
        let memory_spec = obj.get("memory_spec").cloned().unwrap_or_else(|| json!({}));
        let m = Obj::new(&memory_spec, "config.memory_spec")?;
        m.only(&["type", "capacity"])?;
        if !matches!(m.kind("replay").as_str(), "replay" | "replaymemory") {
            return Err(config(
                "config.memory_spec.type",
                "SAC replays uniformly: use replay".into(),
            ));
        }
        if let Some(o) = obj.get("observe_spec") {
            Obj::new(o, "config.observe_spec")?.only(&["buffer_size"])?;
        }
        let optimizer_json = obj
            .get("optimizer_spec")
            .cloned()
            .unwrap_or_else(|| json!({"type": "adam", "learning_rate": 0.0003}));
        let vf_json = obj
            .get("value_function_optimizer_spec")
            .cloned()
            .unwrap_or(optimizer_json.clone());
        Ok(SacConfig {
            device,
            network_spec,
            value_function_spec,
            preprocessing_spec: obj.list("preprocessing_spec")?,
            capacity: m.positive("capacity", 1000)?,
            discount: obj.num("discount", 0.99)?,
            initial_alpha: obj.num("initial_alpha", 1.0)?,
            gumbel_softmax_temperature: obj.num("gumbel_softmax_temperature", 1.0)?,
            target_entropy: obj
                .get("target_entropy")
                .map(|_| obj.num("target_entropy", 0.0))
                .transpose()?,
            update: UpdateSpec::parse(obj.get("update_spec"), "config.update_spec")?,
            optimizer: OptimizerSpec::parse(&optimizer_json, "config.optimizer_spec")?,
            value_function_optimizer: OptimizerSpec::parse(&vf_json, "config.value_function_optimizer_spec")?,
        })
    }
}
