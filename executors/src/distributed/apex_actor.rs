//! An Ape-X actor: steps its own vector of environments with a local acting graph, turns
//! steps into n-step records, prioritizes them with its own Q-values, and sends them in
//! batches to the replay shards (round robin). It pulls new weights every
//! `weight_sync_steps` and tags every batch with the version that chose its actions. A dead
//! peer never stops it: records wait in a bounded outbox and calls are retried with backoff,
//! until the learner says the run is over or stays silent for `give_up`.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use agents::{
    apex_priorities, dqn_actor, transitions_batch, Actor, DqnConfig, NStepBuffer, Transition, WeightSnapshot,
};
use rlgraph_core::Backend;
use rlgraph_envs::{make, Stepping, VectorEnv};

use super::access::Access;
use super::cluster::{ClusterSpec, Role};
use super::error::DistributedError;
use super::peers::{call_failed, learner_client, replay_client, LearnerClient, ReplayClient};
use super::proto::{ActorReport, InsertRequest, WeightsRequest};
use super::wire::{decode_weights, encode_value};

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
    /// Records the shards accepted.
    pub records_sent: u64,
    /// Records dropped from a full outbox.
    pub records_dropped: u64,
    /// Weight snapshots loaded.
    pub weight_loads: u64,
    /// The first weight version loaded (a restarted actor starts from the learner's current
    /// one, not from the first).
    pub first_version: u64,
    /// The last weight version loaded.
    pub version: u64,
}

/// The actor's peers and the runtime their calls run on.
struct Links {
    runtime: tokio::runtime::Runtime,
    learner: (SocketAddr, LearnerClient),
    shards: Vec<(SocketAddr, ReplayClient)>,
    next_shard: usize,
    /// When the learner last answered.
    last_answer: Instant,
}

