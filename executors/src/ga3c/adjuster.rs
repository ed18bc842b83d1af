//! `ThreadAdjuster`: GA3C's dynamic adjustment of the thread counts. Each measuring window
//! it tries one change (NA, NP or NT, up or down by one), keeps it when the window's
//! training throughput beat the window before, and reverts it otherwise.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value as Json};

use super::spec::ThreadCounts;

/// One window of the adjustment, as the trajectory logs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Adjustment {
    /// Seconds since the run started, at the window's end.
    pub at_seconds: f64,
    /// The counts the window ran with.
    pub counts: ThreadCounts,
    /// The training throughput measured over the window (trained frames per second).
    pub tps: f64,
    /// What the adjuster made of it.
    pub verdict: Verdict,
}

/// What a window decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A window at the kept counts: its throughput is the next trial's baseline.
    Baseline,
    /// A trial that beat its baseline: the change stays.
    Kept,
    /// A trial that did not: the counts go back.
    Reverted,
}

/// Where the adjuster is between windows.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// The next window measures the kept counts.
    Baseline,
    /// The next window measures a change from `previous`, against `baseline` TPS.
    Trial { previous: ThreadCounts, baseline: f64 },
}

/// Tunes [`ThreadCounts`] toward higher training throughput, one change per window.
///
/// GA3C compares each trial with the best throughput seen so far; one lucky window then
/// blocks every later change. Here a rejected trial is followed by a fresh baseline window,
/// so a trial always competes with a recent measurement of the counts it would replace.
#[derive(Clone, Debug)]
pub struct ThreadAdjuster {
    counts: ThreadCounts,
    max: ThreadCounts,
    phase: Phase,
    rng: ChaCha8Rng,
    trajectory: Vec<Adjustment>,
}

impl ThreadAdjuster {
    /// An adjuster starting at `counts`, never above `max` nor below one of each, drawing its
    /// changes from `seed`.
    pub fn new(counts: ThreadCounts, max: ThreadCounts, seed: u64) -> Self {
        ThreadAdjuster {
            counts,
            max,
            phase: Phase::Baseline,
            rng: ChaCha8Rng::seed_from_u64(seed),
            trajectory: vec![],
        }
    }

    /// The counts to run with now.
    pub fn counts(&self) -> ThreadCounts {
        self.counts
    }

    /// Every window so far.
    pub fn trajectory(&self) -> &[Adjustment] {
        &self.trajectory
    }

    /// Ends a window that ran at [`counts`](Self::counts) and reached `tps`; returns the
    /// counts for the next window.
    pub fn observe(&mut self, tps: f64, at_seconds: f64) -> ThreadCounts {
        let ran = self.counts;
        let verdict = match self.phase {
            Phase::Baseline => {
                self.try_change(tps);
                Verdict::Baseline
            }
            Phase::Trial { baseline, .. } if tps > baseline => {
                self.try_change(tps);
                Verdict::Kept
            }
            Phase::Trial { previous, .. } => {
                self.counts = previous;
                self.phase = Phase::Baseline;
                Verdict::Reverted
            }
        };
        self.trajectory.push(Adjustment {
            at_seconds,
            counts: ran,
            tps,
            verdict,
        });
        self.counts
    }

    /// Moves one role's count by one, to a value inside the bounds, against `baseline`.
    fn try_change(&mut self, baseline: f64) {
        let previous = self.counts;
        loop {
            let mut next = previous;
            let (count, max) = match self.rng.random_range(0..3) {
                0 => (&mut next.agents, self.max.agents),
                1 => (&mut next.predictors, self.max.predictors),
                _ => (&mut next.trainers, self.max.trainers),
            };
            let up = self.rng.random_bool(0.5);
            let moved = if up { *count + 1 } else { count.saturating_sub(1) };
            if (1..=max).contains(&moved) {
                *count = moved;
                self.counts = next;
                self.phase = Phase::Trial { previous, baseline };
                return;
            }
            if self.max
                == (ThreadCounts {
                    agents: 1,
                    predictors: 1,
                    trainers: 1,
                })
            {
                // Nothing can move.
                self.phase = Phase::Baseline;
                return;
            }
        }
    }
}

impl Adjustment {
    /// The window as JSON (`summary.json`'s `ga3c.adjustments`).
    pub fn to_json(&self) -> Json {
        json!({
            "at_seconds": self.at_seconds,
            "agents": self.counts.agents,
            "predictors": self.counts.predictors,
            "trainers": self.counts.trainers,
            "tps": self.tps,
            "verdict": match self.verdict {
                Verdict::Baseline => "baseline",
                Verdict::Kept => "kept",
                Verdict::Reverted => "reverted",
            },
        })
    }
}
