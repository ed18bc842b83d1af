//! What the GA3C executor measures: counters the threads share, the policy-lag
//! distribution, and the statistics a run ends with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value as Json};

use super::adjuster::Adjustment;
use super::spec::ThreadCounts;
use crate::{EpisodeLog, WorkerStats};

/// Counters shared by every thread (relaxed atomics: they are statistics, not locks).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Environment steps taken.
    pub frames: AtomicU64,
    /// States predicted.
    pub predictions: AtomicU64,
    /// Forward passes run.
    pub forward_passes: AtomicU64,
    /// Updates done.
    pub trainings: AtomicU64,
    /// Frames the updates learned from.
    pub trained_frames: AtomicU64,
    /// Finished episodes, in the order they finished.
    pub episodes: Mutex<EpisodeLog>,
    /// The policy lag of every trained frame.
    pub lag: Mutex<LagHistogram>,
    /// The last update's loss, as bits (`f64::to_bits`).
    pub last_loss: AtomicU64,
}

impl Counters {
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// How many trained frames were acted with weights `k` versions older than the learner's
/// (the policy lag), for each `k`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LagHistogram {
    /// `counts[k]`: frames with lag `k`.
    pub counts: Vec<u64>,
}

impl LagHistogram {
    /// Counts one frame of lag `lag`.
    pub fn record(&mut self, lag: u64) {
        let k = lag as usize;
        if self.counts.len() <= k {
            self.counts.resize(k + 1, 0);
        }
        self.counts[k] += 1;
    }

    /// Frames counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The mean lag (NaN before any frame).
    pub fn mean(&self) -> f64 {
        let weighted: u64 = self.counts.iter().enumerate().map(|(k, c)| k as u64 * c).sum();
        weighted as f64 / self.total() as f64
    }

    /// The smallest lag that at least `q` (0 to 1) of the frames do not exceed.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let need = (q.clamp(0.0, 1.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        self.counts.iter().enumerate().find_map(|(k, c)| {
            seen += c;
            (seen >= need).then_some(k as u64)
        })
    }

    /// Mean, median, 90th percentile, maximum and the counts, as JSON.
    pub fn to_json(&self) -> Json {
        json!({
            "mean": self.mean(),
            "p50": self.quantile(0.5),
            "p90": self.quantile(0.9),
            "max": self.quantile(1.0),
            "frames_by_lag": self.counts,
        })
    }
}

/// What a GA3C run ends with.
#[derive(Clone, Debug)]
pub struct Ga3cStats {
    /// RLgraph's worker statistics (episodes, returns, frames per second, updates).
    pub worker: WorkerStats,
    /// States predicted.
    pub predictions: u64,
    /// Forward passes run (one per predictor batch).
    pub forward_passes: u64,
    /// Updates done.
    pub trainings: u64,
    /// Frames the updates learned from.
    pub trained_frames: u64,
    /// Mean prediction-queue depth, sampled by the executor's main thread.
    pub mean_prediction_queue: f64,
    /// Mean training-queue depth (experience segments waiting).
    pub mean_training_queue: f64,
    /// The policy lag of every trained frame.
    pub lag: LagHistogram,
    /// The counts at the end.
    pub final_counts: ThreadCounts,
    /// The adjustment's windows (empty with fixed counts).
    pub adjustments: Vec<Adjustment>,
}

impl Ga3cStats {
    /// States per forward pass.
    pub fn mean_prediction_batch(&self) -> f64 {
        self.predictions as f64 / self.forward_passes.max(1) as f64
    }

    /// Everything as JSON: the worker statistics with a `ga3c` object beside them.
    pub fn to_json(&self) -> Json {
        let seconds = self.worker.runtime_seconds.max(1e-9);
        let mut j = self.worker.to_json();
        j["ga3c"] = json!({
            "predictions": self.predictions,
            "forward_passes": self.forward_passes,
            "predictions_per_second": self.predictions as f64 / seconds,
            "mean_prediction_batch": self.mean_prediction_batch(),
            "trainings": self.trainings,
            "trainings_per_second": self.trainings as f64 / seconds,
            "trained_frames": self.trained_frames,
            "mean_prediction_queue": self.mean_prediction_queue,
            "mean_training_queue": self.mean_training_queue,
            "policy_lag": self.lag.to_json(),
            "final_counts": {
                "agents": self.final_counts.agents,
                "predictors": self.final_counts.predictors,
                "trainers": self.final_counts.trainers,
            },
            "adjustments": self.adjustments.iter().map(Adjustment::to_json).collect::<Vec<_>>(),
        });
        j
    }
}
