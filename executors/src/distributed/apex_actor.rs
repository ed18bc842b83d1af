//! An Ape-X actor: steps its own vector of environments with a local acting graph, turns
//! steps into n-step records, prioritizes them with its own Q-values, and sends them in
//! batches to the replay shards (round robin). It pulls new weights every
//! `weight_sync_steps` and tags every batch with the version that chose its actions. A dead
//! peer never stops it: records wait in a bounded outbox and calls are retried with backoff,
//! until the learner says the run is over or stays silent for `give_up`.

use std::time::Duration;

use agents::{apex_priorities, dqn_actor, transitions_batch, Actor, DqnConfig, NStepBuffer, Transition, WorkerStreams};
use rlgraph_core::Backend;
use serde_json::Value as Json;

use super::access::Access;
use super::actor_env::ActorEnvs;
use super::cluster::ClusterSpec;
use super::error::DistributedError;
use super::learner_link::LearnerLink;
use super::proto::InsertRequest;
use super::shard_outbox::ShardOutbox;
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
    /// The preprocessing each environment copy runs before the actor sees its states (the
    /// frame stack of [`agents::WorkerLayout::worker_specs`]); `None`: states as they come.
    pub worker_specs: Option<Vec<Json>>,
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
            worker_specs: None,
        }
    }
}

/// What an actor did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActorSummary {
    /// Environment frames stepped.
    pub frames: u64,
    /// Records (Ape-X's n-step transitions, IMPALA's rollouts) made from those frames: each one
    /// ends sent, dropped or unsent, so `records_made = records_sent + records_dropped +
    /// records_unsent`.
    pub records_made: u64,
    /// Records still on hand when the run ended (a partial insert batch, an outbox no shard
    /// took before the end).
    pub records_unsent: u64,
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

/// Runs actor `options.index` of an Ape-X run described by `config` until the learner ends
/// the run (or stays silent for `options.give_up`).
pub fn run_apex_actor<B: Backend>(
    config: &DqnConfig,
    cluster: &ClusterSpec,
    access: &Access,
    options: &ActorOptions,
) -> Result<ActorSummary, DistributedError> {
    let mut envs = ActorEnvs::new(&options.env, options.num_envs, options.seed, options.index)?;
    let (raw, a) = envs.spaces.clone();
    let mut streams = match &options.worker_specs {
        Some(specs) => Some(WorkerStreams::<B>::new(specs.clone(), &raw, envs.seed)?),
        None => None,
    };
    let s = match &streams {
        Some(streams) => streams.state_space()?,
        None => raw,
    };
    let mut actor = dqn_actor::<B>(config, &s, &a, envs.seed)?;
    let mut adder = NStepBuffer::new(config.n_step, config.discount, &s, &a);
    let mut learner = LearnerLink::new(cluster, access, options.index, options.give_up)?;
    let mut outbox = ShardOutbox::connect(cluster, access, &learner.runtime, options.outbox_limit, &learner.tag)?;
    let prioritize = config.worker_side_priorities;

    let mut summary = learner.first_weights(&mut actor, options.index)?;

    let mut pending: Vec<Transition> = Vec::new();
    let mut since_sync = 0u64;
    let mut time_percentage = 0.0;
    loop {
        let acted = match &mut streams {
            Some(streams) => actor.act(&streams.act_states(envs.states())?, true, time_percentage)?,
            None => actor.act(envs.states(), true, time_percentage)?,
        };
        for (i, t) in envs.step(acted.actions)?.into_iter().enumerate() {
            let t = match &mut streams {
                Some(streams) => streams.observe(i, t)?,
                None => t,
            };
            let records = adder.push(i, t);
            summary.records_made += records.len() as u64;
            pending.extend(records);
        }
        since_sync += envs.states().len() as u64;

        if pending.len() >= options.records_per_insert {
            let records = transitions_batch(&std::mem::take(&mut pending))?;
            let priorities = if prioritize {
                apex_priorities(&mut actor, &records, config.discount, config.n_step)?
            } else {
                vec![]
            };
            outbox.push(InsertRequest {
                actor: options.index,
                weight_version: summary.version,
                records: Some(encode_value(&records)?),
                priorities,
            });
        }
        outbox.flush(&learner.runtime)?;
        if since_sync >= options.weight_sync_steps {
            since_sync = 0;
            learner.sync(&mut actor, &mut summary, options.index)?;
        }
        // While paused, the records still queued go on to the shards: the learner may be
        // waiting for them before it can learn and let this actor step again.
        let stop = learner.report_progress(
            &mut envs,
            &mut summary,
            options,
            false,
            &mut time_percentage,
            &mut |runtime| outbox.flush(runtime),
        )?;
        if stop {
            (summary.records_sent, summary.records_dropped) = (outbox.sent, outbox.dropped);
            summary.records_unsent = pending.len() as u64 + outbox.queued_records();
            return Ok(summary);
        }
    }
}
