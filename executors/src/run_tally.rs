//! `RunTally`: what every executor counts over a whole run, resumed legs included, and how a
//! checkpoint keeps it. The single-threaded worker, the device worker and GA3C each save one
//! beside their agent, so a resumed run of any of them counts on from where it stopped.

use rlgraph_core::{CoreError, Result};
use serde_json::Value as Json;

use crate::episode_log::EpisodeLog;
use crate::evaluation::{rounds_to_json, Evaluated};
use crate::meta_reader::MetaReader;

/// A run's counts and results so far, over every call and every resumed leg.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunTally {
    /// Environment steps (over all copies).
    pub timesteps: u64,
    /// Updates.
    pub updates: u64,
    /// Every finished episode, in order.
    pub episodes: EpisodeLog,
    /// Every greedy evaluation round, in order.
    pub evaluations: Vec<Evaluated>,
}

impl RunTally {
    /// The tally as checkpoint metadata (its keys beside the executor's own).
    pub(crate) fn to_meta(&self) -> serde_json::Map<String, Json> {
        let mut meta = serde_json::Map::new();
        meta.insert("timesteps".into(), self.timesteps.into());
        meta.insert("updates".into(), self.updates.into());
        self.episodes.to_meta(&mut meta);
        meta.insert("evaluations".into(), rounds_to_json(&self.evaluations));
        meta
    }

    /// The tally [`RunTally::to_meta`] wrote into `meta`; `bad` makes the error for a key that
    /// is missing or holds the wrong thing. Checkpoints written before evaluation rounds
    /// existed have none.
    pub(crate) fn from_meta(meta: &Json, bad: &impl Fn(String) -> CoreError) -> Result<RunTally> {
        let read = MetaReader { meta, bad };
        Ok(RunTally {
            timesteps: read.count("timesteps")?,
            updates: read.count("updates")?,
            episodes: EpisodeLog::from_meta(meta, bad)?,
            evaluations: read.rounds("evaluations")?,
        })
    }

    /// Whether the run has reached `target` (never without one): by the last evaluation
    /// round's mean where the run `evaluates`, else by the mean of the last 100 episodes.
    pub fn reached(&self, target: Option<f64>, evaluates: bool) -> bool {
        match (evaluates, target) {
            (true, Some(target)) => self.evaluations.last().is_some_and(|e| e.mean_return >= target),
            _ => crate::worker_stats::solved(self.episodes.returns(), target),
        }
    }

    /// The whole run's statistics, given one leg's (whose speed and outcome they keep): the
    /// counts, every episode and every round are the run's.
    pub fn whole_run(&self, leg: &crate::WorkerStats) -> crate::WorkerStats {
        let mut run = crate::WorkerStats::from_returns(
            self.timesteps,
            self.episodes.returns().to_vec(),
            self.updates,
            leg.runtime_seconds,
            leg.solved_at_timestep,
        );
        run.env_frames_per_second = leg.env_frames_per_second;
        run.evaluation_seconds = leg.evaluation_seconds;
        run.diverged_at_timestep = leg.diverged_at_timestep;
        run.evaluations = self.evaluations.clone();
        run
    }
}

impl RunTally {
    /// One leg's share of `run`, the whole run's statistics at the leg's end, where `self` is
    /// the tally the leg started from: its steps, episodes and updates; its speed, outcome and
    /// rounds as they are.
    pub fn leg_of(&self, run: &crate::WorkerStats) -> crate::WorkerStats {
        let mut leg = crate::WorkerStats::from_returns(
            run.timesteps_executed.saturating_sub(self.timesteps),
            run.episode_rewards
                .get(self.episodes.len()..)
                .unwrap_or_default()
                .to_vec(),
            run.updates.saturating_sub(self.updates),
            run.runtime_seconds,
            run.solved_at_timestep,
        );
        leg.env_frames_per_second = run.env_frames_per_second;
        leg.evaluation_seconds = run.evaluation_seconds;
        leg.diverged_at_timestep = run.diverged_at_timestep;
        leg.evaluations.clone_from(&run.evaluations);
        leg
    }
}
