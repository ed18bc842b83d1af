//! `DqnConfig`: RLgraph's DQN agent config (`{"type": "dqn", "network_spec": [...], ...}`)
//! read with RLgraph's defaults; keys not yet supported are errors that name them.

use rlgraph_components::{OptimizerSpec, TimeDependent};
use rlgraph_core::Result;
use serde_json::{json, Map, Value as Json};

use crate::agent::{config, UpdateSpec};

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
    /// `network_spec`: the layer specs.
    pub network_spec: Vec<Json>,
    /// `preprocessing_spec`: the preprocessor specs (may be empty).
    pub preprocessing_spec: Vec<Json>,
    /// Dueling Q heads (`policy_spec.type == "dueling-policy"` or `dueling_q`).
    pub dueling: bool,
    /// Units of the dueling state-value stream.
    pub units_state_value_stream: usize,
    /// Replay memory kind.
    pub memory: MemoryKind,
    /// Replay capacity.
    pub capacity: usize,
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
    /// The update schedule.
    pub update: UpdateSpec,
    /// The optimizer.
    pub optimizer: OptimizerSpec,
}

const KEYS: [&str; 17] = [
    "type",
    "network_spec",
    "preprocessing_spec",
    "policy_spec",
    "memory_spec",
    "exploration_spec",
    "observe_spec",
    "update_spec",
    "optimizer_spec",
    "discount",
    "double_q",
    "dueling_q",
    "huber_loss",
    "n_step",
    "execution_spec",
    "summary_spec",
    "saver_spec",
];

fn object<'a>(j: &'a Json, at: &str) -> Result<&'a Map<String, Json>> {
    j.as_object()
        .ok_or_else(|| config(at, format!("expected a JSON object, got {j}")))
}

fn only(obj: &Map<String, Json>, at: &str, keys: &[&str]) -> Result<()> {
    match obj.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(config(
            &format!("{at}.{k}"),
            format!("not yet supported (supported here: {})", keys.join(", ")),
        )),
        None => Ok(()),
    }
}

