//! The learner of a run whose actors stream rollouts (IMPALA's): actors push rollouts into a bounded queue at the learner (a full
//! queue refuses them, so actors wait); the learner takes `batch_size` rollouts at a time,
//! learns on them stacked (time-major, as IMPALA's V-trace wants them), and publishes a new version after every update.

use std::time::Duration;

use agents::{stack, RolloutAdder, RolloutFeed};
use rlgraph_core::Backend;

use super::distributed_stats::DistributedStats;
use super::error::DistributedError;
use super::learner_hub::LearnerHub;
use super::learner_options::Leg;
use super::learner_run::LearnerRun;
use super::learner_state::RunCounters;
use crate::input_log::LogRecord;

/// Runs one leg of a learner of `algorithm` whose actors stream rollouts as `feed` says, from
/// the run's `counters` until the run reaches `length`; returns the run's statistics and
/// counters.
pub(crate) fn learn_from_rollouts<B: Backend>(
    leg: Leg<'_, B>,
    feed: &RolloutFeed,
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
    let rollout_space = RolloutAdder::new(feed.length, state_space, action_space, feed.memory_units)?
        .record_space()
        .clone();
    let hub = LearnerHub::with_rollouts(&rollout_space, feed.queue_capacity);
    // Apart from the actors' seeds (`seed + 1 + 10,007 * index`).
    let actor = || {
        Ok((
            algorithm.actor(state_space, action_space, options.seed + 999)?,
            feed.memory_units,
        ))
    };
    let mut run = LearnerRun::start(learner, counters, hub, cluster, access, options, length, actor, log)?;
    let batch_size = feed.batch_size.max(1);
    let result: Result<(), DistributedError> = (|| loop {
        let (queued, _) = run.hub.rollout_counts();
        let Some(t) = run.tick(options, learner.updates(), queued, progress) else {
            return Ok(());
        };
        let Some(rollouts) = run.hub.take_rollouts(batch_size) else {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        };
        let (rollouts, versions): (Vec<_>, Vec<_>) = rollouts.into_iter().unzip();
        run.log(|| LogRecord::ActedWith { versions })?;
        let learned = run.learn(learner, &stack(&rollouts)?, t)?;
        run.updated(learner, learned.loss, options)?;
        // Every update, as IMPALA's actors take the newest weights before each rollout.
        run.publish(learner)?;
    })();
    let refused = run.hub.rollout_counts().1;
    let finished = run.finish(learner, options, result, |_| {})?;
    let stats = DistributedStats {
        worker: finished.worker,
        updates_per_second: finished.updates_per_second,
        mean_sample_latency_ms: 0.0,
        mean_weight_lag: finished.weight_lag,
        priority_updates_dropped: 0,
        resumed_at_update: None,
        actors: finished.actors,
        shards: vec![],
        rollouts_refused: refused,
        preempted: finished.preempted,
    };
    Ok((stats, finished.counters))
}
