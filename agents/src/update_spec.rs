//! RLgraph's `update_spec`: when a worker calls `update`, how big a batch is, and how often
//! target networks sync; read through serde with RLgraph's defaults.

use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer};

use crate::bounded_numbers::Positive;

/// What `update_interval` and `steps_before_update` count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpdateMode {
    /// Environment steps, summed over vector copies (RLgraph's `time_steps`).
    TimeSteps,
    /// Finished episodes (RLgraph's `episodes`).
    Episodes,
}

/// RLgraph's `update_spec`: when a worker calls `update`, and how often targets sync.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateSpec {
    /// What the intervals count.
    pub update_mode: UpdateMode,
    /// Whether to update at all.
    pub do_updates: bool,
    /// Update every this many environment steps (or episodes, see `update_mode`).
    pub update_interval: u64,
    /// No updates before this many environment steps.
    pub steps_before_update: u64,
    /// Updates per update round.
    pub update_steps: u64,
    /// Records per update.
    pub batch_size: usize,
    /// Sync the target network every this many environment steps.
    pub sync_interval: u64,
    /// Target sync rate: 1.0 copies, less moves the target by this share (soft updates).
    pub sync_tau: f64,
    /// Gradient steps per update (PPO's minibatch iterations).
    pub num_iterations: u64,
    /// Records per gradient step within an update (PPO's minibatch size; `None`: the batch).
    pub sample_size: Option<usize>,
}

impl Default for UpdateSpec {
    /// RLgraph's defaults.
    fn default() -> Self {
        UpdateSpecKeys::default().resolve()
    }
}

/// `update_spec` as written: every key optional, unknown keys refused.
#[derive(Clone, Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateSpecKeys {
    /// What `update_interval` and `steps_before_update` count: `time_steps` or `episodes`.
    pub update_mode: Option<UpdateMode>,
    /// Whether to learn at all.
    pub do_updates: Option<bool>,
    /// Steps between updates (default 4).
    pub update_interval: Option<Positive>,
    /// Steps before the first update (default the batch size).
    pub steps_before_update: Option<u64>,
    /// Updates each `update_interval` (default 1).
    pub update_steps: Option<Positive>,
    /// Records per update (default 64).
    pub batch_size: Option<Positive>,
    /// Steps between target-network syncs (default 32).
    pub sync_interval: Option<Positive>,
    /// The target sync rate: 1 copies, less blends (default 1).
    pub sync_tau: Option<SyncTau>,
    /// Passes over each batch (PPO's epochs; default 1).
    pub num_iterations: Option<Positive>,
    /// Records per gradient step within an update (PPO's minibatch; the batch by default).
    pub sample_size: Option<Positive>,
}

impl UpdateSpecKeys {
    /// The schedule, with RLgraph's default for every key left out.
    pub fn resolve(&self) -> UpdateSpec {
        let count = |k: Option<Positive>, default: u64| k.map_or(default, |n| n.0 as u64);
        let batch_size = self.batch_size.map_or(64, |n| n.0);
        UpdateSpec {
            update_mode: self.update_mode.unwrap_or(UpdateMode::TimeSteps),
            do_updates: self.do_updates.unwrap_or(true),
            update_interval: count(self.update_interval, 4),
            steps_before_update: self.steps_before_update.unwrap_or(batch_size as u64),
            update_steps: count(self.update_steps, 1),
            batch_size,
            sync_interval: count(self.sync_interval, 32),
            sync_tau: self.sync_tau.map_or(1.0, |t| t.0),
            num_iterations: count(self.num_iterations, 1),
            sample_size: self.sample_size.map(|n| n.0),
        }
    }
}

/// A target sync rate in (0, 1].
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncTau(f64);

impl<'de> Deserialize<'de> for SyncTau {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let tau = f64::deserialize(d)?;
        if tau > 0.0 && tau <= 1.0 {
            Ok(SyncTau(tau))
        } else {
            Err(D::Error::invalid_value(Unexpected::Float(tau), &"a number in (0, 1]"))
        }
    }
}

crate::bounded_numbers::inline_schema!(SyncTau, "SyncTau", {"type": "number", "exclusiveMinimum": 0, "maximum": 1});