impl DqnConfig {
    /// Parses an RLgraph DQN config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let obj = object(spec, "config")?;
        let kind = obj.get("type").and_then(Json::as_str).unwrap_or("dqn");
        if !matches!(kind.to_lowercase().replace(['-', '_'], "").as_str(), "dqn" | "dqnagent") {
            return Err(config(
                "config.type",
                format!("{kind:?}: only DQN agents are built so far"),
            ));
        }
        only(obj, "config", &KEYS)?;
        let num = |key: &str, default: f64| -> Result<f64> {
            match obj.get(key) {
                None => Ok(default),
                Some(v) => v
                    .as_f64()
                    .ok_or_else(|| config(&format!("config.{key}"), format!("expected a number, got {v}"))),
            }
        };
        let flag = |key: &str, default: bool| -> Result<bool> {
            match obj.get(key) {
                None => Ok(default),
                Some(v) => v
                    .as_bool()
                    .ok_or_else(|| config(&format!("config.{key}"), format!("expected true or false, got {v}"))),
            }
        };
        for key in ["execution_spec", "summary_spec", "saver_spec"] {
            if let Some(v) = obj.get(key) {
                let o = object(v, &format!("config.{key}"))?;
                if let Some(k) = o.keys().next() {
                    return Err(config(&format!("config.{key}.{k}"), "not yet supported".into()));
                }
            }
        }
        let list = |key: &str| -> Result<Vec<Json>> {
            match obj.get(key) {
                None => Ok(vec![]),
                Some(Json::Array(a)) => Ok(a.clone()),
                Some(other) => Err(config(
                    &format!("config.{key}"),
                    format!("expected a list of specs, got {other}"),
                )),
            }
        };
        let network_spec = list("network_spec")?;
        if network_spec.is_empty() {
            return Err(config("config.network_spec", "missing; a DQN needs a network".into()));
        }
        let mut dueling = flag("dueling_q", false)?;
        let mut units_state_value_stream = 128;
        if let Some(p) = obj.get("policy_spec") {
            let p = object(p, "config.policy_spec")?;
            only(p, "config.policy_spec", &["type", "units_state_value_stream"])?;
            match p
                .get("type")
                .and_then(Json::as_str)
                .map(|t| t.to_lowercase().replace(['-', '_'], ""))
            {
                Some(t) if t == "duelingpolicy" => dueling = true,
                Some(t) if t == "policy" => {}
                None => {}
                Some(t) => return Err(config("config.policy_spec.type", format!("{t:?} is not a DQN policy"))),
            }
            if let Some(u) = p.get("units_state_value_stream") {
                units_state_value_stream = u.as_u64().filter(|&u| u > 0).ok_or_else(|| {
                    config(
                        "config.policy_spec.units_state_value_stream",
                        format!("expected a positive integer, got {u}"),
                    )
                })? as usize;
            }
        }
        let memory_spec = obj.get("memory_spec").cloned().unwrap_or_else(|| json!({}));
        let m = object(&memory_spec, "config.memory_spec")?;
        only(m, "config.memory_spec", &["type", "capacity", "alpha", "beta"])?;
        let capacity = match m.get("capacity") {
            None => 1000,
            Some(c) => c.as_u64().filter(|&c| c > 0).ok_or_else(|| {
                config(
                    "config.memory_spec.capacity",
                    format!("expected a positive integer, got {c}"),
                )
            })? as usize,
        };
        let mem_type = m
            .get("type")
            .and_then(Json::as_str)
            .unwrap_or("replay")
            .to_lowercase()
            .replace(['-', '_'], "");
        let memory = match mem_type.as_str() {
            "replay" | "replaymemory" => MemoryKind::Replay,
            "prioritizedreplay" | "memprioritizedreplay" => MemoryKind::Prioritized {
                alpha: m.get("alpha").and_then(Json::as_f64).unwrap_or(1.0),
                beta: m.get("beta").and_then(Json::as_f64).unwrap_or(0.0),
            },
            other => {
                return Err(config(
                    "config.memory_spec.type",
                    format!("{other:?}: use replay or prioritized_replay"),
                ))
            }
        };
        let epsilon = match obj.get("exploration_spec") {
            None => TimeDependent::parse(&json!(["linear", 1.0, 0.05]), "config.exploration_spec")?,
            Some(e) => {
                let eo = object(e, "config.exploration_spec")?;
                only(eo, "config.exploration_spec", &["epsilon_spec", "type"])?;
                let eps = eo
                    .get("epsilon_spec")
                    .ok_or_else(|| config("config.exploration_spec.epsilon_spec", "missing".into()))?;
                let epso = object(eps, "config.exploration_spec.epsilon_spec")?;
                only(epso, "config.exploration_spec.epsilon_spec", &["decay_spec"])?;
                let decay = epso
                    .get("decay_spec")
                    .ok_or_else(|| config("config.exploration_spec.epsilon_spec.decay_spec", "missing".into()))?;
                TimeDependent::parse(decay, "config.exploration_spec.epsilon_spec.decay_spec")?
            }
        };
        if let Some(o) = obj.get("observe_spec") {
            let oo = object(o, "config.observe_spec")?;
            only(oo, "config.observe_spec", &["buffer_size", "n_step"])?;
        }
        let n_step = obj
            .get("observe_spec")
            .and_then(|o| o.get("n_step"))
            .or_else(|| obj.get("n_step"))
            .map(|n| {
                n.as_u64()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| config("config.n_step", format!("expected a positive integer, got {n}")))
            })
            .transpose()?
            .unwrap_or(1) as usize;
        let optimizer = OptimizerSpec::parse(
            obj.get("optimizer_spec")
                .unwrap_or(&json!({"type": "adam", "learning_rate": 0.001})),
            "config.optimizer_spec",
        )?;
        Ok(DqnConfig {
            network_spec,
            preprocessing_spec: list("preprocessing_spec")?,
            dueling,
            units_state_value_stream,
            memory,
            capacity,
            epsilon,
            discount: num("discount", 0.98)?,
            double_q: flag("double_q", true)?,
            huber_loss: flag("huber_loss", false)?,
            n_step,
            update: UpdateSpec::parse(obj.get("update_spec"), "config.update_spec")?,
            optimizer,
        })
    }
}
