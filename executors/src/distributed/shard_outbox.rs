//! An Ape-X actor's records on their way to the replay shards: a bounded queue of insert
//! batches sent round robin and retried with backoff while no shard answers. It is flushed
//! whenever the actor steps and also while the learner holds the actor paused: the learner
//! may be waiting for exactly these records before it can learn and let the actor go on.

use std::collections::VecDeque;

use tokio::runtime::Runtime;

use super::access::Access;
use super::cluster::{ClusterSpec, Role};
use super::error::DistributedError;
use super::learner_link::Backoff;
use super::peers::{call_failed, replay_client, ReplayClient};
use super::proto::InsertRequest;

/// Insert batches waiting for a shard, and what became of those already handled.
pub(crate) struct ShardOutbox {
    shards: Vec<(String, ReplayClient)>,
    next_shard: usize,
    queue: VecDeque<InsertRequest>,
    limit: usize,
    backoff: Backoff,
    tag: String,
    /// Records the shards accepted.
    pub(crate) sent: u64,
    /// Records dropped from a full queue or refused by a shard.
    pub(crate) dropped: u64,
}

impl ShardOutbox {
    /// An empty outbox for the cluster's replay shards, with clients made on `runtime`, that
    /// keeps at most `limit` batches; `tag` names the actor in messages.
    pub(crate) fn connect(
        cluster: &ClusterSpec,
        access: &Access,
        runtime: &Runtime,
        limit: usize,
        tag: &str,
    ) -> Result<Self, DistributedError> {
        let _inside = runtime.enter();
        let shards = (0..cluster.replay.len())
            .map(|i| {
                let addr = cluster.endpoint(Role::Replay, i)?;
                let client = replay_client(&addr, access)?;
                Ok((addr, client))
            })
            .collect::<Result<Vec<_>, DistributedError>>()?;
        if shards.is_empty() {
            return Err(DistributedError::Setup(
                "Ape-X needs at least one replay shard in the cluster spec".into(),
            ));
        }
        Ok(ShardOutbox {
            shards,
            next_shard: 0,
            queue: VecDeque::new(),
            limit,
            backoff: Backoff::new(),
            tag: tag.to_string(),
            sent: 0,
            dropped: 0,
        })
    }

    /// Records queued and not yet taken by a shard.
    pub(crate) fn queued_records(&self) -> u64 {
        self.queue.iter().map(records_in).sum()
    }

    /// Queues `batch`, dropping the oldest batches beyond the limit.
    pub(crate) fn push(&mut self, batch: InsertRequest) {
        self.queue.push_back(batch);
        while self.queue.len() > self.limit {
            if let Some(dropped) = self.queue.pop_front() {
                self.dropped += records_in(&dropped);
            }
        }
    }

    /// Sends the queued batches in order, if the backoff allows a try; stops at the first
    /// batch no shard answers for. An error only for a refused token.
    pub(crate) fn flush(&mut self, runtime: &Runtime) -> Result<(), DistributedError> {
        if self.queue.is_empty() || !self.backoff.due() {
            return Ok(());
        }
        while let Some(batch) = self.queue.pop_front() {
            match self.insert(runtime, &batch) {
                Ok(()) => {
                    self.sent += records_in(&batch);
                    self.backoff.reset();
                }
                Err(e) if e.is_token_refusal() => return Err(e),
                Err(e @ DistributedError::Call { .. }) if !e.is_message_refusal() => {
                    self.queue.push_front(batch);
                    self.backoff.note(&self.tag, &e);
                    self.backoff.defer();
                    break;
                }
                // Records the shard refuses are dropped, not retried forever.
                Err(e) => {
                    super::log(&format!("{}: dropped a batch: {e}", self.tag));
                    self.dropped += records_in(&batch);
                }
            }
        }
        Ok(())
    }

    /// Sends `batch` to the next shard in turn, trying each shard once.
    fn insert(&mut self, runtime: &Runtime, batch: &InsertRequest) -> Result<(), DistributedError> {
        let mut last = None;
        for _ in 0..self.shards.len() {
            let i = self.next_shard;
            self.next_shard = (i + 1) % self.shards.len();
            let (addr, client) = &mut self.shards[i];
            match runtime.block_on(client.insert(batch.clone())) {
                Ok(_) => return Ok(()),
                Err(status) => {
                    let e = call_failed(addr, "Insert", status);
                    // A refused token or refused records: another shard would refuse them too.
                    if e.is_token_refusal() || e.is_message_refusal() {
                        return Err(e);
                    }
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| DistributedError::Setup("no replay shard".into())))
    }
}

/// Records in an insert request (the length of its first leaf).
fn records_in(batch: &InsertRequest) -> u64 {
    batch
        .records
        .as_ref()
        .and_then(|n| n.leaves.first())
        .and_then(|t| t.shape.first().copied())
        .unwrap_or(0)
}
