//! `LearnerWorker`: a distributed learner as a layout of the one driver.
//! It holds the learner and the run's counters between legs, so [`crate::drive`] resumes it,
//! runs it, logs it and checkpoints it as it does every other worker; what is its own is where
//! the experience comes from (replay shards or actors' rollouts over gRPC, as the algorithm's
//! [`Experience`] says).

use std::path::Path;

use agents::{DistributedAlgorithm, Experience, GraphLearner};
use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use super::access::Access;
use super::cluster::ClusterSpec;
use super::distributed_stats::DistributedStats;
use super::error::core_error;
use super::learner_options::{LearnerOptions, LearnerSite, Leg};
use super::learner_state::{restore_learner, save_learner, RunCounters};
use super::replay_learner::learn_from_replay;
use super::rollout_learner::learn_from_rollouts;
use crate::input_log::{LogRecord, LogWriter};
use crate::run_tally::RunTally;
use crate::worker::Worker;
use crate::worker_stats::{Progress, RunLength, WorkerStats};

/// A distributed run's learner as a [`Worker`]: each `execute_run` serves the cluster's
/// learner address until the whole run (the actors' frames, earlier legs included) reaches its
/// length, then tells the actors the run is over. Its progress carries the learner's rates,
/// weight lag and queue depth as `distributed/...` gauges.
pub struct LearnerWorker<B: Backend> {
    /// The learner input log, when the run records one.
    log: Option<LogWriter>,
    algorithm: Box<dyn DistributedAlgorithm<B>>,
    learner: Box<dyn GraphLearner<B>>,
    site: LearnerSite,
    counters: RunCounters,
    tally: RunTally,
    resumed_at_update: Option<u64>,
    last: Option<DistributedStats>,
}

impl<B: Backend> LearnerWorker<B> {
    /// A fresh learner of `algorithm` for these spaces, to serve `cluster`'s learner address
    /// under `access`.
    pub fn new(
        algorithm: Box<dyn DistributedAlgorithm<B>>,
        state_space: &Space,
        action_space: &Space,
        cluster: ClusterSpec,
        access: Access,
        options: LearnerOptions,
    ) -> Result<Self> {
        let learner = algorithm.learner(state_space, action_space, options.seed)?;
        let log = match &options.record {
            Some(recording) => Some(
                recording
                    .open(state_space, action_space, options.seed, B::NAME, "distributed")
                    .map_err(core_error)?,
            ),
            None => None,
        };
        Ok(LearnerWorker {
            log,
            algorithm,
            learner,
            site: LearnerSite {
                state_space: state_space.clone(),
                action_space: action_space.clone(),
                cluster,
                access,
                options,
            },
            counters: RunCounters::default(),
            tally: RunTally::default(),
            resumed_at_update: None,
            last: None,
        })
    }

    /// The last leg's statistics, with what distribution adds (`None` before the first leg).
    pub fn last_stats(&self) -> Option<&DistributedStats> {
        self.last.as_ref()
    }

    fn updates(&self) -> u64 {
        self.learner.updates()
    }

    /// Bytes this process appended to the learner input log (0 when it records none).
    pub fn log_bytes(&self) -> u64 {
        self.log.as_ref().map_or(0, |l| l.total_bytes)
    }

    /// The tally the driver reads, from the counters and the learner's updates.
    fn count(&mut self) {
        self.tally = RunTally {
            timesteps: self.counters.frames,
            updates: self.updates(),
            episodes: self.counters.episodes.clone(),
            evaluations: self.counters.evaluations.clone(),
        };
    }
}

impl<B: Backend> Worker for LearnerWorker<B> {
    fn execute_run(&mut self, length: RunLength, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<WorkerStats> {
        let from = self.tally.clone();
        let counters = self.counters.clone();
        let leg = Leg {
            learner: self.learner.as_mut(),
            counters,
            algorithm: self.algorithm.as_ref(),
            site: &self.site,
            length,
            progress,
            log: self.log.as_mut(),
        };
        let (mut stats, counters) = match self.algorithm.experience() {
            Experience::Replay(feed) => learn_from_replay(leg, &feed),
            Experience::Rollouts(feed) => learn_from_rollouts(leg, &feed),
        }
        .map_err(core_error)?;
        stats.resumed_at_update = self.resumed_at_update;
        self.counters = counters;
        self.count();
        let leg = from.leg_of(&stats.worker);
        self.last = Some(stats);
        Ok(leg)
    }

    fn save_checkpoint(&mut self, path: &Path) -> Result<()> {
        let updates = self.updates();
        if let Some(log) = &mut self.log {
            log.checkpointed(updates, serde_json::Value::Null).map_err(core_error)?;
        }
        save_learner(self.learner.as_ref(), &self.counters, path)
    }

    fn resume(&mut self, path: &Path) -> Result<()> {
        let counters = restore_learner(self.learner.as_mut(), path)?;
        if let Some(log) = &mut self.log {
            log.append(&LogRecord::Resumed {
                updates: self.learner.updates(),
            })
            .map_err(core_error)?;
        }
        super::log(&format!(
            "learner: resumed from {} at {} frames",
            path.display(),
            counters.frames
        ));
        self.counters = counters;
        self.resumed_at_update = Some(self.updates());
        self.count();
        Ok(())
    }

    fn tally(&self) -> &RunTally {
        &self.tally
    }
}
