//! Stacked frames stored once (the layout of DQN Zoo and Dopamine): a record's stack of the
//! last few frames refers to frames in a shared pool, so that `s'` shares its frames with `s`,
//! and each step's new frame costs its own bytes once, not once per stack that holds it.
//!
//! The pool is content-addressed: a stack is split into its frames, and a frame already in
//! the pool (by a 64-bit hash, confirmed byte for byte) is referred to again instead of
//! stored again. So whatever made the stacks (episode starts padded by repeating the first
//! frame, n-step next states, several environment copies interleaved, records from many
//! actors) a sample returns exactly the stacks that were inserted, with no bookkeeping of
//! episodes or copies in the memory. A frame is freed when the last record referring to it
//! is overwritten.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

/// How a stacked observation splits into frames: `frames` frames side by side along the last
/// axis, in groups of `group` elements. RLgraph's `sequence` preprocessor makes both kinds:
/// concatenated (`add_rank: false`, `[H, W, C * frames]`: `group` is a frame's `C`) or with
/// a new rank (`add_rank: true`, `[H, W, C, frames]`: `group` is 1).
///
/// ```
/// use rlgraph_memories::FrameStack;
///
/// // Four grayscale 80x80 frames concatenated along the channels, as Atari DQN stacks them.
/// let stack = FrameStack { frames: 4, group: 1 };
/// assert_eq!(stack.frame_len(&[80, 80, 4]).unwrap(), 6400);
/// assert!(stack.frame_len(&[80, 80, 3]).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameStack {
    /// Frames per stack.
    pub frames: usize,
    /// Adjacent elements of one frame along the last axis.
    pub group: usize,
}

impl FrameStack {
    /// The number of elements of one frame of a stack of item shape `shape`, or why the
    /// stack does not fit `shape` (the last dimension must be `frames * group`).
    pub fn frame_len(&self, shape: &[usize]) -> Result<usize, String> {
        let last = shape.last().copied().unwrap_or(0);
        if self.frames == 0 || self.group == 0 {
            return Err(format!(
                "a frame stack needs at least one frame of at least one element, got {} frames in groups of {}",
                self.frames, self.group
            ));
        }
        if last != self.frames * self.group {
            return Err(format!(
                "{} frames of {} elements along the last axis need a last dimension of {}, but the stack's shape is {shape:?}",
                self.frames,
                self.group,
                self.frames * self.group
            ));
        }
        Ok(shape.iter().product::<usize>() / self.frames)
    }

    /// Copies frame `k` of `stack` (`elem` bytes per element) into `frame`.
    fn split(&self, stack: &[u8], k: usize, elem: usize, frame: &mut [u8]) {
        let run = self.group * elem;
        let stride = run * self.frames;
        for (out, row) in frame.chunks_exact_mut(run).zip(stack.chunks_exact(stride)) {
            out.copy_from_slice(&row[k * run..(k + 1) * run]);
        }
    }

    /// Writes `frames` (one slice per frame, in stack order) into `stack`, interleaved as
    /// [`FrameStack::split`] takes them apart.
    pub(crate) fn join(&self, frames: &[&[u8]], elem: usize, stack: &mut [u8]) {
        let run = self.group * elem;
        match (self.frames, run) {
            // Atari's stack of four one-byte grayscale frames, a byte from each frame per
            // pixel: as one 32-bit word, which the compiler vectorises.
            (4, 1) => {
                let (a, b, c, d) = (frames[0], frames[1], frames[2], frames[3]);
                for (i, out) in stack.chunks_exact_mut(4).enumerate() {
                    out.copy_from_slice(&[a[i], b[i], c[i], d[i]]);
                }
            }
            _ => {
                let stride = run * self.frames;
                for (i, row) in stack.chunks_exact_mut(stride).enumerate() {
                    for (k, frame) in frames.iter().enumerate() {
                        row[k * run..(k + 1) * run].copy_from_slice(&frame[i * run..(i + 1) * run]);
                    }
                }
            }
        }
    }
}

/// The leaves of a record space that are frame stacks (flat keys, such as `states` and
/// `next_states` of a DQN transition), all split as `stack` says, their frames held in one
/// pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameStacks {
    /// How each stack splits into frames.
    pub stack: FrameStack,
    /// The flat keys of the stacked leaves (`"states"` and `"/states"` name the same leaf).
    pub keys: Vec<String>,
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

