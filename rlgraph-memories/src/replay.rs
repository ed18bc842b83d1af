//! `ReplayMemory`: uniform experience replay over a ring of records.

use rand::Rng;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{HostState, SavedState};

use crate::error::Result;
use crate::frames::FrameStacks;
use crate::ring::Ring;

/// Uniform replay: a ring of `capacity` records, sampled uniformly with replacement.
///
/// Records are any nested space; a DQN record is a Dict of `states`, `actions`, `rewards`,
/// `terminals` and `next_states`, stored as given (next states are not derived from the
/// following slot, which the ring may already have overwritten).
///
/// ```
/// use rlgraph_core::spaces::{FloatBox, Space, Value};
/// use rlgraph_memories::ReplayMemory;
/// use rand::SeedableRng;
///
/// let space = Space::from(FloatBox::new([2]));
/// let mut memory = ReplayMemory::new("replay", &space, 3).unwrap();
/// let batch = space.with_batch_rank(true).zeros(Some(4));
/// memory.insert_records(&batch).unwrap();
/// assert_eq!((memory.size(), memory.index()), (3, 1));
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
/// let sample = memory.get_records(2, &mut rng).unwrap();
/// assert_eq!(sample.shape(), Some(&[2, 2][..]));
/// ```
#[derive(Clone, Debug)]
pub struct ReplayMemory {
    ring: Ring,
}

impl ReplayMemory {
    /// A memory named `name` holding up to `capacity` records of `space`.
    pub fn new(name: &str, space: &Space, capacity: usize) -> Result<Self> {
        ReplayMemory::with_frames(name, space, capacity, None)
    }

    /// Like [`ReplayMemory::new`], with the leaves `frames` names stored as frame stacks: each
    /// frame once, shared by every record that holds it (see [`FrameStacks`]).
    pub fn with_frames(name: &str, space: &Space, capacity: usize, frames: Option<&FrameStacks>) -> Result<Self> {
        Ok(ReplayMemory {
            ring: Ring::new(name, space, capacity, frames)?,
        })
    }

    /// Bytes reserved for the records held: their columns, and the frame pool if any.
    pub fn reserved_bytes(&self) -> usize {
        self.ring.reserved_bytes()
    }

    /// Inserts a batch of records (the record space with a batch rank). A batch that does
    /// not fit the space is refused whole.
    pub fn insert_records(&mut self, batch: &Value) -> Result<()> {
        let checked = self.ring.check(batch)?;
        self.ring.write_checked(&checked);
        Ok(())
    }

    /// `n` records drawn uniformly with replacement from those held.
    pub fn get_records<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Value> {
        Ok(self.ring.gather(&self.sample_indices(n, rng)?))
    }

    /// The slots `get_records` would read, drawn from `rng`.
    pub fn sample_indices<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Vec<usize>> {
        self.ring.require_sample("get_records", n)?;
        let size = self.ring.size();
        Ok((0..n).map(|_| rng.random_range(0..size)).collect())
    }

    /// The records at the given slots, in that order.
    pub fn records_at(&self, indices: &[usize]) -> Result<Value> {
        check_indices(&self.ring, indices)?;
        Ok(self.ring.gather(indices))
    }

    /// The number of records held.
    pub fn size(&self) -> usize {
        self.ring.size()
    }

    /// The slot the next record is written to.
    pub fn index(&self) -> usize {
        self.ring.index()
    }

    /// The most records it holds.
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// The space of one record.
    pub fn record_space(&self) -> &Space {
        self.ring.record_space()
    }
}

/// Fails on the first index that does not name a held record.
pub(crate) fn check_indices(ring: &Ring, indices: &[usize]) -> Result<()> {
    match indices.iter().find(|&&i| i >= ring.size()) {
        Some(&index) => Err(crate::error::MemoryError::IndexOutOfRange {
            memory: ring.name.clone(),
            index,
            size: ring.size(),
        }),
        None => Ok(()),
    }
}

impl HostState for ReplayMemory {
    fn save_state(&self) -> rlgraph_core::Result<SavedState> {
        let mut state = SavedState {
            meta: serde_json::json!({}),
            ..SavedState::default()
        };
        self.ring.save(&mut state);
        Ok(state)
    }

    fn check_state(&self, state: &SavedState) -> rlgraph_core::Result<()> {
        self.ring.restored(state)?;
        Ok(())
    }

    fn load_state(&mut self, state: SavedState) -> rlgraph_core::Result<()> {
        self.ring = self.ring.restored(&state)?;
        Ok(())
    }
}
