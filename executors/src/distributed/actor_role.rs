//! An actor of a distributed run: which loop runs it, as the algorithm's [`Experience`] picks.

use agents::{DistributedAlgorithm, Experience};
use rlgraph_core::Backend;

use super::access::Access;
use super::actor_options::{ActorOptions, ActorSummary};
use super::cluster::ClusterSpec;
use super::error::DistributedError;
use super::replay_actor::run_replay_actor;
use super::rollout_actor::run_rollout_actor;

/// Runs actor `options.index` of a run of `algorithm` in `cluster` until the learner ends the
/// run (or stays silent for `options.give_up`): it feeds the replay shards or streams rollouts
/// to the learner, as the algorithm's experience says.
pub fn run_actor<B: Backend>(
    algorithm: &dyn DistributedAlgorithm<B>,
    cluster: &ClusterSpec,
    access: &Access,
    options: &ActorOptions,
) -> Result<ActorSummary, DistributedError> {
    match algorithm.experience() {
        Experience::Replay(feed) => run_replay_actor(algorithm, &feed, cluster, access, options),
        Experience::Rollouts(feed) => run_rollout_actor(algorithm, &feed, cluster, access, options),
    }
}
