//! Evaluation rounds beside a learner that is not an agent: a greedy actor of its own takes
//! the learner's weights and plays an [`Evaluation`] round. GA3C plays them on its watching
//! thread while the agents go on training; a distributed learner between its updates.

use std::ops::Deref;

use agents::{Actor, CarriedMemory, GraphActor, WeightSnapshot};
use rlgraph_core::{Backend, Result};

use crate::evaluation::{Evaluated, Evaluation};

/// Greedy rounds every so many frames, and their results.
pub(crate) struct GreedyRounds<B: Backend> {
    pub evaluation: Evaluation,
    pub actor: GraphActor<B>,
    /// A recurrent policy's LSTM units: each round starts from zero memories.
    pub memory_units: Option<usize>,
    /// The run's seed, from which each round's starting states are drawn.
    pub seed: u64,
    /// The rounds played, in order.
    pub done: Vec<Evaluated>,
}

impl<B: Backend> GreedyRounds<B> {
    /// Plays a round if one is due now that the run went from `before` to `frames` steps,
    /// with the policy weights `snapshot` gives (the learner's latest published snapshot, so
    /// a round never holds the learner).
    pub fn play_if_due<S: Deref<Target = WeightSnapshot>>(
        &mut self,
        snapshot: impl FnOnce() -> Result<S>,
        before: u64,
        frames: u64,
    ) -> Result<()> {
        if !self.evaluation.due(before, frames) {
            return Ok(());
        }
        let round = frames / self.evaluation.every();
        self.actor.load(&*snapshot()?)?;
        let mut memory = self.memory_units.map(CarriedMemory::new);
        let actor = &mut self.actor;
        let mean_return = self.evaluation.play_with(self.seed, round, |states| {
            Ok(match &mut memory {
                Some(m) => m.act(actor, states, false)?,
                None => actor.act(states, false, 0.0)?,
            }
            .actions)
        })?;
        self.done.push(Evaluated {
            timestep: frames,
            mean_return,
        });
        Ok(())
    }
}
