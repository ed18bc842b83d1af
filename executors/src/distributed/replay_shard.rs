//! A replay shard: a prioritized (or uniform) replay memory behind gRPC. Actors insert
//! records with their priorities; the learner samples batches and sends new priorities back.
//! Every message is checked against the record space before anything is stored, so a bad
//! one is refused by name and nothing held is lost.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents::Replay;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::Space;
use rlgraph_core::{HostState, SavedState};
use tokio::sync::Notify;
use tonic::{Request, Response, Status};

use super::error::DistributedError;
use super::metrics::{Metric, MetricsBoard};
use super::proto::replay_server;
use super::proto::{
    Ack, DescribeRequest, Description, InsertReply, InsertRequest, PriorityUpdate, SampleReply, SampleRequest,
    ShardStats, StatsRequest, StopRequest,
};
use super::wire::{decode_value, describe, encode_value};

/// The memory and the random source it samples with, under one lock.
struct Held {
    replay: Box<dyn Replay>,
    rng: ChaCha8Rng,
}

/// The name of the counters' part in a shard's file.
const COUNTERS: &str = "counters";

/// A shard's counters as its file keeps them, so a restarted shard counts on: records
/// inserted, batches sampled, priority updates, refusals, stale updates, and nanoseconds
/// spent sampling.
#[derive(Default)]
struct ShardCounters([u64; 6]);

const COUNTER_NAMES: [&str; 6] = [
    "records_inserted",
    "batches_sampled",
    "priority_updates",
    "refused",
    "stale_updates",
    "sample_nanos",
];

impl ShardCounters {
    fn parse(state: &SavedState) -> rlgraph_core::Result<Self> {
        let mut values = [0u64; 6];
        for (value, name) in values.iter_mut().zip(COUNTER_NAMES) {
            *value = state
                .meta
                .get(name)
                .and_then(serde_json::Value::as_u64)
                .ok_or_else(|| rlgraph_core::CoreError::Checkpoint {
                    path: "(replay shard counters)".into(),
                    reason: format!("{name} is missing or not a count"),
                })?;
        }
        Ok(ShardCounters(values))
    }
}

impl HostState for ShardCounters {
    fn save_state(&self) -> rlgraph_core::Result<SavedState> {
        let meta: serde_json::Map<String, serde_json::Value> = COUNTER_NAMES
            .iter()
            .zip(self.0)
            .map(|(n, v)| (n.to_string(), v.into()))
            .collect();
        Ok(SavedState {
            tensors: Default::default(),
            meta: meta.into(),
        })
    }

    fn check_state(&self, state: &SavedState) -> rlgraph_core::Result<()> {
        Self::parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> rlgraph_core::Result<()> {
        *self = Self::parse(&state)?;
        Ok(())
    }
}

/// The replay shard service.
pub struct ReplayShard {
    held: Mutex<Held>,
    /// The records' space with its batch rank: what every insert must fit.
    records: Space,
    /// The largest batch a sample may ask for.
    max_batch: usize,
    /// The largest message the server takes or sends (set when it starts serving).
    pub(crate) max_message_bytes: usize,
    generation: u64,
    inserted: AtomicU64,
    sampled: AtomicU64,
    updates: AtomicU64,
    refused: AtomicU64,
    stale: AtomicU64,
    /// Nanoseconds spent drawing and encoding sampled batches.
    sample_nanos: AtomicU64,
    stop: Arc<Notify>,
    name: String,
    /// Where and how often the memory is saved.
    checkpoint: Option<(PathBuf, Duration)>,
    /// Where its metrics are shown, once it serves.
    board: Option<MetricsBoard>,
}

impl ReplayShard {
    /// A shard named `name` holding `replay`, whose records lie in `record_space` (one
    /// record, no batch rank); it samples with a ChaCha8 generator seeded by `seed`.
    /// `generation` tells this incarnation from earlier ones of the same shard.
    pub fn new(name: &str, replay: Box<dyn Replay>, record_space: &Space, seed: u64, generation: u64) -> Self {
        ReplayShard {
            held: Mutex::new(Held {
                replay,
                rng: ChaCha8Rng::seed_from_u64(seed),
            }),
            records: record_space.with_batch_rank(true),
            max_batch: 1 << 16,
            max_message_bytes: 0,
            generation,
            inserted: AtomicU64::new(0),
            sampled: AtomicU64::new(0),
            updates: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            stale: AtomicU64::new(0),
            sample_nanos: AtomicU64::new(0),
            stop: Arc::new(Notify::new()),
            name: name.to_string(),
            checkpoint: None,
            board: None,
        }
    }

    /// Saves the memory to `path` every `every` while serving, and when stopped; a shard
    /// restarted with [`ReplayShard::restore`] comes back with what it held at the last save.
    pub fn with_checkpoints(mut self, path: impl Into<PathBuf>, every: Duration) -> Self {
        self.checkpoint = Some((path.into(), every));
        self
    }

    /// Where and how often the shard saves its memory, if it does.
    pub fn checkpoints(&self) -> Option<(&Path, Duration)> {
        self.checkpoint.as_ref().map(|(p, d)| (p.as_path(), *d))
    }

