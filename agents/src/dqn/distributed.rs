//! DQN across processes, as Ape-X runs it: actors feed n-step transitions to replay shards,
//! prioritized by the actors' own Q-values where the config asks for worker-side priorities.

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, Result};

use super::actor::{apex_priorities, dqn_actor};
use super::builder::dqn_replay;
use super::config::DqnConfig;
use super::learner::DqnLearner;
use crate::actor::GraphActor;
use crate::distributed_roles::{DistributedAlgorithm, Experience, ReplayFeed};
use crate::learner::GraphLearner;
use crate::replay::Replay;

impl<B: Backend> DistributedAlgorithm<B> for DqnConfig {
    fn experience(&self) -> Experience {
        Experience::Replay(ReplayFeed {
            n_step: self.n_step,
            discount: self.discount,
            update: self.update.clone(),
        })
    }

    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>> {
        dqn_actor(self, state_space, action_space, seed)
    }

    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn GraphLearner<B>>> {
        Ok(Box::new(DqnLearner::new(self, state_space, action_space, seed)?))
    }

    fn replay(&self, state_space: &Space, action_space: &Space) -> Result<Box<dyn Replay>> {
        dqn_replay(self, state_space, action_space)
    }

    fn priorities(&self, actor: &mut GraphActor<B>, records: &Value) -> Result<Option<Vec<f64>>> {
        if !self.worker_side_priorities {
            return Ok(None);
        }
        apex_priorities(actor, records, self.discount, self.n_step).map(Some)
    }
}
