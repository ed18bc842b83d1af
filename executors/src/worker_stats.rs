//! What every executor reports: RLgraph's worker statistics, the progress a callback sees,
//! and how long a run goes on.

use serde_json::{json, Value as Json};

use crate::evaluation::Evaluated;

/// RLgraph's worker statistics for one `execute_*` call.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerStats {
    /// Environment steps taken (over all copies).
    pub timesteps_executed: u64,
    /// Episodes finished.
    pub episodes_executed: u64,
    /// Environment steps per wall-clock second (the agent's time included).
    pub env_frames_per_second: f64,
    /// Mean return of the finished episodes.
    pub mean_episode_reward: f64,
    /// Mean return of the last 10 finished episodes.
    pub mean_episode_reward_last_10_episodes: f64,
    /// Best return.
    pub max_episode_reward: f64,
    /// Return of the last finished episode.
    pub final_episode_reward: f64,
    /// Every finished episode's return, in order.
    pub episode_rewards: Vec<f64>,
    /// Updates done.
    pub updates: u64,
    /// Wall-clock seconds.
    pub runtime_seconds: f64,
    /// Of `runtime_seconds`, those the single-threaded worker spent in greedy evaluation
    /// rounds (0 in the other layouts, which play theirs beside training), so that a
    /// comparison with a peer whose clock stops during its evaluations can stop ours too.
    pub evaluation_seconds: f64,
    /// The step at which the target return, if one was set, was reached (the run stops
    /// there): by the mean return of the last 100 training episodes, or, when the run
    /// evaluates, by an evaluation round's mean.
    pub solved_at_timestep: Option<u64>,
    /// The greedy evaluation rounds played, in order (see [`crate::Evaluation`]).
    pub evaluations: Vec<Evaluated>,
    /// The step at which a loss or weight first became NaN or infinite, when the run went on
    /// under [`crate::OnDivergence::Warn`] (under the default, the run stops with an error).
    pub diverged_at_timestep: Option<u64>,
}

/// Whether the mean return of the last 100 episodes has reached `target` (never without one).
pub(crate) fn solved(episode_rewards: &[f64], target: Option<f64>) -> bool {
    match target {
        Some(target) if episode_rewards.len() >= 100 => {
            episode_rewards[episode_rewards.len() - 100..].iter().sum::<f64>() / 100.0 >= target
        }
        _ => false,
    }
}

impl WorkerStats {
    /// The statistics of a run that took `steps` environment steps and `updates` updates in
    /// `runtime` seconds and finished episodes with these returns, in order.
    pub fn from_returns(
        steps: u64,
        episode_rewards: Vec<f64>,
        updates: u64,
        runtime: f64,
        solved_at_timestep: Option<u64>,
    ) -> Self {
        let mean = |r: &[f64]| {
            if r.is_empty() {
                f64::NAN
            } else {
                r.iter().sum::<f64>() / r.len() as f64
            }
        };
        let last10 = &episode_rewards[episode_rewards.len().saturating_sub(10)..];
        WorkerStats {
            timesteps_executed: steps,
            episodes_executed: episode_rewards.len() as u64,
            env_frames_per_second: steps as f64 / runtime.max(1e-9),
            mean_episode_reward: mean(&episode_rewards),
            mean_episode_reward_last_10_episodes: mean(last10),
            max_episode_reward: episode_rewards.iter().copied().fold(f64::NAN, f64::max),
            final_episode_reward: episode_rewards.last().copied().unwrap_or(f64::NAN),
            episode_rewards,
            updates,
            runtime_seconds: runtime,
            evaluation_seconds: 0.0,
            solved_at_timestep,
            evaluations: vec![],
            diverged_at_timestep: None,
        }
    }

    /// The statistics as JSON (RLgraph's keys, without the per-episode list).
    pub fn to_json(&self) -> Json {
        json!({
            "timesteps_executed": self.timesteps_executed,
            "episodes_executed": self.episodes_executed,
            "env_frames_per_second": self.env_frames_per_second,
            "mean_episode_reward": self.mean_episode_reward,
            "mean_episode_reward_last_10_episodes": self.mean_episode_reward_last_10_episodes,
            "max_episode_reward": self.max_episode_reward,
            "final_episode_reward": self.final_episode_reward,
            "updates": self.updates,
            "runtime_seconds": self.runtime_seconds,
            "evaluation_seconds": self.evaluation_seconds,
            "solved_at_timestep": self.solved_at_timestep,
            "diverged_at_timestep": self.diverged_at_timestep,
            "evaluations": self
                .evaluations
                .iter()
                .map(|e| json!({"timestep": e.timestep, "mean_return": e.mean_return}))
                .collect::<Vec<_>>(),
        })
    }
}

/// What a progress callback sees after each vector step.
#[derive(Clone, Debug)]
pub struct Progress<'a> {
    /// Environment steps so far in this call.
    pub timesteps: u64,
    /// Episodes finished so far.
    pub episodes: u64,
    /// Returns of finished episodes so far.
    pub episode_rewards: &'a [f64],
    /// The last update's loss.
    pub loss: Option<f64>,
    /// Seconds since the call started.
    pub elapsed: f64,
    /// The run's evaluation rounds so far (every leg of the run).
    pub evaluations: &'a [Evaluated],
    /// The layout's own measures now, as TensorBoard tags and values (GA3C's throughput,
    /// queue depths and policy lag; none for one thread).
    pub gauges: &'a [(&'static str, f64)],
}

/// How long a [`crate::Worker`]'s `execute_run` runs, counted over the whole run (every
/// call and every resumed leg together).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLength {
    /// The run's total environment steps; schedules see the share of these done.
    pub timesteps: u64,
    /// Stop once the run has finished this many episodes, if set.
    pub episodes: Option<u64>,
    /// Pause once the run's steps reach this, short of `timesteps` (a job that must end
    /// early; resume it from a checkpoint later).
    pub pause_at: Option<u64>,
}

impl RunLength {
    /// The run step this leg stops at: `pause_at` where it comes before `timesteps`.
    pub fn stop_at(&self) -> u64 {
        self.pause_at.map_or(self.timesteps, |p| p.min(self.timesteps))
    }
}
