//! PPO and actor-critic learning from segments (GA3C, as in the paper's A3C): segments of at
//! most `t_max` steps, cut at episode ends (a recurrent policy's run to `t_max` so that the
//! learner unrolls them as one batch).

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use super::actor::pg_actor;
use super::config::PgConfig;
use super::learner::PgLearner;
use crate::actor::GraphActor;
use crate::adders::rollout::RolloutBatch;
use crate::segments::{Segment, SegmentAlgorithm, SegmentLearner};

impl<B: Backend> SegmentAlgorithm<B> for PgConfig {
    fn segment_length(&self, t_max: usize) -> (usize, bool) {
        (t_max, self.recurrence.is_none())
    }

    fn memory_units(&self) -> Option<usize> {
        self.recurrence.as_ref().map(|r| r.units)
    }

    fn default_min_batch(&self) -> usize {
        self.update.batch_size
    }

    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>> {
        pg_actor(self, state_space, action_space, seed)
    }

    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn SegmentLearner<B>>> {
        Ok(Box::new(PgLearner::new(self, state_space, action_space, seed)?))
    }
}

impl<B: Backend> SegmentLearner<B> for PgLearner<B> {
    fn learn_segments(&mut self, segments: &[Segment], time_percentage: f64) -> Result<f64> {
        let mut batch = RolloutBatch::default();
        for s in segments {
            batch.push_sequence(s.transitions.iter());
            for m in &s.memories {
                batch.memory.push(m.memory.clone());
                batch.starts.push(m.start);
            }
        }
        self.learn_rollout(&batch, time_percentage)
    }
}
