//! `FifoQueue`: a bounded, thread-safe first-in-first-out queue of records, as IMPALA's
//! learner uses to receive rollouts from its actors.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use rlgraph_core::spaces::{Space, Value};

use crate::error::{MemoryError, Result};

#[derive(Debug, Default)]
struct Inner {
    records: VecDeque<Value>,
    closed: bool,
}

/// A bounded queue shared by reference between producer and consumer threads.
///
/// Blocking calls wait on condition variables (no spinning). `close` wakes every waiter:
/// after it, enqueues fail and dequeues drain what is left, then fail.
#[derive(Debug)]
pub struct FifoQueue {
    name: String,
    space: Space,
    capacity: usize,
    inner: Mutex<Inner>,
    not_empty: Condvar,
    not_full: Condvar,
}

impl FifoQueue {
    /// A queue of at most `capacity` records of `space`.
    pub fn new(name: &str, space: &Space, capacity: usize) -> Result<Self> {
        if capacity == 0 {
            return Err(MemoryError::UnsupportedSpace {
                memory: name.into(),
                reason: "capacity must be at least 1".into(),
            });
        }
        Ok(FifoQueue {
            name: name.into(),
            space: space.clone(),
            capacity,
            inner: Mutex::new(Inner::default()),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
        })
    }

    // A poisoned lock means a thread panicked while holding it; the queue's own code never
    // leaves the deque half-changed, so its contents are still valid.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn check(&self, record: &Value) -> Result<()> {
        self.space.check(record).map_err(|e| MemoryError::RecordMismatch {
            memory: self.name.clone(),
            reason: e.to_string(),
        })
    }

    /// Adds `record`, waiting while the queue is full.
    pub fn enqueue(&self, record: Value) -> Result<()> {
        self.check(&record)?;
        let mut inner = self.lock();
        while inner.records.len() >= self.capacity && !inner.closed {
            inner = self.not_full.wait(inner).unwrap_or_else(|p| p.into_inner());
        }
        self.push(inner, record)
    }

    /// Adds `record` if there is room now; a full queue hands it back in the error.
    pub fn try_enqueue(&self, record: Value) -> Result<()> {
        self.check(&record)?;
        let inner = self.lock();
        if inner.records.len() >= self.capacity && !inner.closed {
            return Err(MemoryError::Full {
                memory: self.name.clone(),
                capacity: self.capacity,
                record: Box::new(record),
            });
        }
        self.push(inner, record)
    }

    /// Adds all of `records` if they fit now, or none of them: a batch that does not fit
    /// leaves the queue as it was.
    pub fn try_enqueue_all(&self, records: Vec<Value>) -> Result<()> {
        for record in &records {
            self.check(record)?;
        }
        let mut inner = self.lock();
        if inner.closed {
            return Err(MemoryError::Closed {
                memory: self.name.clone(),
            });
        }
        if inner.records.len() + records.len() > self.capacity {
            return Err(MemoryError::BadArguments {
                memory: self.name.clone(),
                method: "try_enqueue_all".into(),
                reason: format!(
                    "the queue is full: it holds {} of {}, and {} more do not fit; nothing was enqueued",
                    inner.records.len(),
                    self.capacity,
                    records.len()
                ),
            });
        }
        inner.records.extend(records);
        drop(inner);
        self.not_empty.notify_all();
        Ok(())
    }

    fn push(&self, mut inner: MutexGuard<'_, Inner>, record: Value) -> Result<()> {
        if inner.closed {
            return Err(MemoryError::Closed {
                memory: self.name.clone(),
            });
        }
        inner.records.push_back(record);
        drop(inner);
        self.not_empty.notify_one();
        Ok(())
    }

    /// Takes the oldest record, waiting while the queue is empty (until it is closed).
    pub fn dequeue(&self) -> Result<Value> {
        let mut inner = self.lock();
        while inner.records.is_empty() && !inner.closed {
            inner = self.not_empty.wait(inner).unwrap_or_else(|p| p.into_inner());
        }
        self.pop(inner)
    }

    /// Like `dequeue`, but gives up with `Empty` after `timeout`.
    pub fn dequeue_timeout(&self, timeout: Duration) -> Result<Value> {
        let inner = self.lock();
        let (inner, _) = self
            .not_empty
            .wait_timeout_while(inner, timeout, |i| i.records.is_empty() && !i.closed)
            .unwrap_or_else(|p| p.into_inner());
        self.pop(inner)
    }

    /// Takes the oldest record if there is one now.
    pub fn try_dequeue(&self) -> Result<Value> {
        let inner = self.lock();
        self.pop(inner)
    }

    /// Takes the `n` oldest records, waiting until there are `n` (or the queue closes).
    pub fn dequeue_many(&self, n: usize) -> Result<Vec<Value>> {
        (0..n).map(|_| self.dequeue()).collect()
    }

    /// Takes the `n` (at least one) oldest records if `n` are waiting now, or none of them.
    pub fn try_dequeue_exactly(&self, n: usize) -> Result<Vec<Value>> {
        let mut inner = self.lock();
        let held = inner.records.len();
        if n == 0 || n > held {
            return Err(MemoryError::BadArguments {
                memory: self.name.clone(),
                method: "try_dequeue_exactly".into(),
                reason: format!("the queue holds {held} records, {n} were asked for; nothing was taken"),
            });
        }
        let records = inner.records.drain(..n).collect();
        drop(inner);
        self.not_full.notify_all();
        Ok(records)
    }

    fn pop(&self, mut inner: MutexGuard<'_, Inner>) -> Result<Value> {
        match inner.records.pop_front() {
            Some(record) => {
                drop(inner);
                self.not_full.notify_one();
                Ok(record)
            }
            None if inner.closed => Err(MemoryError::Closed {
                memory: self.name.clone(),
            }),
            None => Err(MemoryError::Empty {
                memory: self.name.clone(),
            }),
        }
    }

    /// Refuses further records and wakes every waiting thread.
    pub fn close(&self) {
        self.lock().closed = true;
        self.not_empty.notify_all();
        self.not_full.notify_all();
    }

    /// A copy of the waiting records, oldest first (for checkpoints).
    pub fn records(&self) -> Vec<Value> {
        self.lock().records.iter().cloned().collect()
    }

    /// The number of records waiting.
    pub fn size(&self) -> usize {
        self.lock().records.len()
    }

    /// The most records it holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}
