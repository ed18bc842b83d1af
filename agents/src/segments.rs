//! Learning from segments: consecutive steps of one actor handed to a learner as one piece,
//! as GA3C's agents hand them to its trainers. An algorithm that learns this way says how
//! (its [`SegmentAlgorithm`]); the layout that runs it never names it.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use crate::actor::GraphActor;
use crate::agent::Transition;
use crate::carried_memory::StepMemory;
use crate::learner::GraphLearner;

/// Consecutive steps of one actor, sent to the learner as one piece.
#[derive(Clone, Debug, Default)]
pub struct Segment {
    /// The steps.
    pub transitions: Vec<Transition>,
    /// The behaviour policy's log-likelihood of each action (IMPALA's V-trace needs them).
    pub log_probs: Vec<f64>,
    /// The weight version each action was predicted with.
    pub versions: Vec<u64>,
    /// What a recurrent policy acted from at each step (empty for a memoryless one).
    pub memories: Vec<StepMemory>,
}

impl Segment {
    /// Steps in the segment.
    pub fn len(&self) -> usize {
        self.transitions.len()
    }

    /// Whether it holds no step.
    pub fn is_empty(&self) -> bool {
        self.transitions.is_empty()
    }
}

/// A learner that updates from segments.
pub trait SegmentLearner<B: Backend>: GraphLearner<B> {
    /// One update on `segments` at `time_percentage` (0 to 1) of the run; the loss.
    fn learn_segments(&mut self, segments: &[Segment], time_percentage: f64) -> Result<f64>;
}

/// How an algorithm acts and learns where actors send segments (GA3C): its actor, its
/// learner and how long its segments are. [`crate::segment_algorithm`] makes one from a
/// config.
pub trait SegmentAlgorithm<B: Backend>: Send + Sync {
    /// Steps per segment given GA3C's `t_max`, and whether an episode's end cuts a segment
    /// short.
    fn segment_length(&self, t_max: usize) -> (usize, bool);
    /// A recurrent policy's LSTM units (`None` for a memoryless one).
    fn memory_units(&self) -> Option<usize>;
    /// The frames to gather before an update, where the layout's settings do not say.
    fn default_min_batch(&self) -> usize;
    /// An actor for these spaces, seeded with `seed`.
    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>>;
    /// A learner for these spaces, seeded with `seed`.
    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn SegmentLearner<B>>>;
}
