//! `Worker`: what the single-threaded worker and the device worker share, so that one driver
//! (`rlgraph train`'s, or a library user's) runs, pauses, checkpoints and resumes either.

use std::path::Path;

use rlgraph_core::Result;

use crate::run_tally::RunTally;
use crate::worker_stats::{Progress, RunLength, WorkerStats};

/// A worker that trains in legs: each call runs until the whole run reaches a length, and a
/// checkpoint taken between calls resumes the run exactly.
pub trait Worker {
    /// Trains until the whole run (every call and resumed leg) reaches `length`, or until
    /// solved; `progress` is called as it goes. The statistics cover this call.
    fn execute_run(&mut self, length: RunLength, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<WorkerStats>;
    /// Saves the agent with the worker's run beside it.
    fn save_checkpoint(&mut self, path: &Path) -> Result<()>;
    /// Restores a checkpoint written by `save_checkpoint`; on error the agent is unchanged.
    fn resume(&mut self, path: &Path) -> Result<()>;
    /// The run's counts, episodes and evaluation rounds so far.
    fn tally(&self) -> &RunTally;
    /// The whole run's statistics, given this call's `leg` (whose speed and outcome they
    /// keep): the counts, episodes and evaluation rounds of every leg.
    fn run_stats(&self, leg: &WorkerStats) -> WorkerStats {
        self.tally().whole_run(leg)
    }
}
