//! An actor that feeds replay shards (as Ape-X's do): steps its own vector of environments
//! with a local acting graph, turns steps into n-step records, prioritizes them with its own
//! graph where the algorithm does, and sends them in batches to the replay shards (round
//! robin). It pulls new weights every
//! `weight_sync_steps` and tags every batch with the version that chose its actions. A dead
//! peer never stops it: records wait in a bounded outbox and calls are retried with backoff,
//! until the learner says the run is over or stays silent for `give_up`.

use agents::{transitions_batch, Actor, DistributedAlgorithm, NStepBuffer, ReplayFeed, Transition, WorkerStreams};
use rlgraph_core::Backend;

use super::access::Access;
use super::actor_env::ActorEnvs;
use super::actor_options::{ActorOptions, ActorSummary};
use super::cluster::ClusterSpec;
use super::error::DistributedError;
use super::learner_link::LearnerLink;
use super::proto::InsertRequest;
use super::shard_outbox::ShardOutbox;
use super::wire::encode_value;

/// Runs actor `options.index` of a run of `algorithm`, whose actors feed replay shards as
/// `feed` says, until the learner ends the run (or stays silent for `options.give_up`).
pub(crate) fn run_replay_actor<B: Backend>(
    algorithm: &dyn DistributedAlgorithm<B>,
    feed: &ReplayFeed,
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
    let mut actor = algorithm.actor(&s, &a, envs.seed)?;
    let mut adder = NStepBuffer::new(feed.n_step, feed.discount, &s, &a);
    let mut learner = LearnerLink::new(cluster, access, options.index, options.give_up)?;
    let mut outbox = ShardOutbox::connect(cluster, access, &learner.runtime, options.outbox_limit, &learner.tag)?;

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
            let priorities = algorithm.priorities(&mut actor, &records)?.unwrap_or_default();
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
