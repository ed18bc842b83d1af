//! `StagingArea`: a one-slot hand-over buffer. The producer stages the next batch (already
//! converted, or already on the device) while the consumer works on the previous one, as
//! RLgraph's staging area does for GPU input pipelines.

use crate::error::{MemoryError, Result};

/// Holds at most one staged item.
#[derive(Clone, Debug)]
pub struct StagingArea<T> {
    name: String,
    staged: Option<T>,
}

impl<T> StagingArea<T> {
    /// An empty staging area.
    pub fn new(name: &str) -> Self {
        StagingArea {
            name: name.into(),
            staged: None,
        }
    }

    /// Stages `item`; an item staged before and never taken is handed back, not lost.
    pub fn stage(&mut self, item: T) -> Option<T> {
        self.staged.replace(item)
    }

    /// Takes the staged item.
    pub fn unstage(&mut self) -> Result<T> {
        self.staged.take().ok_or_else(|| MemoryError::Empty {
            memory: self.name.clone(),
        })
    }

    /// Whether an item is staged.
    pub fn is_staged(&self) -> bool {
        self.staged.is_some()
    }
}
