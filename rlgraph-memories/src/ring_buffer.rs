//! `RingBuffer`: the on-policy memory of RLgraph's PPO and actor-critic agents. Records are
//! kept in insertion order with their episode boundaries, so that whole episodes (never a
//! piece of one) can be read back.

use std::collections::VecDeque;

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{HostState, SavedState};
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::ring::Ring;

/// The top-level record key that marks the last step of an episode.
pub const TERMINALS: &str = "terminals";

/// A ring of records that tracks episodes: an episode ends at a record whose `terminals`
/// entry is true (or non-zero), and counts only while every one of its records is held.
#[derive(Clone, Debug)]
pub struct RingBuffer {
    ring: Ring,
    /// Records ever inserted; record `t` (absolute) sits in slot `t % capacity`.
    total: u64,
    /// Absolute positions of the last record of each held episode, oldest first.
    ends: VecDeque<u64>,
    /// Absolute position of the first record of the oldest held episode.
    front_start: u64,
}

impl RingBuffer {
    /// A buffer of `capacity` records of `space`, a Dict with a scalar `terminals` entry.
    pub fn new(name: &str, space: &Space, capacity: usize) -> Result<Self> {
        let terminal_ok =
            matches!(space, Space::Dict(d) if d.get(TERMINALS).is_some_and(|t| t.shape() == Some(&[][..])));
        if !terminal_ok {
            return Err(MemoryError::UnsupportedSpace {
                memory: name.into(),
                reason: format!(
                    "a ring buffer needs a Dict record with a scalar '{TERMINALS}' entry, got {}",
                    space.describe()
                ),
            });
        }
        Ok(RingBuffer {
            ring: Ring::new(name, space, capacity, None)?,
            total: 0,
            ends: VecDeque::new(),
            front_start: 0,
        })
    }

    /// Inserts a batch of records in time order.
    pub fn insert_records(&mut self, batch: &Value) -> Result<()> {
        let checked = self.ring.check(batch)?;
        let n = checked.records;
        let terminals = terminal_flags(batch);
        self.ring.write_checked(&checked);
        for (i, done) in terminals.into_iter().enumerate() {
            if done {
                self.ends.push_back(self.total + i as u64);
            }
        }
        self.total += n as u64;
        // Episodes whose first record has been overwritten are no longer whole.
        let oldest_held = self.total - self.ring.size() as u64;
        while let Some(&end) = self.ends.front() {
            if self.front_start >= oldest_held {
                break;
            }
            self.front_start = end + 1;
            self.ends.pop_front();
        }
        Ok(())
    }

    /// The last `n` records, oldest first.
    pub fn get_records(&self, n: usize) -> Result<Value> {
        self.ring.require("get_records", n)?;
        let slots: Vec<usize> = (self.total - n as u64..self.total).map(|t| self.slot(t)).collect();
        Ok(self.ring.gather(&slots))
    }

    /// The last `n` whole episodes (fewer if fewer are held), oldest first, as one batch.
    pub fn get_episodes(&self, n: usize) -> Value {
        let k = n.min(self.ends.len());
        let first = self.ends.len() - k;
        let mut start = if first == 0 {
            self.front_start
        } else {
            self.ends[first - 1] + 1
        };
        let mut slots = vec![];
        for &end in self.ends.iter().skip(first) {
            slots.extend((start..=end).map(|t| self.slot(t)));
            start = end + 1;
        }
        self.ring.gather(&slots)
    }

    /// The number of whole episodes held.
    pub fn num_episodes(&self) -> usize {
        self.ends.len()
    }

    /// The slot of the last record of each held episode, oldest first.
    pub fn episode_indices(&self) -> Vec<usize> {
        self.ends.iter().map(|&t| self.slot(t)).collect()
    }

    /// The number of records held.
    pub fn size(&self) -> usize {
        self.ring.size()
    }

    /// The slot the next record is written to.
    pub fn index(&self) -> usize {
        self.ring.index()
    }

    fn slot(&self, t: u64) -> usize {
        (t % self.ring.capacity() as u64) as usize
    }

    fn restored(&self, state: &SavedState) -> Result<RingBuffer> {
        let bad = |reason: String| MemoryError::BadState {
            memory: self.ring.name.clone(),
            reason,
        };
        let ring = self.ring.restored(state)?;
        let total = state.meta["total"]
            .as_u64()
            .ok_or_else(|| bad("'total' is missing".into()))?;
        let front_start = state.meta["front_start"]
            .as_u64()
            .ok_or_else(|| bad("'front_start' is missing".into()))?;
        let ends: Option<VecDeque<u64>> = state.meta["ends"]
            .as_array()
            .and_then(|a| a.iter().map(|x| x.as_u64()).collect());
        let ends = ends.ok_or_else(|| bad("'ends' is missing".into()))?;
        if ends.iter().any(|&e| e >= total) || (total % ring.capacity() as u64) as usize != ring.index() {
            return Err(bad("episode ends and record counts do not agree".into()));
        }
        Ok(RingBuffer {
            ring,
            total,
            ends,
            front_start,
        })
    }
}

/// Each record's terminal flag (bools as they are, numbers as `!= 0`).
fn terminal_flags(batch: &Value) -> Vec<bool> {
    let Value::Dict(d) = batch else { return vec![] };
    match d.get(TERMINALS) {
        Some(Value::Bool(a)) => a.data().to_vec(),
        Some(Value::Int32(a)) => a.data().iter().map(|&x| x != 0).collect(),
        Some(Value::Int64(a)) => a.data().iter().map(|&x| x != 0).collect(),
        Some(Value::Uint8(a)) => a.data().iter().map(|&x| x != 0).collect(),
        Some(Value::Float32(a)) => a.data().iter().map(|&x| x != 0.0).collect(),
        Some(Value::Float64(a)) => a.data().iter().map(|&x| x != 0.0).collect(),
        _ => vec![],
    }
}

impl HostState for RingBuffer {
    fn save_state(&self) -> rlgraph_core::Result<SavedState> {
        let mut state = SavedState {
            meta: json!({ "total": self.total, "front_start": self.front_start, "ends": self.ends }),
            ..SavedState::default()
        };
        self.ring.save(&mut state);
        Ok(state)
    }

    fn check_state(&self, state: &SavedState) -> rlgraph_core::Result<()> {
        self.restored(state)?;
        Ok(())
    }

    fn load_state(&mut self, state: SavedState) -> rlgraph_core::Result<()> {
        *self = self.restored(&state)?;
        Ok(())
    }
}
