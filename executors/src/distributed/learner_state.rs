//! What a distributed learner is without its network: the algorithm it trains and the run's
//! counters its checkpoints hold beside it. Replaying a learner input log needs only these, so
//! they build without the `distributed` feature's gRPC stack.

use std::collections::BTreeMap;
use std::path::Path;

use agents::{DistributedAlgorithm, GraphLearner};
use rlgraph_core::{Backend, CoreError, HostState, Result, SavedState};

use crate::episode_log::EpisodeLog;
use crate::evaluation::{rounds_to_json, Evaluated};
use crate::meta_reader::MetaReader;

/// The checkpoint part that holds a distributed run's counters.
const RUN_PART: &str = "distributed";

/// How the algorithm an RLgraph agent config (`json`) configures runs across processes;
/// refused at `config.type` when it does not.
pub fn distributed_algorithm<B: Backend>(json: &serde_json::Value) -> Result<Box<dyn DistributedAlgorithm<B>>> {
    agents::distributed_algorithm::<B>(json)?.ok_or_else(|| CoreError::Config {
        at: "config.type".into(),
        reason: format!(
            "{} does not run across processes; distributed runs take {} and algorithms registered with \
             agents::register_distributed_algorithm; train it with `rlgraph train`",
            json.get("type").unwrap_or(&serde_json::Value::Null),
            agents::types_offering::<B>(agents::Layout::Distributed).join(", ")
        ),
    })
}

/// The run's counters that ride in the learner's checkpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunCounters {
    /// Frames stepped by all actors.
    pub(crate) frames: u64,
    /// Every finished episode, in the order reported (each at the frames counted when its
    /// report arrived).
    pub(crate) episodes: EpisodeLog,
    /// Every greedy evaluation round, in order.
    pub(crate) evaluations: Vec<Evaluated>,
}

impl HostState for RunCounters {
    fn save_state(&self) -> rlgraph_core::Result<SavedState> {
        let mut meta = serde_json::Map::new();
        meta.insert("frames".into(), self.frames.into());
        self.episodes.to_meta(&mut meta);
        meta.insert("evaluations".into(), rounds_to_json(&self.evaluations));
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: meta.into(),
        })
    }

    fn check_state(&self, state: &SavedState) -> rlgraph_core::Result<()> {
        parse_counters(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> rlgraph_core::Result<()> {
        *self = parse_counters(&state)?;
        Ok(())
    }
}

fn parse_counters(state: &SavedState) -> rlgraph_core::Result<RunCounters> {
    let bad = |reason: String| CoreError::Checkpoint {
        path: "(distributed run counters)".into(),
        reason,
    };
    let read = MetaReader {
        meta: &state.meta,
        bad: &bad,
    };
    Ok(RunCounters {
        frames: read.count("frames")?,
        episodes: EpisodeLog::from_meta(&state.meta, &bad)?,
        evaluations: read.rounds("evaluations")?,
    })
}

/// Saves `learner` with the run's `counters` beside it, as a distributed learner's checkpoint.
pub(crate) fn save_learner<B: Backend>(
    learner: &dyn GraphLearner<B>,
    counters: &RunCounters,
    path: &Path,
) -> Result<()> {
    learner.save_checkpoint(path, vec![(RUN_PART, counters)], &[])
}

/// Restores what [`save_learner`] saved into `learner`; the run's counters.
pub(crate) fn restore_learner<B: Backend>(learner: &mut dyn GraphLearner<B>, path: &Path) -> Result<RunCounters> {
    let mut counters = RunCounters::default();
    learner.restore_checkpoint(path, vec![(RUN_PART, &mut counters)], &mut [])?;
    Ok(counters)
}
