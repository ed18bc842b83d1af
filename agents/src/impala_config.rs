//! `ImpalaConfig`: RLgraph's IMPALA config (`{"type": "single-impala", ...}`) for the
//! single-process form, read with RLgraph's defaults; keys not yet supported are errors that
//! name them.

use rlgraph_components::OptimizerSpec;
use rlgraph_core::{Device, Result};
use serde_json::{json, Value as Json};

use crate::agent::{config, UpdateSpec};
use crate::config_reader::Obj;

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
    /// The update schedule; `batch_size` counts rollouts.
    pub update: UpdateSpec,
    /// The optimizer.
    pub optimizer: OptimizerSpec,
}

const KEYS: [&str; 21] = [
    "type",
    "network_spec",
    "value_function_spec",
    "preprocessing_spec",
    "worker_sample_size",
    "fifo_queue_spec",
    "num_workers",
    "visualize",
    "feed_previous_action_through_nn",
    "feed_previous_reward_through_nn",
    "discount",
    "weight_pg",
    "weight_vf",
    "weight_entropy",
    "update_spec",
    "optimizer_spec",
    "execution_spec",
    "summary_spec",
    "saver_spec",
    "environment_spec",
    "observe_spec",
];

/// A layer list, also in RLgraph's `{"layers": [...], "scope": ...}` form.
fn layers(obj: &Obj<'_>, key: &str) -> Result<Vec<Json>> {
    match obj.get(key) {
        Some(Json::Object(_)) => {
            let path = obj.path(key);
            let inner = Obj::new(&obj.map[key], &path)?;
            inner.only(&["layers", "scope"])?;
            inner.list("layers")
        }
        _ => obj.list(key),
    }
}

impl ImpalaConfig {
    /// Parses an RLgraph IMPALA config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let obj = Obj::new(spec, "config")?;
        if !matches!(
            obj.kind("").as_str(),
            "impala" | "singleimpala" | "impalaagent" | "singleimpalaagent"
        ) {
            return Err(config("config.type", "not an IMPALA agent (single-impala)".into()));
        }
        obj.only(&KEYS)?;
        let device = obj.execution_device()?;
        if obj.positive("num_workers", 1)? != 1 {
            return Err(config(
                "config.num_workers",
                "single-process IMPALA acts through the worker's environment copies; set 1 and use --num-envs".into(),
            ));
        }
        if obj.get("environment_spec").is_some() {
            return Err(config(
                "config.environment_spec",
                "the environment comes from the caller (--env), not the agent config".into(),
            ));
        }
        for key in ["feed_previous_action_through_nn", "feed_previous_reward_through_nn"] {
            if obj.flag(key, false)? {
                return Err(config(
                    &obj.path(key),
                    "needs recurrent networks, not yet supported".into(),
                ));
            }
        }
        if obj
            .get("visualize")
            .is_some_and(|v| v.as_bool() != Some(false) && v.as_u64() != Some(0))
        {
            return Err(config("config.visualize", "rendering is not supported".into()));
        }
        let network_spec = layers(&obj, "network_spec")?;
        if network_spec.is_empty() {
            return Err(config(
                "config.network_spec",
                "missing; a policy needs a network".into(),
            ));
        }
        let queue = obj.get("fifo_queue_spec").cloned().unwrap_or_else(|| json!({}));
        let q = Obj::new(&queue, "config.fifo_queue_spec")?;
        q.only(&["type", "capacity"])?;
        if let Some(o) = obj.get("observe_spec") {
            Obj::new(o, "config.observe_spec")?.only(&["buffer_size"])?;
        }
        let mut update = UpdateSpec::parse(obj.get("update_spec"), "config.update_spec")?;
        // The learner looks for full batches after every step; rollouts wait in the queue.
        if obj.get("update_spec").and_then(|u| u.get("update_interval")).is_none() {
            update.update_interval = 1;
        }
        if obj
            .get("update_spec")
            .and_then(|u| u.get("steps_before_update"))
            .is_none()
        {
            update.steps_before_update = 0;
        }
        let optimizer_json = obj
            .get("optimizer_spec")
            .cloned()
            .unwrap_or_else(|| json!({"type": "adam", "learning_rate": 0.0005}));
        Ok(ImpalaConfig {
            device,
            network_spec,
            value_function_spec: layers(&obj, "value_function_spec")?,
            preprocessing_spec: obj.list("preprocessing_spec")?,
            rollout_length: obj.positive("worker_sample_size", 50)?,
            queue_capacity: q.positive("capacity", 1)?.max(update.batch_size),
            discount: obj.num("discount", 0.99)?,
            weight_pg: obj.num("weight_pg", 1.0)?,
            weight_vf: obj.num("weight_vf", 0.5)?,
            weight_entropy: obj.num("weight_entropy", 0.01)?,
            update,
            optimizer: OptimizerSpec::parse(&optimizer_json, "config.optimizer_spec")?,
        })
    }
}
