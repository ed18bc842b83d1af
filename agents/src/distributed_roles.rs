//! Running an algorithm across processes: what its actors send and how its learner takes it.
//! Two shapes cover the distributed layouts: actors that feed replay shards which the learner
//! samples (as Ape-X's do), and actors that stream rollouts into the learner's queue (as
//! IMPALA's do). An algorithm says which is its own and makes its roles
//! ([`DistributedAlgorithm`]); the roles that run it never name it.

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, CoreError, Result};

use crate::actor::GraphActor;
use crate::learner::GraphLearner;
use crate::replay::Replay;
use crate::update_spec::UpdateSpec;

/// Where a distributed run's actors send what they gather.
#[derive(Clone, Debug, PartialEq)]
pub enum Experience {
    /// Actors turn steps into n-step transitions and insert them into replay shards; the
    /// learner samples batches from the shards and sends new priorities back.
    Replay(ReplayFeed),
    /// Actors cut fixed-length rollouts and push them into the learner's bounded queue; the
    /// learner learns on a few at a time, in the order they came.
    Rollouts(RolloutFeed),
}

/// How actors feed replay shards, and how fast the learner may sample them.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayFeed {
    /// Steps each transition's return sums (the n-step adder's n).
    pub n_step: usize,
    /// Gamma, for the n-step returns.
    pub discount: f64,
    /// The updates allowed per frames, counted over all actors, and the batch size.
    pub update: UpdateSpec,
}

/// How actors cut rollouts, and how many the learner takes at once.
#[derive(Clone, Debug, PartialEq)]
pub struct RolloutFeed {
    /// Steps per rollout.
    pub length: usize,
    /// A recurrent policy's LSTM units (`None` for a memoryless one).
    pub memory_units: Option<usize>,
    /// Rollouts per update.
    pub batch_size: usize,
    /// Rollouts the learner's queue holds before it refuses more (and actors wait).
    pub queue_capacity: usize,
}

/// What the distributed roles (actor, replay shard, learner) ask of an algorithm.
/// [`crate::distributed_algorithm`] makes one from a config.
pub trait DistributedAlgorithm<B: Backend>: Send + Sync {
    /// Where its actors send what they gather.
    fn experience(&self) -> Experience;
    /// An actor for these spaces, seeded with `seed`. Feeding rollouts, its `act` must return
    /// the behaviour policy's log-likelihoods as the extra `behaviour_log_probs`.
    fn actor(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<GraphActor<B>>;
    /// A learner for these spaces, seeded with `seed`: it learns on sampled transitions (with
    /// importance weights where the replay gives them) or on stacked rollouts.
    fn learner(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn GraphLearner<B>>>;
    /// The memory one replay shard holds, over transitions of these spaces. An algorithm
    /// whose actors feed rollouts has none.
    fn replay(&self, state_space: &Space, action_space: &Space) -> Result<Box<dyn Replay>> {
        let _ = (state_space, action_space);
        Err(CoreError::Config {
            at: "config.type".into(),
            reason: "this algorithm's actors stream rollouts to the learner; it has no replay shards".into(),
        })
    }
    /// The priorities an actor gives the `records` (a transitions batch) it sends, from its
    /// own graph; `None` leaves them to the shard (new records at the highest priority).
    fn priorities(&self, actor: &mut GraphActor<B>, records: &Value) -> Result<Option<Vec<f64>>> {
        let _ = (actor, records);
        Ok(None)
    }
}
