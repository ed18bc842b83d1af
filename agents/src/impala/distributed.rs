//! IMPALA across processes: actors stream rollouts, each step's behaviour log-likelihood kept
//! for V-trace, into the learner's bounded queue.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use super::actor::impala_actor;
use super::config::ImpalaConfig;
use super::learner::ImpalaLearner;
use crate::actor::GraphActor;
use crate::distributed_roles::{DistributedAlgorithm, Experience, RolloutFeed};
use crate::learner::GraphLearner;

impl<B: Backend> DistributedAlgorithm<B> for ImpalaConfig {
    fn experience(&self) -> Experience {
        Experience::Rollouts(RolloutFeed {
            length: self.rollout_length,
            memory_units: self.memory_units(),
            batch_size: self.update.batch_size.max(1),
            queue_capacity: self.queue_capacity,
        })
    }

    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>> {
        impala_actor(self, state_space, action_space, seed)
    }

    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn GraphLearner<B>>> {
        Ok(Box::new(ImpalaLearner::new(self, state_space, action_space, seed)?))
    }
}
