//! The learner of a run whose actors feed replay shards (Ape-X's): samples batches from every replay shard with prefetching (a few
//! requests in flight per shard, each for several batches, so it never waits on one round
//! trip per batch), learns, sends new priorities back, publishes a versioned snapshot
//! whenever an actor asks, counts the actors' frames and episodes, saves checkpoints and ends
//! the run.
//!
//! It keeps the config's replay ratio: no more than `update_steps` updates per
//! `update_interval` frames after `steps_before_update`, counted over all actors, so a run
//! learns as the single-process agent with the same config does, however fast the machine.

use std::time::{Duration, Instant};

use agents::{transition_space, ReplayFeed, ReplaySample, UpdateSpec};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::Backend;
use tokio::sync::mpsc;

use super::cluster::Role;
use super::distributed_stats::DistributedStats;
use super::error::DistributedError;
use super::learner_hub::LearnerHub;
use super::learner_options::Leg;
use super::learner_run::LearnerRun;
use super::learner_state::RunCounters;
use super::peers::{replay_client, ReplayClient};
use super::proto::{PriorityUpdate, SampleReply, SampleRequest, StatsRequest, StopRequest};
use super::wire::{decode_value, split_rows};

/// A batch fetched from a shard.
struct Fetched {
    shard: usize,
    generation: u64,
    batch: Value,
    indices: Vec<u64>,
    latency: Duration,
}

