//! The learner role: owns an update graph and its optimizers, learns from batches of records,
//! counts updates and publishes versioned snapshots of the policy's weights.

use std::path::Path;

use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, GraphExecutor, HostState, Result};

use crate::actor::GraphActor;
use crate::counters::Counters;
use crate::snapshot::{Publisher, WeightSnapshot};

/// What one update gives back.
#[derive(Clone, Debug, PartialEq)]
pub struct Learned {
    /// The loss.
    pub loss: f64,
    /// New priorities for the batch's records, in order (prioritized replay only).
    pub priorities: Option<Vec<f64>>,
}

/// The learning side of an agent.
pub trait Learner: Send {
    /// One update on `batch` (a Dict of batched records, as the algorithm's replay or queue
    /// holds them), at `time_percentage` (0 to 1) of the run for the optimizer's schedules.
    fn learn(&mut self, batch: &Value, time_percentage: f64) -> Result<Learned>;
    /// A snapshot of the policy's current weights, one version after the last.
    fn publish(&mut self) -> Result<WeightSnapshot>;
    /// Updates done.
    fn updates(&self) -> u64;
}

/// Saves a learner's graph, its `counters` (under `learner`) and the named `host` states.
pub(crate) fn save_learner<'a, B: Backend>(
    exec: &GraphExecutor<B>,
    counters: &'a Counters,
    path: &Path,
    mut host: Vec<(&'a str, &'a dyn HostState)>,
) -> Result<()> {
    host.push(("learner", counters));
    exec.save_with(path, &host)
}

/// Restores what `save_learner` wrote; on error nothing changes.
pub(crate) fn restore_learner<'a, B: Backend>(
    exec: &mut GraphExecutor<B>,
    counters: &'a mut Counters,
    path: &Path,
    mut host: Vec<(&'a str, &'a mut dyn HostState)>,
) -> Result<()> {
    host.push(("learner", counters));
    exec.restore_with(path, &mut host)
}

/// Publishes the next version of a learner's policy straight into an actor in this process
/// (device to device, see [`GraphActor::sync_from`]); `again` re-sends the last version
/// instead, after the learner's variables changed outside an update (restore, import).
pub(crate) fn publish_in_place<B: Backend>(
    exec: &GraphExecutor<B>,
    counters: &mut Counters,
    actor: &mut GraphActor<B>,
    again: bool,
) -> Result<()> {
    let version = if again {
        counters.published
    } else {
        Publisher::bump(&mut counters.published)
    };
    actor.sync_from(exec, version)
}