/// Frames of one size, each stored once, with a count of the references to it.
#[derive(Clone, Debug)]
pub(crate) struct FramePool {
    /// Bytes per frame.
    frame_bytes: usize,
    /// Frames the storage grows by when it is full: a fraction of the memory's capacity,
    /// not a doubling, so that a filled memory holds little more than its frames.
    grow_by: usize,
    /// Frame `i` at `[i * frame_bytes, (i + 1) * frame_bytes)`.
    data: Vec<u8>,
    /// References to each slot (0: free).
    refs: Vec<u32>,
    /// Each slot's content hash.
    hashes: Vec<u64>,
    /// Free slots, reused before the pool grows.
    free: Vec<u32>,
    /// The slot holding each content hash. A frame whose hash is taken by different bytes
    /// (a 64-bit collision) is stored without an entry: it is not shared, but stays correct.
    by_hash: HashMap<u64, u32, BuildHasherDefault<Prehashed>>,
}

impl FramePool {
    /// An empty pool of frames of `frame_bytes` bytes, for a memory of `capacity` records
    /// (about one new frame each).
    pub(crate) fn new(frame_bytes: usize, capacity: usize) -> Self {
        FramePool {
            frame_bytes,
            grow_by: (capacity / 8).clamp(16, 1 << 16),
            data: vec![],
            refs: vec![],
            hashes: vec![],
            free: vec![],
            by_hash: HashMap::default(),
        }
    }

    /// Bytes per frame.
    pub(crate) fn frame_bytes(&self) -> usize {
        self.frame_bytes
    }

    /// The frames held (referred to by at least one record).
    pub(crate) fn live(&self) -> usize {
        self.refs.len() - self.free.len()
    }

    /// The bytes of frame `id`.
    pub(crate) fn frame(&self, id: u32) -> &[u8] {
        let at = id as usize * self.frame_bytes;
        &self.data[at..at + self.frame_bytes]
    }

    /// One more reference to `frame`: the slot of an equal frame, or a new one.
    pub(crate) fn intern(&mut self, frame: &[u8]) -> u32 {
        let hash = xxhash_rust::xxh3::xxh3_64(frame);
        if let Some(&id) = self.by_hash.get(&hash) {
            if self.frame(id) == frame {
                self.refs[id as usize] += 1;
                return id;
            }
            return self.store(frame, hash);
        }
        let id = self.store(frame, hash);
        self.by_hash.insert(hash, id);
        id
    }

    /// `frame` in a slot of its own, with one reference.
    fn store(&mut self, frame: &[u8], hash: u64) -> u32 {
        match self.free.pop() {
            Some(id) => {
                let at = id as usize * self.frame_bytes;
                self.data[at..at + self.frame_bytes].copy_from_slice(frame);
                self.refs[id as usize] = 1;
                self.hashes[id as usize] = hash;
                id
            }
            None => {
                if self.data.len() == self.data.capacity() {
                    self.data.reserve_exact(self.grow_by * self.frame_bytes);
                }
                self.data.extend_from_slice(frame);
                self.refs.push(1);
                self.hashes.push(hash);
                // Slots are u32: 4 billion frames would need terabytes first.
                (self.refs.len() - 1) as u32
            }
        }
    }

    /// Drops one reference to `id`; the slot is freed with the last.
    pub(crate) fn release(&mut self, id: u32) {
        let i = id as usize;
        self.refs[i] -= 1;
        if self.refs[i] == 0 {
            if self.by_hash.get(&self.hashes[i]) == Some(&id) {
                self.by_hash.remove(&self.hashes[i]);
            }
            self.free.push(id);
        }
    }

    /// The live frames, packed in slot order, and the new id of every live slot.
    pub(crate) fn packed(&self) -> (Vec<u8>, HashMap<u32, u32>) {
        let mut data = Vec::with_capacity(self.live() * self.frame_bytes);
        let mut renumber = HashMap::with_capacity(self.live());
        for (id, &refs) in self.refs.iter().enumerate() {
            if refs > 0 {
                renumber.insert(id as u32, renumber.len() as u32);
                data.extend_from_slice(self.frame(id as u32));
            }
        }
        (data, renumber)
    }

    /// A pool of the frames in `data` (packed), with the references `ids` make to them;
    /// frames no id refers to are dropped. `ids` must be below `data.len() / frame_bytes`.
    pub(crate) fn from_packed(frame_bytes: usize, capacity: usize, data: Vec<u8>, ids: &[u32]) -> Self {
        let n = data.len() / frame_bytes.max(1);
        let mut pool = FramePool {
            frame_bytes,
            grow_by: FramePool::new(frame_bytes, capacity).grow_by,
            refs: vec![0; n],
            hashes: data
                .chunks_exact(frame_bytes.max(1))
                .map(xxhash_rust::xxh3::xxh3_64)
                .collect(),
            data,
            free: vec![],
            by_hash: HashMap::default(),
        };
        for &id in ids {
            pool.refs[id as usize] += 1;
        }
        for id in 0..n as u32 {
            if pool.refs[id as usize] == 0 {
                pool.free.push(id);
            } else {
                pool.by_hash.entry(pool.hashes[id as usize]).or_insert(id);
            }
        }
        pool
    }

