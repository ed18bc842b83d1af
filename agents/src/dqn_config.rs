//! `DqnConfig`: RLgraph's DQN agent config (`{"type": "dqn", "network_spec": [...], ...}`)
//! (and Ape-X's, `{"type": "apex", ...}`) read with RLgraph's defaults; keys not yet supported are errors that name them.

use rlgraph_components::{OptimizerSpec, TimeDependent};
use rlgraph_core::{Device, Result};
use serde_json::{json, Value as Json};

use crate::agent::{config, UpdateSpec};
use crate::config_reader::Obj;

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
    /// Ape-X: new records enter prioritized replay at their own TD error rather than at
    /// the largest priority seen.
    pub worker_side_priorities: bool,
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

impl DqnConfig {
    /// Parses an RLgraph DQN config (`type` `dqn`, or `apex` for Ape-X: prioritized replay
    /// with alpha 0.6 and beta 0.4 by default, and priorities computed as records arrive).
    pub fn parse(spec: &Json) -> Result<Self> {
        let obj = Obj::new(spec, "config")?;
        let apex = match obj.kind("dqn").as_str() {
            "dqn" | "dqnagent" => false,
            "apex" | "apexagent" => true,
            other => {
                return Err(config(
                    "config.type",
                    format!("{other:?} is not a DQN agent (dqn or apex)"),
                ))
            }
        };
        obj.only(&KEYS)?;
        let device = obj.execution_device()?;
        let network_spec = obj.list("network_spec")?;
        if network_spec.is_empty() {
            return Err(config("config.network_spec", "missing; a DQN needs a network".into()));
        }
        let mut dueling = obj.flag("dueling_q", false)?;
        let mut units_state_value_stream = 128;
        if let Some(p) = obj.get("policy_spec") {
            let p = Obj::new(p, "config.policy_spec")?;
            p.only(&["type", "units_state_value_stream"])?;
            match p.kind("policy").as_str() {
                "duelingpolicy" => dueling = true,
                "policy" => {}
                t => return Err(config("config.policy_spec.type", format!("{t:?} is not a DQN policy"))),
            }
            units_state_value_stream = p.positive("units_state_value_stream", 128)?;
        }
        let memory_spec = obj.get("memory_spec").cloned().unwrap_or_else(|| json!({}));
        let m = Obj::new(&memory_spec, "config.memory_spec")?;
        m.only(&["type", "capacity", "alpha", "beta"])?;
        let capacity = m.positive("capacity", 1000)?;
        let memory = match m.kind(if apex { "prioritized_replay" } else { "replay" }).as_str() {
            "replay" | "replaymemory" => MemoryKind::Replay,
            "prioritizedreplay" | "memprioritizedreplay" => MemoryKind::Prioritized {
                alpha: m.num("alpha", if apex { 0.6 } else { 1.0 })?,
                beta: m.num("beta", if apex { 0.4 } else { 0.0 })?,
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
        let epsilon = match obj.get("exploration_spec") {
            None => TimeDependent::parse(&json!(["linear", 1.0, 0.05]), "config.exploration_spec")?,
            Some(e) => {
                let eo = Obj::new(e, "config.exploration_spec")?;
                eo.only(&["epsilon_spec", "type"])?;
                let eps = eo
                    .get("epsilon_spec")
                    .ok_or_else(|| config("config.exploration_spec.epsilon_spec", "missing".into()))?;
                let epso = Obj::new(eps, "config.exploration_spec.epsilon_spec")?;
                epso.only(&["decay_spec"])?;
                let decay = epso
                    .get("decay_spec")
                    .ok_or_else(|| config("config.exploration_spec.epsilon_spec.decay_spec", "missing".into()))?;
                TimeDependent::parse(decay, "config.exploration_spec.epsilon_spec.decay_spec")?
            }
        };
        let mut n_step = obj.positive("n_step", 1)?;
        if let Some(o) = obj.get("observe_spec") {
            let oo = Obj::new(o, "config.observe_spec")?;
            oo.only(&["buffer_size", "n_step"])?;
            n_step = oo.positive("n_step", n_step)?;
        }
        let optimizer = OptimizerSpec::parse(
            obj.get("optimizer_spec")
                .unwrap_or(&json!({"type": "adam", "learning_rate": 0.001})),
            "config.optimizer_spec",
        )?;
        Ok(DqnConfig {
            device,
            network_spec,
            preprocessing_spec: obj.list("preprocessing_spec")?,
            dueling,
            units_state_value_stream,
            memory,
            capacity,
            epsilon,
            discount: obj.num("discount", 0.98)?,
            double_q: obj.flag("double_q", true)?,
            huber_loss: obj.flag("huber_loss", false)?,
            n_step,
            worker_side_priorities: apex,
            update: UpdateSpec::parse(obj.get("update_spec"), "config.update_spec")?,
            optimizer,
        })
    }
}
