//! The `Agent` trait workers drive, the transitions they observe, and RLgraph's update
//! schedule.

use rlgraph_core::spaces::Value;
use rlgraph_core::{CoreError, Result};
use serde_json::Value as Json;

/// One environment step as an agent observes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The observation the action was taken from.
    pub state: Value,
    /// The action.
    pub action: Value,
    /// The reward.
    pub reward: f64,
    /// The episode reached a terminal state (no bootstrap past it).
    pub terminated: bool,
    /// The episode was cut by a time limit (bootstrap past it is valid, the episode ends).
    pub truncated: bool,
    /// The observation after the action (the episode's last one when it ended).
    pub next_state: Value,
}

/// RLgraph's `update_spec`: when a worker calls `update`, and how often targets sync.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateSpec {
    /// Whether to update at all.
    pub do_updates: bool,
    /// Update every this many environment steps (summed over vector copies).
    pub update_interval: u64,
    /// No updates before this many environment steps.
    pub steps_before_update: u64,
    /// Updates per update round.
    pub update_steps: u64,
    /// Records per update.
    pub batch_size: usize,
    /// Sync the target network every this many environment steps.
    pub sync_interval: u64,
}

impl UpdateSpec {
    /// Parses `update_spec` (RLgraph's keys and defaults; `update_mode` must be
    /// `time_steps`).
    pub fn parse(spec: Option<&Json>, at: &str) -> Result<Self> {
        let empty = serde_json::Map::new();
        let obj = match spec {
            None => &empty,
            Some(Json::Object(o)) => o,
            Some(other) => return Err(config(at, format!("expected an object, got {other}"))),
        };
        const KEYS: [&str; 7] = [
            "update_mode",
            "do_updates",
            "update_interval",
            "steps_before_update",
            "update_steps",
            "batch_size",
            "sync_interval",
        ];
        if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(config(
                &format!("{at}.{k}"),
                format!("unknown key; known: {}", KEYS.join(", ")),
            ));
        }
        let count = |k: &str, default: u64| -> Result<u64> {
            match obj.get(k) {
                None => Ok(default),
                Some(v) => v
                    .as_u64()
                    .filter(|&n| n > 0 || k == "steps_before_update")
                    .ok_or_else(|| config(&format!("{at}.{k}"), format!("expected a positive integer, got {v}"))),
            }
        };
        if let Some(mode) = obj.get("update_mode") {
            if mode.as_str() != Some("time_steps") {
                return Err(config(
                    &format!("{at}.update_mode"),
                    format!("{mode} is not yet supported; use \"time_steps\""),
                ));
            }
        }
        let batch_size = count("batch_size", 64)?;
        Ok(UpdateSpec {
            do_updates: match obj.get("do_updates") {
                None => true,
                Some(v) => v
                    .as_bool()
                    .ok_or_else(|| config(&format!("{at}.do_updates"), format!("expected true or false, got {v}")))?,
            },
            update_interval: count("update_interval", 4)?,
            steps_before_update: count("steps_before_update", batch_size)?,
            update_steps: count("update_steps", 1)?,
            batch_size: batch_size as usize,
            sync_interval: count("sync_interval", 32)?,
        })
    }
}

pub(crate) fn config(at: &str, reason: String) -> CoreError {
    CoreError::Config { at: at.into(), reason }
}

/// What a worker needs from an agent.
pub trait Agent {
    /// One action per state (states from one environment copy each). `time_percentage`
    /// (0 to 1, the share of the run done) drives time-dependent parameters such as epsilon.
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>>;
    /// Records a transition of environment copy `env_id`.
    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()>;
    /// One update from memory; `None` when the memory holds too few records yet.
    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>>;
    /// When to update.
    fn update_spec(&self) -> &UpdateSpec;
}
