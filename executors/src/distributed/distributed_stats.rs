//! What a distributed learner reports at the end of a leg: RLgraph's worker statistics and
//! what distribution adds (rates, latency, weight lag, the shards' counters).

use serde_json::{json, Value as Json};

use super::proto::ShardStats;
use crate::worker_stats::WorkerStats;

/// The learner's summary of a distributed run: RLgraph's worker statistics and what
/// distribution adds.
#[derive(Clone, Debug)]
pub struct DistributedStats {
    /// RLgraph's statistics over every actor's episodes.
    pub worker: WorkerStats,
    /// Updates per second of the learner's run.
    pub updates_per_second: f64,
    /// Mean time from a sample request to its batch arriving, in milliseconds.
    pub mean_sample_latency_ms: f64,
    /// Mean weight lag over the actors' reports, in the learner's updates since the weights
    /// they acted with were published.
    pub mean_weight_lag: f64,
    /// Priority updates dropped because a shard's queue was full.
    pub priority_updates_dropped: u64,
    /// The updates the learner had done when it resumed from a checkpoint, if it did.
    pub resumed_at_update: Option<u64>,
    /// Actors that reported.
    pub actors: usize,
    /// Each replay shard's counters at the end (none where actors stream rollouts).
    pub shards: Vec<ShardStats>,
    /// Rollouts the learner refused as malformed (where actors stream them).
    pub rollouts_refused: u64,
    /// Whether the learner was asked to end (SIGTERM) before the run was over: it saved and
    /// left the actors and shards running for the learner that resumes it.
    pub preempted: bool,
}

impl DistributedStats {
    /// The statistics as JSON: the worker's keys and a `distributed` section.
    pub fn to_json(&self) -> Json {
        let mut j = self.worker.to_json();
        j["distributed"] = json!({
            "actors": self.actors,
            "updates_per_second": self.updates_per_second,
            "mean_sample_latency_ms": self.mean_sample_latency_ms,
            "mean_weight_lag_updates": self.mean_weight_lag,
            "priority_updates_dropped": self.priority_updates_dropped,
            "resumed_at_update": self.resumed_at_update,
            "rollouts_refused": self.rollouts_refused,
            "preempted": self.preempted,
            "shards": self.shards.iter().map(|s| json!({
                "records": s.size,
                "records_inserted": s.records_inserted,
                "batches_sampled": s.batches_sampled,
                "priority_updates": s.priority_updates,
                "refused": s.refused,
                "stale_updates": s.stale_updates,
            })).collect::<Vec<_>>(),
        });
        j
    }
}
