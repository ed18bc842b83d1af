//! `Ring`: the ring storage every replay memory shares: column storage, a write index that
//! wraps at the capacity, and the number of records held.

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::SavedState;
use serde_json::json;

use crate::columns::{Checked, Columns};
use crate::error::{MemoryError, Result};
use crate::frames::FrameStacks;
use crate::MAX_CAPACITY;

/// Ring storage of records of one space.
#[derive(Clone, Debug)]
pub(crate) struct Ring {
    pub(crate) name: String,
    columns: Columns,
    capacity: usize,
    /// The slot the next record goes to.
    index: usize,
    /// How many records are held (at most `capacity`).
    size: usize,
}

impl Ring {
    pub(crate) fn new(name: &str, space: &Space, capacity: usize, frames: Option<&FrameStacks>) -> Result<Self> {
        if capacity > MAX_CAPACITY {
            return Err(MemoryError::BadArguments {
                memory: name.into(),
                method: "new".into(),
                reason: format!("capacity {capacity} is more than the {MAX_CAPACITY} records a memory holds"),
            });
        }
        Ok(Ring {
            name: name.into(),
            columns: Columns::new(name, space, capacity, frames.map(|f| (&f.stack, f.keys.as_slice())))?,
            capacity,
            index: 0,
            size: 0,
        })
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn record_space(&self) -> &Space {
        self.columns.record_space()
    }

    /// Bytes reserved for the records held (see [`Columns::reserved_bytes`]).
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.columns.reserved_bytes()
    }

    /// `batch` checked against the record space; nothing is written.
    pub(crate) fn check<'a>(&self, batch: &'a Value) -> Result<Checked<'a>> {
        self.columns.check_batch(batch)
    }

    /// Writes a batch `check` accepted; returns the slot of its first record.
    pub(crate) fn write_checked(&mut self, batch: &Checked<'_>) -> usize {
        let (start, n) = (self.index, batch.records);
        self.columns.write(start, batch);
        self.index = (self.index + n) % self.capacity;
        self.size = (self.size + n).min(self.capacity);
        start
    }

    /// The records at slots `indices` (each below `size`).
    pub(crate) fn gather(&self, indices: &[usize]) -> Value {
        self.columns.gather(indices)
    }

    /// Fails unless `n` records can be sampled.
    pub(crate) fn require(&self, method: &str, n: usize) -> Result<()> {
        if n > self.size || (n > 0 && self.size == 0) {
            return Err(MemoryError::NotEnoughRecords {
                memory: self.name.clone(),
                method: method.into(),
                requested: n,
                available: self.size,
            });
        }
        Ok(())
    }

    /// Fails unless `n` records can be drawn with replacement: `n` are held, or (as RLgraph
    /// samples) the memory is full, so a batch larger than the capacity repeats records.
    pub(crate) fn require_sample(&self, method: &str, n: usize) -> Result<()> {
        match self.size == self.capacity && self.size > 0 {
            true => Ok(()),
            false => self.require(method, n),
        }
    }

    /// Adds the records and counters to `state`.
    pub(crate) fn save(&self, state: &mut SavedState) {
        self.columns.save("records", state);
        state.meta["index"] = json!(self.index);
        state.meta["size"] = json!(self.size);
        state.meta["capacity"] = json!(self.capacity);
    }

    /// The ring as saved in `state`, or why it does not fit; `self` is unchanged.
    pub(crate) fn restored(&self, state: &SavedState) -> Result<Ring> {
        let bad = |reason: String| MemoryError::BadState {
            memory: self.name.clone(),
            reason,
        };
        let field = |k: &str| {
            state.meta[k]
                .as_u64()
                .map(|x| x as usize)
                .ok_or_else(|| bad(format!("'{k}' is missing or not a count")))
        };
        let (index, size, capacity) = (field("index")?, field("size")?, field("capacity")?);
        if capacity != self.capacity {
            return Err(bad(format!(
                "saved with capacity {capacity}, this memory has {}",
                self.capacity
            )));
        }
        if size > capacity || index >= capacity {
            return Err(bad(format!(
                "index {index} / size {size} do not fit capacity {capacity}"
            )));
        }
        Ok(Ring {
            name: self.name.clone(),
            columns: self.columns.restored("records", state, size)?,
            capacity,
            index,
            size,
        })
    }
}
