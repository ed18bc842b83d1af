//! An Ape-X actor: steps its own vector of environments with a local acting graph, turns
//! steps into n-step records, prioritizes them with its own Q-values, and sends them in
//! batches to the replay shards (round robin). It pulls new weights every
//! `weight_sync_steps` and tags every batch with the version that chose its actions. A dead
//! peer never stops it: records wait in a bounded outbox and calls are retried with backoff,
//! until the learner says the run is over or stays silent for `give_up`.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use agents::{apex_priorities, dqn_actor, transitions_batch, Actor, DqnConfig, NStepBuffer, Transition};
use rlgraph_core::Backend;

use super::access::Access;
use super::actor_env::ActorEnvs;
use super::cluster::{ClusterSpec, Role};
use super::error::DistributedError;
use super::learner_link::{Backoff, LearnerLink};
use super::peers::{call_failed, replay_client, ReplayClient};
use super::proto::InsertRequest;
use super::wire::encode_value;

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
}

impl ActorOptions {
    /// Options with RLgraph's Ape-X defaults for actor `index` on `env`.
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
        }
    }
}

/// What an actor did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActorSummary {
    /// Environment frames stepped.
    pub frames: u64,
    /// Records the shards accepted (Ape-X), or rollouts the learner queued (IMPALA).
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

/// The actor's line to the learner and its clients of the shards.
struct Links {
    learner: LearnerLink,
    shards: Vec<(SocketAddr, ReplayClient)>,
    next_shard: usize,
}

impl Links {
    fn new(cluster: &ClusterSpec, access: &Access, options: &ActorOptions) -> Result<Self, DistributedError> {
        let learner = LearnerLink::new(cluster, access, options.index, options.give_up)?;
        let shards = {
            let _inside = learner.runtime.enter();
            (0..cluster.replay.len())
                .map(|i| {
                    let addr = cluster.address(Role::Replay, i)?;
                    Ok((addr, replay_client(addr, access)?))
                })
                .collect::<Result<Vec<_>, DistributedError>>()?
        };
        if shards.is_empty() {
            return Err(DistributedError::Setup(
                "Ape-X needs at least one replay shard in the cluster spec".into(),
            ));
        }
        Ok(Links {
            learner,
            shards,
            next_shard: 0,
        })
    }

    /// Sends `batch` to the next shard in turn, trying each shard once.
    fn insert(&mut self, batch: &InsertRequest) -> Result<(), DistributedError> {
        let mut last = None;
        for _ in 0..self.shards.len() {
            let i = self.next_shard;
            self.next_shard = (i + 1) % self.shards.len();
            let (addr, client) = &mut self.shards[i];
            match self.learner.runtime.block_on(client.insert(batch.clone())) {
                Ok(_) => return Ok(()),
                Err(status) => {
                    let e = call_failed(*addr, "Insert", status);
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

/// Runs actor `options.index` of an Ape-X run described by `config` until the learner ends
/// the run (or stays silent for `options.give_up`).
pub fn run_apex_actor<B: Backend>(
    config: &DqnConfig,
    cluster: &ClusterSpec,
    access: &Access,
    options: &ActorOptions,
) -> Result<ActorSummary, DistributedError> {
    let mut envs = ActorEnvs::new(&options.env, options.num_envs, options.seed, options.index)?;
    let (s, a) = envs.spaces.clone();
    let mut actor = dqn_actor::<B>(config, &s, &a, envs.seed)?;
    let mut adder = NStepBuffer::new(config.n_step, config.discount, &s, &a);
    let mut links = Links::new(cluster, access, options)?;
    let tag = links.learner.tag.clone();
    let prioritize = config.worker_side_priorities;

    let mut summary = links.learner.first_weights(&mut actor, options.index)?;

    let mut pending: Vec<Transition> = Vec::new();
    let mut outbox: VecDeque<InsertRequest> = VecDeque::new();
    let mut since_sync = 0u64;
    let mut time_percentage = 0.0;
    let mut insert_backoff = Backoff::new();
    loop {
        let acted = actor.act(envs.states(), true, time_percentage)?;
        for (i, t) in envs.step(acted.actions)?.into_iter().enumerate() {
            pending.extend(adder.push(i, t));
        }
        since_sync += envs.states().len() as u64;

        if pending.len() >= options.records_per_insert {
            let records = transitions_batch(&std::mem::take(&mut pending))?;
            let priorities = if prioritize {
                apex_priorities(&mut actor, &records, config.discount, config.n_step)?
            } else {
                vec![]
            };
            outbox.push_back(InsertRequest {
                actor: options.index,
                weight_version: summary.version,
                records: Some(encode_value(&records)?),
                priorities,
            });
            while outbox.len() > options.outbox_limit {
                if let Some(dropped) = outbox.pop_front() {
                    summary.records_dropped += records_in(&dropped);
                }
            }
        }
        if !outbox.is_empty() && insert_backoff.due() {
            while let Some(batch) = outbox.front() {
                match links.insert(batch) {
                    Ok(()) => {
                        summary.records_sent += records_in(batch);
                        outbox.pop_front();
                        insert_backoff.reset();
                    }
                    Err(e) if e.is_token_refusal() => return Err(e),
                    Err(e @ DistributedError::Call { .. }) if !e.is_message_refusal() => {
                        insert_backoff.note(&tag, &e);
                        insert_backoff.defer();
                        break;
                    }
                    // Records the shard refuses are dropped, not retried forever.
                    Err(e) => {
                        super::log(&format!("{tag}: dropped a batch: {e}"));
                        summary.records_dropped += records_in(batch);
                        outbox.pop_front();
                    }
                }
            }
        }
        if since_sync >= options.weight_sync_steps {
            since_sync = 0;
            links.learner.sync(&mut actor, &mut summary, options.index)?;
        }
        if links
            .learner
            .report_progress(&mut envs, &mut summary, options, false, &mut time_percentage)?
        {
            return Ok(summary);
        }
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
