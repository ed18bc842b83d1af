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

/// A learner whose update graph lives in this process. It checkpoints, and hands actors in
/// this process its weights, through its [`LearnerGraph`]; the provided methods are the
/// graph's, so a composed agent or an executor needs nothing else of it.
pub trait GraphLearner<B: Backend>: Learner {
    /// The update graph, with its counters and publisher.
    fn graph(&self) -> &LearnerGraph<B>;
    /// The same, mutably.
    fn graph_mut(&mut self) -> &mut LearnerGraph<B>;

    /// The update graph's executor.
    fn executor(&self) -> &GraphExecutor<B> {
        &self.graph().exec
    }
    /// The update graph's executor, mutably (to call its API methods).
    fn executor_mut(&mut self) -> &mut GraphExecutor<B> {
        &mut self.graph_mut().exec
    }
    /// See [`LearnerGraph::publish_to`].
    fn publish_to(&mut self, actor: &mut GraphActor<B>) -> Result<()> {
        self.graph_mut().publish_to(actor)
    }
    /// See [`LearnerGraph::republish_to`].
    fn republish_to(&mut self, actor: &mut GraphActor<B>) -> Result<()> {
        self.graph_mut().republish_to(actor)
    }
    /// See [`LearnerGraph::save_checkpoint`].
    fn save_checkpoint<'a>(
        &'a self,
        path: &Path,
        host: Vec<(&'a str, &'a dyn HostState)>,
        extra: &'a [(&str, &dyn HostState)],
    ) -> Result<()> {
        self.graph().save_checkpoint(path, host, extra)
    }
    /// See [`LearnerGraph::restore_checkpoint`].
    fn restore_checkpoint<'a>(
        &'a mut self,
        path: &Path,
        host: Vec<(&'a str, &'a mut dyn HostState)>,
        extra: &'a mut [(&str, &mut dyn HostState)],
    ) -> Result<()> {
        self.graph_mut().restore_checkpoint(path, host, extra)
    }
}

/// What every learner holds: its update graph, its checkpointed counters (updates, target
/// syncs, publications) and the publisher of its policy's variables.
pub struct LearnerGraph<B: Backend> {
    pub(crate) exec: GraphExecutor<B>,
    pub(crate) counters: Counters,
    publisher: Publisher,
}

impl<B: Backend> LearnerGraph<B> {
    /// A learner's graph `exec`, whose policy's variables sit under the scope `policy_scope`.
    pub fn new(exec: GraphExecutor<B>, policy_scope: String, seed: u64) -> Self {
        LearnerGraph {
            exec,
            counters: Counters::new(seed),
            publisher: Publisher::new(policy_scope),
        }
    }

    /// The update graph.
    pub fn executor(&self) -> &GraphExecutor<B> {
        &self.exec
    }

    /// The update graph, mutably (to call its API methods).
    pub fn executor_mut(&mut self) -> &mut GraphExecutor<B> {
        &mut self.exec
    }

    /// Counts one more update (checkpoints keep the count); the count after it.
    pub fn counted_update(&mut self) -> u64 {
        self.counters.updates += 1;
        self.counters.updates
    }

    /// Updates counted so far.
    pub fn updates(&self) -> u64 {
        self.counters.updates
    }

    /// A snapshot of the policy's variables, one version after the last publication.
    pub fn publish_snapshot(&mut self) -> Result<WeightSnapshot> {
        self.publisher.publish(&self.exec, &mut self.counters.published)
    }

    /// Publishes the next version straight into `actor`, an actor in this process (device to
    /// device, see [`GraphActor::sync_from`]).
    pub fn publish_to(&mut self, actor: &mut GraphActor<B>) -> Result<()> {
        let version = Publisher::bump(&mut self.counters.published);
        actor.sync_from(&self.exec, version)
    }

    /// Sends `actor` the last published version again, with the weights the learner holds
    /// now (after a restore or an import, which change them outside an update).
    pub fn republish_to(&mut self, actor: &mut GraphActor<B>) -> Result<()> {
        actor.sync_from(&self.exec, self.counters.published)
    }

    /// Saves the graph's variables and RNG, the learner's counters (under `learner`) and the
    /// named `host` states and `extra` states (a worker's) beside them.
    pub fn save_checkpoint<'a>(
        &'a self,
        path: &Path,
        mut host: Vec<(&'a str, &'a dyn HostState)>,
        extra: &'a [(&str, &dyn HostState)],
    ) -> Result<()> {
        host.push(("learner", &self.counters));
        host.extend(extra.iter().map(|(name, state)| (*name, *state)));
        self.exec.save_with(path, &host)
    }

    /// Restores what `save_checkpoint` wrote; on error nothing changes.
    pub fn restore_checkpoint<'a>(
        &'a mut self,
        path: &Path,
        mut host: Vec<(&'a str, &'a mut dyn HostState)>,
        extra: &'a mut [(&str, &mut dyn HostState)],
    ) -> Result<()> {
        host.push(("learner", &mut self.counters));
        host.extend(
            extra
                .iter_mut()
                .map(|(name, state)| (*name, &mut **state as &mut dyn HostState)),
        );
        self.exec.restore_with(path, &mut host)
    }
}
