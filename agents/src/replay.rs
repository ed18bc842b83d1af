//! The replay role: one trait over the replay memories, so a learner's feeder does not care
//! whether records sit in a local memory or (later) in a remote shard.

use rand::RngCore;
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{HostState, Result};
use rlgraph_memories::{PrioritizedReplay, ReplayMemory};

use crate::dqn::config::MemoryKind;

/// A batch drawn from a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplaySample {
    /// The records, batched.
    pub records: Value,
    /// Each record's slot, for `update_priorities` (`None` for uniform replay).
    pub indices: Option<Vec<usize>>,
    /// Each record's importance weight (`None` for uniform replay).
    pub weights: Option<Vec<f64>>,
}

impl ReplaySample {
    /// The records as a learner's batch: with importance weights, they join the records as
    /// `importance_weights`.
    pub fn batch(&self) -> Result<Value> {
        let mut records = self.records.clone();
        if let (Some(w), Value::Dict(d)) = (&self.weights, &mut records) {
            let w = Value::Float32(Array::new([w.len()], w.iter().map(|&x| x as f32).collect())?);
            d.insert("importance_weights".into(), w);
        }
        Ok(records)
    }
}

/// A store of records that a learner samples from.
pub trait Replay: Send {
    /// Inserts a batch of records; `priorities`, one per record, overrides the memory's
    /// choice (new records at the largest priority seen) where the memory has priorities.
    fn insert(&mut self, records: &Value, priorities: Option<&[f64]>) -> Result<()>;
    /// `n` records, drawn with `rng`.
    fn sample(&self, n: usize, rng: &mut dyn RngCore) -> Result<ReplaySample>;
    /// New priorities for the records at `indices` (a no-op for uniform replay).
    fn update_priorities(&mut self, indices: &[usize], priorities: &[f64]) -> Result<()>;
    /// Records held.
    fn size(&self) -> usize;
    /// The priorities of the records held (`p^alpha`, as the memory weighs them), oldest slot
    /// first; `None` for uniform replay.
    fn priorities(&self) -> Option<Vec<f64>>;
    /// The memory as checkpoint state.
    fn state(&self) -> &dyn HostState;
    /// The memory as checkpoint state, to restore into.
    fn state_mut(&mut self) -> &mut dyn HostState;
    /// The space of one record.
    fn record_space(&self) -> &Space;
    /// The most records it holds.
    fn capacity(&self) -> usize;
    /// Uniform, or prioritized with its exponents.
    fn kind(&self) -> MemoryKind;
}

impl Replay for ReplayMemory {
    fn insert(&mut self, records: &Value, _priorities: Option<&[f64]>) -> Result<()> {
        Ok(self.insert_records(records)?)
    }

    fn sample(&self, n: usize, rng: &mut dyn RngCore) -> Result<ReplaySample> {
        Ok(ReplaySample {
            records: self.get_records(n, rng)?,
            indices: None,
            weights: None,
        })
    }

    fn update_priorities(&mut self, _indices: &[usize], _priorities: &[f64]) -> Result<()> {
        Ok(())
    }

    fn size(&self) -> usize {
        ReplayMemory::size(self)
    }

    fn priorities(&self) -> Option<Vec<f64>> {
        None
    }

    fn state(&self) -> &dyn HostState {
        self
    }

    fn state_mut(&mut self) -> &mut dyn HostState {
        self
    }

    fn record_space(&self) -> &Space {
        ReplayMemory::record_space(self)
    }

    fn capacity(&self) -> usize {
        ReplayMemory::capacity(self)
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::Replay
    }
}

impl Replay for PrioritizedReplay {
    fn insert(&mut self, records: &Value, priorities: Option<&[f64]>) -> Result<()> {
        match priorities {
            None => Ok(self.insert_records(records)?),
            Some(p) => Ok(self.insert_records_with(records, p)?),
        }
    }

    fn sample(&self, n: usize, rng: &mut dyn RngCore) -> Result<ReplaySample> {
        let s = self.get_records(n, rng)?;
        Ok(ReplaySample {
            records: s.records,
            indices: Some(s.indices),
            weights: Some(s.weights),
        })
    }

    fn update_priorities(&mut self, indices: &[usize], priorities: &[f64]) -> Result<()> {
        Ok(self.update_records(indices, priorities)?)
    }

    fn size(&self) -> usize {
        PrioritizedReplay::size(self)
    }

    fn priorities(&self) -> Option<Vec<f64>> {
        Some((0..self.size()).map(|i| self.tree_priority(i).0).collect())
    }

    fn state(&self) -> &dyn HostState {
        self
    }

    fn state_mut(&mut self) -> &mut dyn HostState {
        self
    }

    fn record_space(&self) -> &Space {
        PrioritizedReplay::record_space(self)
    }

    fn capacity(&self) -> usize {
        PrioritizedReplay::capacity(self)
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::Prioritized {
            alpha: self.alpha(),
            beta: self.beta(),
        }
    }
}
