//! How and where a distributed learner runs: its options, its greedy rounds, the site it
//! serves (spaces, cluster, access rules), and the leg the learner worker hands a learning
//! loop.

use std::path::PathBuf;
use std::time::Duration;

use agents::{DistributedAlgorithm, GraphLearner};
use rlgraph_core::spaces::Space;
use rlgraph_core::Backend;

use super::access::Access;
use super::cluster::ClusterSpec;
use super::learner_state::RunCounters;
use crate::input_log::LogWriter;
use crate::worker_stats::{Progress, RunLength};

/// How the learner runs.
#[derive(Clone, Debug)]
pub struct LearnerOptions {
    /// Stop once the mean return of the last 100 episodes reaches this.
    pub target_return: Option<f64>,
    /// The learner's seed.
    pub seed: u64,
    /// Where the periodic checkpoints go (the driver writes the final one where asked).
    pub checkpoint: Option<PathBuf>,
    /// Updates between periodic checkpoints (0: none).
    pub checkpoint_every: u64,
    /// Sample requests in flight per shard (RLgraph's `replay_sampling_task_depth`).
    pub prefetch_depth: usize,
    /// Batches each sample request draws at once (one round trip for several updates).
    pub sample_batches: usize,
    /// How long the learner keeps answering after the run ends, so every actor hears it.
    pub stop_grace: Duration,
    /// How many frames the actors may run ahead of the learner's replay ratio before they
    /// pause (0: no limit, as RLgraph's Ape-X, where a slow learner sees fewer updates per
    /// frame than the config asks).
    pub max_frames_ahead: u64,
    /// Whether the learner stops the shards at the end (a launch does; shards shared with
    /// other runs are left alone).
    pub stop_shards: bool,
    /// Greedy evaluation rounds the learner plays between updates, if any.
    pub evaluation: Option<LearnerEvaluation>,
    /// Where the learner logs its input for `rlgraph replay`, if it does.
    pub record: Option<crate::input_log::Recording>,
}

/// Greedy rounds a distributed learner plays between its updates, with a greedy actor of its
/// own and environment copies of its own (copy `i` seeded `seed + i`, as `rlgraph train
/// --eval-every` makes them): one episode per copy every `every` of the run's frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnerEvaluation {
    /// The run's frames between rounds.
    pub every: u64,
    /// Episodes per round (one per copy).
    pub episodes: usize,
    /// The environment id (`rlgraph_envs::make`).
    pub env: String,
}

impl LearnerEvaluation {
    /// The rounds' environment copies, seeded from `seed`.
    pub(crate) fn build(&self, seed: u64) -> rlgraph_core::Result<crate::Evaluation> {
        let envs =
            rlgraph_envs::VectorEnv::make(&self.env, self.episodes, seed, None).map_err(crate::env_error::env_error)?;
        Ok(crate::Evaluation::new(self.every, envs))
    }
}

impl LearnerOptions {
    /// Default options for a learner seeded `seed` (the run's length is the driver's
    /// `RunLength`).
    pub fn new(seed: u64) -> Self {
        LearnerOptions {
            target_return: None,
            seed,
            checkpoint: None,
            checkpoint_every: 0,
            prefetch_depth: 2,
            sample_batches: 4,
            stop_grace: Duration::from_secs(1),
            max_frames_ahead: 1000,
            stop_shards: true,
            evaluation: None,
            record: None,
        }
    }
}

/// Where a learner runs: the spaces of what it learns from, the cluster, the access rules and
/// its options.
pub(crate) struct LearnerSite {
    pub(crate) state_space: Space,
    pub(crate) action_space: Space,
    pub(crate) cluster: ClusterSpec,
    pub(crate) access: Access,
    pub(crate) options: LearnerOptions,
}

/// One leg of a distributed learner, as the learner worker hands it to a learning loop: the
/// learner, the run's counters so far, the algorithm, the site, how long the run goes on, and
/// where progress and the learner input log go.
pub(crate) struct Leg<'a, B: Backend> {
    pub(crate) learner: &'a mut dyn GraphLearner<B>,
    pub(crate) counters: RunCounters,
    pub(crate) algorithm: &'a dyn DistributedAlgorithm<B>,
    pub(crate) site: &'a LearnerSite,
    pub(crate) length: RunLength,
    pub(crate) progress: &'a mut dyn FnMut(&Progress<'_>),
    pub(crate) log: Option<&'a mut LogWriter>,
}
