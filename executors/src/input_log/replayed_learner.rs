//! The learner a log replays into, whichever layout recorded it, with the run's counts that
//! its checkpoints hold beside it.

use std::path::Path;

use agents::{GraphLearner, WeightSnapshot};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, HostState, Result, SavedState};
use serde_json::Value as Json;

use super::record::LogRecord;
use crate::distributed::learner_state::{distributed_algorithm, restore_learner, save_learner, RunCounters};
use crate::evaluation::rounds_from_json;
use crate::ga3c::{ga3c_algorithm, segments_from_value, Ga3cLearner, RunRecord, RUN_PART};

/// A fresh learner of a layout's kind, as the log's `started` record describes it.
pub(crate) enum ReplayedLearner<B: Backend> {
    /// A distributed run's learner; the run's counts come from the `reported` and `evaluated`
    /// records.
    Distributed {
        learner: Box<dyn GraphLearner<B>>,
        counters: RunCounters,
    },
    /// GA3C's shared learner; its threads count the run, so each `checkpointed` record holds
    /// the counts.
    Ga3c { learner: Ga3cLearner<B>, run: RunRecord },
}

impl<B: Backend> ReplayedLearner<B> {
    /// A fresh learner of `config` for the layout named `layout`.
    pub(crate) fn new(layout: &str, config: &Json, state: &Space, action: &Space, seed: u64) -> Result<Self> {
        match layout {
            "distributed" => Ok(ReplayedLearner::Distributed {
                learner: distributed_algorithm::<B>(config)?.learner(state, action, seed)?,
                counters: RunCounters::default(),
            }),
            "ga3c" => Ok(ReplayedLearner::Ga3c {
                learner: ga3c_algorithm::<B>(config)?.learner(state, action, seed)?,
                run: RunRecord::default(),
            }),
            other => Err(CoreError::Config {
                at: "layout".into(),
                reason: format!("a log of the layout {other:?}; this program replays distributed and ga3c"),
            }),
        }
    }

    /// One update on a logged batch; the loss.
    pub(crate) fn learn(&mut self, batch: &Value, t: f64) -> Result<f64> {
        match self {
            ReplayedLearner::Distributed { learner, .. } => Ok(learner.learn(batch, t)?.loss),
            ReplayedLearner::Ga3c { learner, .. } => learner.learn_segments(&segments_from_value(batch)?, t),
        }
    }

    /// The next publication.
    pub(crate) fn publish(&mut self) -> Result<WeightSnapshot> {
        match self {
            ReplayedLearner::Distributed { learner, .. } => learner.publish(),
            ReplayedLearner::Ga3c { learner, .. } => learner.publish(),
        }
    }

    /// Updates done.
    pub(crate) fn updates(&self) -> u64 {
        match self {
            ReplayedLearner::Distributed { learner, .. } => learner.updates(),
            ReplayedLearner::Ga3c { learner, .. } => learner.updates(),
        }
    }

    /// The run's frames as its counts hold them.
    pub(crate) fn frames(&self) -> u64 {
        match self {
            ReplayedLearner::Distributed { counters, .. } => counters.frames,
            ReplayedLearner::Ga3c { run, .. } => run.tally.timesteps,
        }
    }

    /// Counts what `record` says the run counted (reports, rounds, a checkpoint's counts).
    pub(crate) fn count(&mut self, record: &LogRecord) -> Result<()> {
        let bad = |reason: String| CoreError::Config {
            at: record.name().into(),
            reason,
        };
        match (self, record) {
            (
                ReplayedLearner::Distributed { counters, .. },
                LogRecord::Reported {
                    frames,
                    episode_returns,
                },
            ) => {
                counters.frames = counters.frames.saturating_add(*frames);
                counters.episodes.extend(episode_returns, counters.frames);
            }
            (ReplayedLearner::Distributed { counters, .. }, LogRecord::Evaluated { rounds }) => {
                let list = rounds
                    .as_array()
                    .ok_or_else(|| bad("the rounds are not a list".into()))?;
                counters.evaluations = rounds_from_json(list, bad)?;
            }
            (ReplayedLearner::Ga3c { run, .. }, LogRecord::Checkpointed { run: meta, .. }) => {
                run.load_state(SavedState {
                    tensors: Default::default(),
                    meta: meta.clone(),
                })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Saves the learner and the run's counts as the layout's checkpoint.
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        match self {
            ReplayedLearner::Distributed { learner, counters } => save_learner(learner.as_ref(), counters, path),
            ReplayedLearner::Ga3c { learner, run } => learner.save_checkpoint(path, vec![(RUN_PART, run)], &[]),
        }
    }

    /// Restores what [`ReplayedLearner::save`] saved.
    pub(crate) fn restore(&mut self, path: &Path) -> Result<()> {
        match self {
            ReplayedLearner::Distributed { learner, counters } => {
                *counters = restore_learner(learner.as_mut(), path)?;
            }
            ReplayedLearner::Ga3c { learner, run } => {
                learner.restore_checkpoint(path, vec![(RUN_PART, run)], &mut [])?
            }
        }
        Ok(())
    }
}
