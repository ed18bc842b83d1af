//! Replay memories on the host, for any nested record space.
//!
//! - [`ReplayMemory`]: uniform replay over a ring of records.
//! - [`PrioritizedReplay`]: proportional prioritized replay with sum and min
//!   [`SegmentTree`]s.
//! - [`RingBuffer`]: records in order with episode boundaries (PPO, actor-critic).
//! - [`FifoQueue`]: a bounded thread-safe queue (IMPALA's learner queue).
//! - [`StagingArea`]: a one-slot hand-over buffer.
//!
//! The two replays can store stacked frames once ([`FrameStacks`]): a record's stacks refer
//! to frames in a shared pool, so Atari's four-frame stacks of `s` and `s'` cost one new
//! frame per record, not eight.
//!
//! Records are stored column by column per flat key, so inserts and samples are slice
//! copies. Every random choice takes the caller's RNG. A batch that does not fit the record
//! space is refused whole, and no error loses stored records. The ring memories implement
//! [`rlgraph_core::HostState`], so `GraphExecutor::save_with` puts them in the checkpoint.
//!
//! Why on the host and not as graph variables, as RLgraph had them: replay throughput caps
//! distributed training, and a ring insert or a tree update is a few nanoseconds of plain
//! code but at least a kernel dispatch per operation through a tensor backend.

mod columns;
mod error;
mod fifo_queue;
mod frames;
mod prioritized;
mod replay;
mod ring;
mod ring_buffer;
mod segment_tree;
mod staging_area;

pub use error::{MemoryError, Result};

/// The most records any memory holds (2^30); records are stored as they come, so this only
/// bounds what a config can ask for.
pub const MAX_CAPACITY: usize = 1 << 30;

/// The most records a prioritized replay holds (2^26): its priority trees are allocated whole,
/// about 16 bytes per record, when it is made.
pub const MAX_PRIORITIZED_CAPACITY: usize = 1 << 26;
pub use fifo_queue::FifoQueue;
pub use frames::{FrameStack, FrameStacks};
pub use prioritized::{PrioritizedReplay, PrioritizedSample};
pub use replay::ReplayMemory;
pub use ring_buffer::{RingBuffer, TERMINALS};
pub use segment_tree::{Reduce, SegmentTree};
pub use staging_area::StagingArea;