/// Keeps a request for `ask` in flight to shard `shard`, and hands each batch of its replies
/// to `tx`. A shard that holds fewer records than `ask` draws at once (one smaller than
/// `batch_size * batches`) is asked for as many batches as it holds.
async fn prefetch(
    shard: usize,
    mut client: ReplayClient,
    ask: SampleRequest,
    records: Space,
    tx: mpsc::Sender<Fetched>,
) {
    let mut delay = Duration::from_millis(20);
    let mut failing = false;
    let mut batches = ask.batches;
    while !tx.is_closed() {
        let start = Instant::now();
        let this = SampleRequest { batches, ..ask };
        match client.sample(this).await {
            Ok(reply) => {
                failing = false;
                delay = Duration::from_millis(20);
                let reply = reply.into_inner();
                let held = u32::try_from(reply.size / u64::from(ask.batch_size.max(1))).unwrap_or(u32::MAX);
                batches = held.clamp(1, ask.batches.max(1));
                if reply.records.is_none() {
                    // Too few records for one batch yet, or for the batches asked (asked again
                    // for fewer at once).
                    if held == 0 || batches == this.batches {
                        tokio::time::sleep(delay).await;
                    }
                    continue;
                }
                let latency = start.elapsed();
                match split_reply(shard, reply, this, &records, latency) {
                    Ok(batches) => {
                        for fetched in batches {
                            if tx.send(fetched).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        super::log(&format!("learner: refused a batch from shard {shard}: {e}"));
                        tokio::time::sleep(delay).await;
                    }
                }
            }
            Err(status) if status.code() == tonic::Code::Unauthenticated => {
                // A setting, not an outage: this shard will not be sampled in this run.
                super::log(&format!(
                    "learner: shard {shard} refused the token ({}); no longer sampling it",
                    status.message()
                ));
                return;
            }
            Err(status) => {
                if !failing {
                    super::log(&format!(
                        "learner: shard {shard} does not answer ({:?}: {}); retrying",
                        status.code(),
                        status.message()
                    ));
                    failing = true;
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// A reply of `ask.batches` batches as one learner batch each, checked against `records`.
fn split_reply(
    shard: usize,
    reply: SampleReply,
    ask: SampleRequest,
    records: &Space,
    latency: Duration,
) -> Result<Vec<Fetched>, DistributedError> {
    let k = ask.batches.max(1) as usize;
    let n = ask.batch_size as usize * k;
    let nest = reply.records.unwrap_or_default();
    // A uniform memory's samples carry neither indices nor weights: nothing to reprioritize.
    let indexed = !reply.indices.is_empty();
    if (indexed && reply.indices.len() != n) || !(reply.weights.is_empty() || reply.weights.len() == n) {
        return Err(DistributedError::wire(
            "indices",
            format!(
                "{} indices and {} weights for {n} records",
                reply.indices.len(),
                reply.weights.len()
            ),
        ));
    }
    let size = ask.batch_size as usize;
    split_rows(nest, k, n as u64)?
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let rows = i * size..(i + 1) * size;
            let sample = ReplaySample {
                records: decode_value(&part, records)?,
                indices: None,
                weights: (!reply.weights.is_empty()).then(|| reply.weights[rows.clone()].to_vec()),
            };
            Ok(Fetched {
                shard,
                generation: reply.generation,
                batch: sample.batch()?,
                indices: if indexed { reply.indices[rows].to_vec() } else { vec![] },
                latency,
            })
        })
        .collect()
}

/// Sends priority updates to one shard, those queued meanwhile for the same incarnation in
/// one call (in order, so a slot updated twice keeps the later priority); a failed one is
/// dropped (the records keep their old priorities), never retried into a shard that has
/// moved on.
async fn send_priorities(shard: usize, mut client: ReplayClient, mut rx: mpsc::Receiver<PriorityUpdate>) {
    let mut failing = false;
    let mut held: Option<PriorityUpdate> = None;
    loop {
        let next = match held.take() {
            Some(update) => Some(update),
            None => rx.recv().await,
        };
        let Some(mut update) = next else {
            return;
        };
        while let Ok(next) = rx.try_recv() {
            if next.generation != update.generation {
                held = Some(next);
                break;
            }
            update.indices.extend(next.indices);
            update.priorities.extend(next.priorities);
            update.updates = update.updates.max(1) + next.updates.max(1);
        }
        match client.update_priorities(update).await {
            Ok(_) => failing = false,
            // Logged once per outage: a dead shard would otherwise log every update.
            Err(status) if !failing => {
                failing = true;
                super::log(&format!(
                    "learner: shard {shard} took no priorities: {}",
                    status.message()
                ));
            }
            Err(_) => {}
        }
    }
}

/// Updates the config's schedule `u` allows after `frames` frames: `update_steps` per
/// `update_interval` frames from `steps_before_update` on.
fn updates_due(u: &UpdateSpec, frames: u64) -> u64 {
    if !u.do_updates || frames < u.steps_before_update.max(1) {
        return 0;
    }
    ((frames - u.steps_before_update.max(1)) / u.update_interval.max(1) + 1).saturating_mul(u.update_steps.max(1))
}

/// The frames after which the schedule asks for update number `updates + 1` (the inverse of
/// [`updates_due`]); `u64::MAX` when the config does no updates.
fn frames_for_next_update(u: &UpdateSpec, updates: u64) -> u64 {
    if !u.do_updates {
        return u64::MAX;
    }
    let rounds = updates / u.update_steps.max(1);
    u.steps_before_update
        .max(1)
        .saturating_add(rounds.saturating_mul(u.update_interval.max(1)))
}

/// Runs one leg of a learner of `algorithm` whose actors feed replay shards as `feed` says,
/// from the run's `counters` until the run reaches `length`: serves the actors' reports and
/// weights on its cluster address, learns from the shards, and returns the run's statistics
/// and counters.
pub(crate) fn learn_from_replay<B: Backend>(
    leg: Leg<'_, B>,
    feed: &ReplayFeed,
) -> Result<(DistributedStats, RunCounters), DistributedError> {
    let Leg {
        learner,
        counters,
        algorithm,
        site,
        length,
        progress,
        log,
    } = leg;
    let (state_space, action_space) = (&site.state_space, &site.action_space);
    let (cluster, access, options) = (&site.cluster, &site.access, &site.options);
    // Apart from the actors' seeds (`seed + 1 + 10,007 * index`).
    let actor = || Ok((algorithm.actor(state_space, action_space, options.seed + 999)?, None));
    let hub = LearnerHub::default();
    let mut run = LearnerRun::start(learner, counters, hub, cluster, access, options, length, actor, log)?;

    let records = transition_space(state_space, action_space)?.with_batch_rank(true);
    let batch_size = u32::try_from(feed.update.batch_size)
        .map_err(|_| DistributedError::Setup(format!("batch_size {} is too large", feed.update.batch_size)))?;
    let ask = SampleRequest {
        batch_size,
        batches: u32::try_from(options.sample_batches.max(1))
            .map_err(|_| DistributedError::Setup(format!("{} batches per sample", options.sample_batches)))?,
    };
    let depth = options.prefetch_depth.max(1) * cluster.replay.len().max(1) * ask.batches as usize;
    let (tx, mut rx) = mpsc::channel::<Fetched>(depth);
    let mut shards: Vec<(String, ReplayClient)> = Vec::new();
    let mut priority_tx = Vec::new();
    let mut priority_tasks = Vec::new();
    {
        let _inside = run.runtime.enter();
        for i in 0..cluster.replay.len() {
            let shard_addr = cluster.endpoint(Role::Replay, i)?;
            let client = replay_client(&shard_addr, access)?;
            for _ in 0..options.prefetch_depth.max(1) {
                run.runtime
                    .spawn(prefetch(i, client.clone(), ask, records.clone(), tx.clone()));
            }
            let (ptx, prx) = mpsc::channel(64);
            priority_tasks.push(run.runtime.spawn(send_priorities(i, client.clone(), prx)));
            priority_tx.push(ptx);
            shards.push((shard_addr, client));
        }
    }
    drop(tx);

    let (mut latency_sum, mut fetched_n) = (0.0, 0u64);
    let mut priorities_dropped = 0u64;
    let result: Result<(), DistributedError> = (|| loop {
        run.publish_if_wanted(learner)?;
        let Some(t) = run.tick(options, learner.updates(), rx.len(), progress) else {
            return Ok(());
        };
        let budget = match options.max_frames_ahead {
            0 => u64::MAX,
            ahead => frames_for_next_update(&feed.update, learner.updates()).saturating_add(ahead),
        };
        run.hub.set_frames(run.counters.frames, budget);
        if learner.updates() >= updates_due(&feed.update, run.counters.frames) {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        // The timer must be made inside the runtime.
        let next = run
            .runtime
            .block_on(async { tokio::time::timeout(Duration::from_millis(50), rx.recv()).await });
        let fetched = match next {
            Ok(Some(f)) => f,
            Ok(None) => {
                return Err(DistributedError::Setup(
                    "no replay shard can be sampled: each refused the learner's token (see the log above); \
                     give every role the same --token-file"
                        .into(),
                ))
            }
            Err(_) => continue,
        };
        latency_sum += fetched.latency.as_secs_f64() * 1e3;
        fetched_n += 1;
        let learned = run.learn(learner, &fetched.batch, t)?;
        if let Some(priorities) = learned.priorities.filter(|_| !fetched.indices.is_empty()) {
            let update = PriorityUpdate {
                indices: fetched.indices,
                priorities,
                generation: fetched.generation,
                updates: 1,
            };
            // A full queue means the shard is slow: these priorities are dropped (and counted),
            // not waited on.
            if priority_tx[fetched.shard].try_send(update).is_err() {
                priorities_dropped += 1;
            }
        }
        run.updated(learner, learned.loss, options)?;
    })();

    let mut shard_stats = Vec::new();
    // A preempted learner leaves the shards to the learner that takes over.
    let stop_shards = options.stop_shards && !run.preempted();
    let finished = run.finish(learner, options, result, |runtime| {
        // The priorities still queued reach their shards before the shards are asked for
        // their stats (and told to stop).
        drop(priority_tx);
        for task in priority_tasks {
            let _ = runtime.block_on(async { tokio::time::timeout(access.deadline, task).await });
        }
        for (shard_addr, client) in &mut shards {
            match runtime.block_on(client.stats(StatsRequest {})) {
                Ok(s) => shard_stats.push(s.into_inner()),
                Err(status) => super::log(&format!(
                    "learner: no stats from shard {shard_addr}: {}",
                    status.message()
                )),
            }
            if stop_shards {
                let _ = runtime.block_on(client.stop(StopRequest {}));
            }
        }
    })?;
    let stats = DistributedStats {
        worker: finished.worker,
        updates_per_second: finished.updates_per_second,
        mean_sample_latency_ms: if fetched_n == 0 {
            0.0
        } else {
            latency_sum / fetched_n as f64
        },
        mean_weight_lag: finished.weight_lag,
        priority_updates_dropped: priorities_dropped,
        resumed_at_update: None,
        actors: finished.actors,
        shards: shard_stats,
        rollouts_refused: 0,
        preempted: finished.preempted,
    };
    Ok((stats, finished.counters))
}
