//! What an actor of a distributed run is told (its index, environments, how often it syncs
//! and reports) and what it tells back when the run ends.

use std::time::Duration;

use serde_json::Value as Json;

/// How an actor runs.
#[derive(Clone, Debug)]
pub struct ActorOptions {
    /// The actor's index in the cluster (seeds and shard order derive from it).
    pub index: u32,
    /// The environment id (`rlgraph_envs::make`).
    pub env: String,
    /// The run's seed.
    pub seed: u64,
    /// Environment copies this actor steps.
    pub num_envs: usize,
    /// Steps between weight pulls (RLgraph's `weight_sync_steps`).
    pub weight_sync_steps: u64,
    /// Records per insert (RLgraph's `num_worker_samples`).
    pub records_per_insert: usize,
    /// Batches kept while no shard answers; the oldest is dropped beyond this.
    pub outbox_limit: usize,
    /// The actor reports its progress to the learner after this many frames, or after
    /// `report_interval`, whichever comes first.
    pub report_frames: u64,
    /// See `report_frames`.
    pub report_interval: Duration,
    /// How long the actor goes on without any answer from the learner before it gives up.
    pub give_up: Duration,
    /// The preprocessing each environment copy runs before the actor sees its states (the
    /// frame stack of [`agents::WorkerLayout::worker_specs`]); `None`: states as they come.
    pub worker_specs: Option<Vec<Json>>,
}

impl ActorOptions {
    /// Options with RLgraph's Ape-X executor defaults for actor `index` on `env`.
    pub fn new(index: u32, env: &str, seed: u64) -> Self {
        ActorOptions {
            index,
            env: env.to_string(),
            seed,
            num_envs: 1,
            weight_sync_steps: 100,
            records_per_insert: 50,
            outbox_limit: 256,
            report_frames: 50,
            report_interval: Duration::from_millis(250),
            give_up: Duration::from_secs(60),
            worker_specs: None,
        }
    }
}

/// What an actor did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActorSummary {
    /// Environment frames stepped.
    pub frames: u64,
    /// Records (n-step transitions for replay shards, or rollouts) made from those frames: each one
    /// ends sent, dropped or unsent, so `records_made = records_sent + records_dropped +
    /// records_unsent`.
    pub records_made: u64,
    /// Records still on hand when the run ended (a partial insert batch, an outbox no shard
    /// took before the end).
    pub records_unsent: u64,
    /// Records the shards accepted, or rollouts the learner queued.
    pub records_sent: u64,
    /// Records (or rollouts) dropped from a full outbox or refused.
    pub records_dropped: u64,
    /// Weight snapshots loaded.
    pub weight_loads: u64,
    /// The first weight version loaded (a restarted actor starts from the learner's current
    /// one, not from the first).
    pub first_version: u64,
    /// The last weight version loaded.
    pub version: u64,
    /// Outages of the learner this actor came back from (a call answered after one was not).
    pub reconnects: u64,
}