impl Links {
    fn new(cluster: &ClusterSpec, access: &Access) -> Result<Self, DistributedError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DistributedError::Setup(format!("cannot start the actor's runtime: {e}")))?;
        let _inside = runtime.enter();
        let addr = cluster.address(Role::Learner, 0)?;
        let learner = (addr, learner_client(addr, access)?);
        let shards = (0..cluster.replay.len())
            .map(|i| {
                let addr = cluster.address(Role::Replay, i)?;
                Ok((addr, replay_client(addr, access)?))
            })
            .collect::<Result<Vec<_>, DistributedError>>()?;
        if shards.is_empty() {
            return Err(DistributedError::Setup(
                "Ape-X needs at least one replay shard in the cluster spec".into(),
            ));
        }
        Ok(Links {
            runtime,
            learner,
            shards,
            next_shard: 0,
            last_answer: Instant::now(),
        })
    }

    /// The learner's weights if their version is not `have` (a learner resumed from a
    /// checkpoint may publish an older version than an actor holds: its weights win).
    fn weights(&mut self, have: u64, actor: u32) -> Result<Option<WeightSnapshot>, DistributedError> {
        let (addr, client) = &mut self.learner;
        let reply = self
            .runtime
            .block_on(client.get_weights(WeightsRequest {
                have_version: have,
                actor,
            }))
            .map_err(|s| call_failed(*addr, "GetWeights", s))?
            .into_inner();
        self.last_answer = Instant::now();
        match reply.weights {
            Some(nest) if reply.version != have => Ok(Some(WeightSnapshot {
                version: reply.version,
                weights: decode_weights(&nest)?,
            })),
            _ => Ok(None),
        }
    }

    /// Reports to the learner; while the learner says to pause, waits and reports again (with
    /// nothing new). `None` when the learner did not answer; an error once it has been
    /// silent for `give_up`.
    fn report(
        &mut self,
        mut report: ActorReport,
        options: &ActorOptions,
        tag: &str,
    ) -> Result<Option<super::proto::ReportReply>, DistributedError> {
        let silent_since = Instant::now();
        loop {
            let (addr, client) = &mut self.learner;
            match self.runtime.block_on(client.report(report.clone())) {
                Ok(reply) => {
                    self.last_answer = Instant::now();
                    let reply = reply.into_inner();
                    if reply.stop || !reply.pause {
                        return Ok(Some(reply));
                    }
                    // Counted once: what follows while paused adds nothing.
                    report.frames = 0;
                    report.episode_returns.clear();
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(status) => {
                    super::log(&format!("{tag}: {}", call_failed(*addr, "Report", status)));
                    if report.frames == 0 && silent_since.elapsed() < options.give_up {
                        // Paused and already counted: wait for the learner to come back.
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    if self.last_answer.elapsed() > options.give_up {
                        return Err(DistributedError::Setup(format!(
                            "{tag}: the learner at {addr} has not answered for {:?}; giving up",
                            options.give_up
                        )));
                    }
                    return Ok(None);
                }
            }
        }
    }

    /// Sends `batch` to the next shard in turn, trying each shard once.
    fn insert(&mut self, batch: &InsertRequest) -> Result<(), DistributedError> {
        let mut last = None;
        for _ in 0..self.shards.len() {
            let i = self.next_shard;
            self.next_shard = (i + 1) % self.shards.len();
            let (addr, client) = &mut self.shards[i];
            match self.runtime.block_on(client.insert(batch.clone())) {
                Ok(_) => return Ok(()),
                Err(status) if status.code() == tonic::Code::InvalidArgument => {
                    // The shard refused the records themselves: another shard would too.
                    return Err(call_failed(*addr, "Insert", status));
                }
                Err(status) => last = Some(call_failed(*addr, "Insert", status)),
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
    let tag = format!("actor {}", options.index);
    // Each actor explores its own episodes: its copies are seeded apart from every other's.
    let seed = options
        .seed
        .wrapping_add(1 + u64::from(options.index).wrapping_mul(10_007));
    let envs = (0..options.num_envs.max(1))
        .map(|i| make(&options.env, seed.wrapping_add(i as u64)))
        .collect::<Result<Vec<_>, _>>()?;
    let (s, a) = (envs[0].state_space().clone(), envs[0].action_space().clone());
    let mut envs = VectorEnv::new(envs, Stepping::Sequential)?;
    let mut actor = dqn_actor::<B>(config, &s, &a, seed)?;
    let mut adder = NStepBuffer::new(config.n_step, config.discount, &s, &a);
    let mut links = Links::new(cluster, access)?;
    let prioritize = config.worker_side_priorities;

    let mut summary = ActorSummary::default();
    // The first weights: without them the actor would fill the shards with a random policy's
    // records labelled as nobody's.
    let mut backoff = Backoff::new();
    loop {
        match links.weights(0, options.index) {
            Ok(Some(snapshot)) => {
                actor.load(&snapshot)?;
                summary.version = snapshot.version;
                summary.first_version = snapshot.version;
                summary.weight_loads += 1;
                break;
            }
            Ok(None) => {}
            Err(e) => backoff.note(&tag, &e),
        }
        if links.last_answer.elapsed() > options.give_up {
            return Err(DistributedError::Setup(format!(
                "{tag}: no weights from the learner within {:?}",
                options.give_up
            )));
        }
        backoff.wait();
    }

    let mut states = envs.reset_all(Some(seed))?;
    let mut returns_now = vec![0.0; envs.len()];
    let mut finished: Vec<f64> = Vec::new();
    let mut pending: Vec<Transition> = Vec::new();
    let mut outbox: VecDeque<InsertRequest> = VecDeque::new();
    let (mut frames_unreported, mut since_sync) = (0u64, 0u64);
    let mut last_report = Instant::now();
    let mut time_percentage = 0.0;
    let mut insert_backoff = Backoff::new();

    loop {
        let acted = actor.act(&states, true, time_percentage)?;
        let steps = envs.step(&acted.actions)?;
        for (i, (r, action)) in steps.into_iter().zip(acted.actions).enumerate() {
            returns_now[i] += r.step.reward;
            let next = r.next_observation().clone();
            let done = r.step.terminated || r.step.truncated;
            let t = Transition {
                state: std::mem::replace(&mut states[i], next),
                action,
                reward: r.step.reward,
                terminated: r.step.terminated,
                truncated: r.step.truncated,
                next_state: r.step.observation,
            };
            pending.extend(adder.push(i, t));
            if done {
                finished.push(std::mem::take(&mut returns_now[i]));
            }
        }
        let n = envs.len() as u64;
        summary.frames += n;
        frames_unreported += n;
        since_sync += n;

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
                    Err(e @ DistributedError::Call { .. }) if !is_refusal(&e) => {
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
            match links.weights(summary.version, options.index) {
                Ok(Some(snapshot)) => {
                    actor.load(&snapshot)?;
                    summary.version = snapshot.version;
                    summary.weight_loads += 1;
                }
                Ok(None) => {}
                Err(e) => super::log(&format!("{tag}: keeps its weights: {e}")),
            }
        }
        if frames_unreported >= options.report_frames || last_report.elapsed() >= options.report_interval {
            last_report = Instant::now();
            let report = ActorReport {
                actor: options.index,
                frames: frames_unreported,
                episode_returns: finished.clone(),
                weight_version: summary.version,
            };
            // Without an answer the learner may be restarting: keep acting, report it all later.
            if let Some(reply) = links.report(report, options, &tag)? {
                frames_unreported = 0;
                finished.clear();
                time_percentage = reply.time_percentage.clamp(0.0, 1.0);
                if reply.stop {
                    return Ok(summary);
                }
            }
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

/// Whether a failed call was a refusal of the message itself (not a transport failure).
fn is_refusal(e: &DistributedError) -> bool {
    matches!(e, DistributedError::Call { status, .. } if status.starts_with("InvalidArgument"))
}

/// Exponential backoff between retries of a failing peer, from 50 ms to 2 s, that logs the
/// first failure of each outage only.
struct Backoff {
    delay: Duration,
    next: Instant,
    logged: bool,
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            delay: Duration::from_millis(50),
            next: Instant::now(),
            logged: false,
        }
    }

    fn note(&mut self, tag: &str, e: &DistributedError) {
        if !self.logged {
            super::log(&format!("{tag}: {e}; retrying with backoff"));
            self.logged = true;
        }
    }

    fn wait(&mut self) {
        std::thread::sleep(self.delay);
        self.delay = (self.delay * 2).min(Duration::from_secs(2));
    }

    fn defer(&mut self) {
        self.next = Instant::now() + self.delay;
        self.delay = (self.delay * 2).min(Duration::from_secs(2));
    }

    fn due(&self) -> bool {
        Instant::now() >= self.next
    }

    fn reset(&mut self) {
        self.delay = Duration::from_millis(50);
        self.logged = false;
    }
}