    /// Loads the memory and the counters saved at `path`; `false` (and an empty memory) when
    /// there is no file there. A damaged file is an error and leaves the memory as it was. A
    /// file from before the counters were saved loads its memory, the counters at zero.
    pub fn restore(&mut self, path: &Path) -> Result<bool, DistributedError> {
        if !path.exists() {
            return Ok(false);
        }
        let held = self
            .held
            .get_mut()
            .map_err(|_| DistributedError::Setup("the replay memory's lock was poisoned".into()))?;
        let mut counters = ShardCounters::default();
        let with_counters = rlgraph_core::checkpoint::restore_host_states(
            path,
            &mut [("memory", held.replay.state_mut()), (COUNTERS, &mut counters)],
        );
        match with_counters {
            Ok(()) => {}
            // A file from before shards saved their counters: its memory alone. Any other
            // fault (a damaged counters part included) is the file's error.
            Err(e) if e.to_string().contains(&format!("no host state named {COUNTERS:?}")) => {
                rlgraph_core::checkpoint::restore_host_states(path, &mut [("memory", held.replay.state_mut())])?;
            }
            Err(e) => return Err(e.into()),
        }
        for (atomic, value) in self.counters().into_iter().zip(counters.0) {
            atomic.store(value, Ordering::Relaxed);
        }
        Ok(true)
    }

    /// Saves the memory and the counters to `path` (atomically: a shard killed while saving
    /// keeps its last good file).
    pub fn save(&self, path: &Path) -> Result<(), DistributedError> {
        let held = self
            .held
            .lock()
            .map_err(|_| DistributedError::Setup("the replay memory's lock was poisoned".into()))?;
        // Read under the memory's lock, as inserts count there: the file's count of records
        // inserted matches the records it holds.
        let counters = ShardCounters(self.counters().map(|a| a.load(Ordering::Relaxed)));
        rlgraph_core::checkpoint::save_host_states(path, &[("memory", held.replay.state()), (COUNTERS, &counters)])?;
        Ok(())
    }

    /// The counters its file keeps, in [`COUNTER_NAMES`]' order.
    fn counters(&self) -> [&AtomicU64; 6] {
        [
            &self.inserted,
            &self.sampled,
            &self.updates,
            &self.refused,
            &self.stale,
            &self.sample_nanos,
        ]
    }

    /// Records inserted over the shard's life, its earlier incarnations' included where it
    /// was restored.
    pub fn records_inserted(&self) -> u64 {
        self.inserted.load(Ordering::Relaxed)
    }

    /// The records held.
    pub fn size(&self) -> usize {
        self.held.lock().map_or(0, |h| h.replay.size())
    }

    /// The shard's metrics now, for a Prometheus scrape: records held, inserted, sampled
    /// batches and the time spent sampling, priority updates, refusals, stale updates.
    pub fn metrics(&self) -> Vec<Metric> {
        let s = self.stats_at(self.size() as u64);
        vec![
            Metric::gauge("rlgraph_replay_records", "Records the shard holds.", s.size as f64),
            Metric::counter(
                "rlgraph_replay_records_inserted_total",
                "Records inserted over the shard's life (a restored shard counts on from its file).",
                s.records_inserted as f64,
            ),
            Metric::counter(
                "rlgraph_replay_batches_sampled_total",
                "Batches sampled over the shard's life.",
                s.batches_sampled as f64,
            ),
            Metric::counter(
                "rlgraph_replay_sample_seconds_total",
                "Seconds spent drawing and encoding sampled batches (divide by the batches for the mean).",
                self.sample_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            ),
            Metric::counter(
                "rlgraph_replay_priority_updates_total",
                "Priority updates applied.",
                s.priority_updates as f64,
            ),
            Metric::counter(
                "rlgraph_replay_refused_total",
                "Messages refused (wrong space, shape or size).",
                s.refused as f64,
            ),
            Metric::counter(
                "rlgraph_replay_stale_updates_total",
                "Priority updates for an earlier incarnation, ignored.",
                s.stale_updates as f64,
            ),
        ]
    }

    /// The shard's counters now, holding `size` records: what `Stats` answers and the
    /// metrics show.
    fn stats_at(&self, size: u64) -> ShardStats {
        ShardStats {
            size,
            records_inserted: self.inserted.load(Ordering::Relaxed),
            batches_sampled: self.sampled.load(Ordering::Relaxed),
            priority_updates: self.updates.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            stale_updates: self.stale.load(Ordering::Relaxed),
            generation: self.generation,
        }
    }

    /// Shows the shard's metrics on `board` while it serves.
    pub fn with_metrics(mut self, board: MetricsBoard) -> Self {
        self.board = Some(board);
        self
    }

    /// The board its metrics go to, if any.
    pub(crate) fn metrics_board(&self) -> Option<&MetricsBoard> {
        self.board.as_ref()
    }

    /// Notified when a peer asks the shard to stop.
    pub fn stop_signal(&self) -> Arc<Notify> {
        self.stop.clone()
    }