    /// Splits each of the `stack_bytes`-byte stacks in `stacks` into its frames and interns
    /// them; returns their ids, `stack.frames` per stack.
    pub(crate) fn intern_stacks(&mut self, stack: &FrameStack, elem: usize, stacks: &[u8]) -> Vec<u32> {
        let mut frame = vec![0u8; self.frame_bytes];
        let stack_bytes = self.frame_bytes * stack.frames;
        let mut ids = Vec::with_capacity(stacks.len() / stack_bytes.max(1) * stack.frames);
        for one in stacks.chunks_exact(stack_bytes.max(1)) {
            for k in 0..stack.frames {
                stack.split(one, k, elem, &mut frame);
                ids.push(self.intern(&frame));
            }
        }
        ids
    }

    /// Writes the stack made of frames `ids` into `out`.
    pub(crate) fn write_stack(&self, stack: &FrameStack, elem: usize, ids: &[u32], out: &mut [u8]) {
        let frames: Vec<&[u8]> = ids.iter().map(|&id| self.frame(id)).collect();
        stack.join(&frames, elem, out);
    }

    /// Bytes the pool's storage has reserved (frames, counts, hashes, free list, index).
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.data.capacity()
            + self.refs.capacity() * 4
            + self.hashes.capacity() * 8
            + self.free.capacity() * 4
            + self.by_hash.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_join_invert_each_other_for_every_layout() {
        for (frames, group, elem) in [(4, 1, 1), (4, 3, 1), (3, 2, 4), (2, 1, 8), (1, 1, 1)] {
            let stack = FrameStack { frames, group };
            let outer = 5;
            let bytes: Vec<u8> = (0..outer * frames * group * elem)
                .map(|i| (i * 7 % 251) as u8)
                .collect();
            let frame_bytes = outer * group * elem;
            let parts: Vec<Vec<u8>> = (0..frames)
                .map(|k| {
                    let mut f = vec![0; frame_bytes];
                    stack.split(&bytes, k, elem, &mut f);
                    f
                })
                .collect();
            // Frame k holds, for each outer position, the k-th group of that position's row.
            let row = frames * group * elem;
            for (k, f) in parts.iter().enumerate() {
                for o in 0..outer {
                    let want = &bytes[o * row + k * group * elem..o * row + (k + 1) * group * elem];
                    assert_eq!(
                        &f[o * group * elem..(o + 1) * group * elem],
                        want,
                        "{frames}x{group}x{elem}, frame {k}"
                    );
                }
            }
            let mut back = vec![0; bytes.len()];
            let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            stack.join(&refs, elem, &mut back);
            assert_eq!(back, bytes, "{frames}x{group}x{elem}");
        }
    }

    #[test]
    fn equal_frames_share_a_slot_until_the_last_reference_goes() {
        let mut pool = FramePool::new(3, 10);
        let a = pool.intern(&[1, 2, 3]);
        let b = pool.intern(&[4, 5, 6]);
        assert_eq!(pool.intern(&[1, 2, 3]), a);
        assert_eq!(pool.live(), 2);
        pool.release(a);
        assert_eq!(pool.live(), 2, "one reference to a is left");
        pool.release(a);
        assert_eq!(pool.live(), 1);
        // The freed slot is reused, and the old content no longer matches it.
        let c = pool.intern(&[7, 8, 9]);
        assert_eq!(c, a);
        assert_eq!(pool.frame(c), &[7, 8, 9]);
        assert_ne!(pool.intern(&[1, 2, 3]), b);
    }

    #[test]
    fn a_hash_collision_keeps_both_frames_apart() {
        let mut pool = FramePool::new(2, 10);
        let a = pool.intern(&[1, 1]);
        // Forge a collision: store different bytes under a's hash.
        let hash = pool.hashes[a as usize];
        let b = pool.store(&[2, 2], hash);
        assert_ne!(a, b);
        assert_eq!((pool.frame(a), pool.frame(b)), (&[1u8, 1][..], &[2u8, 2][..]));
        pool.release(b);
        assert_eq!(pool.by_hash.get(&hash), Some(&a), "b never owned the entry");
    }

    #[test]
    fn packing_keeps_live_frames_and_renumbers_them_densely() {
        let mut pool = FramePool::new(1, 10);
        let ids: Vec<u32> = [10u8, 20, 30].iter().map(|&v| pool.intern(&[v])).collect();
        pool.release(ids[1]);
        let (data, renumber) = pool.packed();
        assert_eq!(data, vec![10, 30]);
        assert_eq!((renumber[&ids[0]], renumber[&ids[2]]), (0, 1));
        let again = FramePool::from_packed(1, 10, data, &[0, 1, 1]);
        assert_eq!((again.live(), again.refs.clone()), (2, vec![1, 2]));
    }
}
