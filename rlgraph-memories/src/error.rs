//! `MemoryError`: what went wrong in a memory, naming the memory and the offending input.

use rlgraph_core::spaces::Value;
use rlgraph_core::CoreError;

/// Errors of the memories. Each one leaves the stored records as they were.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The record space cannot be stored (text leaves, for example).
    #[error("memory '{memory}': record space not supported: {reason}")]
    UnsupportedSpace {
        /// The memory's name.
        memory: String,
        /// What is wrong with the space.
        reason: String,
    },
    /// Records that do not fit the memory's record space; nothing was inserted.
    #[error("memory '{memory}', insert_records: {reason}; nothing was inserted")]
    RecordMismatch {
        /// The memory's name.
        memory: String,
        /// Which flat key, and expected against actual.
        reason: String,
    },
    /// More records asked for than the memory holds.
    #[error("memory '{memory}', {method}: asked for {requested} records but it holds {available}; insert more first")]
    NotEnoughRecords {
        /// The memory's name.
        memory: String,
        /// The method called.
        method: String,
        /// How many were asked for.
        requested: usize,
        /// How many are stored.
        available: usize,
    },
    /// An index that does not name a stored record.
    #[error("memory '{memory}', update_records: index {index} is out of range (size {size})")]
    IndexOutOfRange {
        /// The memory's name.
        memory: String,
        /// The bad index.
        index: usize,
        /// The number of stored records.
        size: usize,
    },
    /// A priority that is negative, NaN or infinite; nothing was updated.
    #[error("memory '{memory}', update_records: priority {priority} for index {index} must be finite and >= 0; nothing was updated")]
    BadPriority {
        /// The memory's name.
        memory: String,
        /// The record index.
        index: usize,
        /// The bad priority.
        priority: f64,
    },
    /// Arguments that do not fit together (lengths, settings).
    #[error("memory '{memory}', {method}: {reason}")]
    BadArguments {
        /// The memory's name.
        memory: String,
        /// The method called.
        method: String,
        /// What is wrong.
        reason: String,
    },
    /// A full queue refused a record; the record is handed back.
    #[error("queue '{memory}' is full (capacity {capacity}); the record was not enqueued")]
    Full {
        /// The queue's name.
        memory: String,
        /// Its capacity.
        capacity: usize,
        /// The record, returned to the caller.
        record: Box<Value>,
    },
    /// The queue or staging area holds nothing to take.
    #[error("'{memory}' is empty")]
    Empty {
        /// The name.
        memory: String,
    },
    /// The queue was closed; no more records go in, and blocked callers are released.
    #[error("queue '{memory}' is closed")]
    Closed {
        /// The queue's name.
        memory: String,
    },
    /// A saved state that does not fit this memory.
    #[error("memory '{memory}': cannot restore: {reason}")]
    BadState {
        /// The memory's name.
        memory: String,
        /// What does not fit.
        reason: String,
    },
}

impl From<MemoryError> for CoreError {
    fn from(e: MemoryError) -> Self {
        CoreError::Config {
            at: "memory".into(),
            reason: e.to_string(),
        }
    }
}

/// Shorthand for results of the memories.
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