    /// Counts and logs a refused message, and hands back the status to answer with.
    fn refuse(&self, method: &str, status: Status) -> Status {
        self.refused.fetch_add(1, Ordering::Relaxed);
        super::log(&format!("{}: refused {method}: {}", self.name, status.message()));
        status
    }

    fn held(&self) -> Result<std::sync::MutexGuard<'_, Held>, Status> {
        self.held
            .lock()
            .map_err(|_| Status::internal("the replay memory's lock was poisoned by an earlier failure"))
    }

    /// Stores the request's records and counts them; the memory's size after it.
    fn insert_checked(&self, req: &InsertRequest) -> Result<u64, Status> {
        let nest = req
            .records
            .as_ref()
            .ok_or_else(|| Status::invalid_argument("an insert carries no records"))?;
        let records = decode_value(nest, &self.records)?;
        let n = records
            .leaf_values()
            .first()
            .and_then(|leaf| leaf.shape())
            .and_then(|shape| shape.first().copied())
            .unwrap_or(0);
        let priorities = (!req.priorities.is_empty()).then_some(req.priorities.as_slice());
        let mut held = self.held()?;
        held.replay
            .insert(&records, priorities)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        // Counted under the lock, so a save sees the records and their count together.
        self.inserted.fetch_add(n as u64, Ordering::Relaxed);
        Ok(held.replay.size() as u64)
    }
}

#[tonic::async_trait]
impl replay_server::Replay for ReplayShard {
    async fn insert(&self, request: Request<InsertRequest>) -> Result<Response<InsertReply>, Status> {
        let req = request.into_inner();
        let size = self.insert_checked(&req).map_err(|s| self.refuse("Insert", s))?;
        Ok(Response::new(InsertReply { size }))
    }

    async fn sample(&self, request: Request<SampleRequest>) -> Result<Response<SampleReply>, Status> {
        let request = request.into_inner();
        let (batch_size, batches) = (request.batch_size as usize, request.batches.max(1) as usize);
        if batch_size == 0 || batch_size > self.max_batch {
            return Err(self.refuse(
                "Sample",
                Status::invalid_argument(format!("batch_size must be 1 to {}, got {batch_size}", self.max_batch)),
            ));
        }
        let n = batch_size.saturating_mul(batches);
        if n > self.max_batch {
            return Err(self.refuse(
                "Sample",
                Status::invalid_argument(format!(
                    "batch_size * batches must be at most {}, got {batch_size} * {batches}",
                    self.max_batch
                )),
            ));
        }
        let started = std::time::Instant::now();
        let sample = {
            let mut held = self.held()?;
            let size = held.replay.size();
            if size < n {
                return Ok(Response::new(SampleReply {
                    generation: self.generation,
                    size: size as u64,
                    ..SampleReply::default()
                }));
            }
            let Held { replay, rng } = &mut *held;
            (
                replay.sample(n, rng).map_err(|e| Status::internal(e.to_string()))?,
                size,
            )
        };
        let (s, size) = sample;
        let reply = SampleReply {
            records: Some(encode_value(&s.records)?),
            indices: s.indices.unwrap_or_default().into_iter().map(|i| i as u64).collect(),
            weights: s.weights.unwrap_or_default(),
            generation: self.generation,
            size: size as u64,
        };
        self.sampled.fetch_add(batches as u64, Ordering::Relaxed);
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.sample_nanos.fetch_add(nanos, Ordering::Relaxed);
        Ok(Response::new(reply))
    }

    async fn update_priorities(&self, request: Request<PriorityUpdate>) -> Result<Response<Ack>, Status> {
        let req = request.into_inner();
        if req.generation != self.generation {
            // Sampled from an earlier incarnation: its slots mean other records now.
            self.stale.fetch_add(u64::from(req.updates.max(1)), Ordering::Relaxed);
            return Ok(Response::new(Ack {}));
        }
        let indices: Vec<usize> = req
            .indices
            .iter()
            .map(|&i| usize::try_from(i).unwrap_or(usize::MAX))
            .collect();
        self.held()?
            .replay
            .update_priorities(&indices, &req.priorities)
            .map_err(|e| self.refuse("UpdatePriorities", Status::invalid_argument(e.to_string())))?;
        self.updates.fetch_add(u64::from(req.updates.max(1)), Ordering::Relaxed);
        Ok(Response::new(Ack {}))
    }

    async fn stats(&self, _: Request<StatsRequest>) -> Result<Response<ShardStats>, Status> {
        let size = self.held()?.replay.size() as u64;
        Ok(Response::new(self.stats_at(size)))
    }

    async fn stop(&self, _: Request<StopRequest>) -> Result<Response<Ack>, Status> {
        self.stop.notify_one();
        Ok(Response::new(Ack {}))
    }

    async fn describe(&self, _: Request<DescribeRequest>) -> Result<Response<Description>, Status> {
        // The records as inserts carry them: one record's space, the batch rank implied.
        let record = self.records.with_batch_rank(false);
        Ok(Response::new(describe(
            "replay",
            Some(&record),
            self.max_message_bytes,
            self.max_batch,
        )))
    }
}
