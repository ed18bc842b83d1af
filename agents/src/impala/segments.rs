//! IMPALA learning from segments (GA3C): rollouts of `worker_sample_size` steps that run
//! across episode ends, each step's behaviour log-likelihood kept for V-trace, which corrects
//! the policy lag GA3C's predictors bring.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use super::actor::impala_actor;
use super::config::ImpalaConfig;
use super::learner::ImpalaLearner;
use crate::actor::GraphActor;
use crate::adders::rollout_adder::rollout_record;
use crate::batch::stack;
use crate::learner::Learner;
use crate::segments::{Segment, SegmentAlgorithm, SegmentLearner};

impl<B: Backend> SegmentAlgorithm<B> for ImpalaConfig {
    fn segment_length(&self, _t_max: usize) -> (usize, bool) {
        (self.rollout_length, false)
    }

    fn memory_units(&self) -> Option<usize> {
        ImpalaConfig::memory_units(self)
    }

    fn default_min_batch(&self) -> usize {
        self.update.batch_size * self.rollout_length
    }

    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>> {
        impala_actor(self, state_space, action_space, seed)
    }

    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn SegmentLearner<B>>> {
        Ok(Box::new(ImpalaLearner::new(self, state_space, action_space, seed)?))
    }
}

impl<B: Backend> SegmentLearner<B> for ImpalaLearner<B> {
    fn learn_segments(&mut self, segments: &[Segment], time_percentage: f64) -> Result<f64> {
        let records = segments
            .iter()
            .map(|s| {
                let memories = (!s.memories.is_empty()).then_some(s.memories.as_slice());
                rollout_record(&s.transitions, &s.log_probs, memories)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.learn(&stack(&records)?, time_percentage)?.loss)
    }
}
