//! `PrioritizedReplay`: proportional prioritized replay (Schaul et al. 2016) over a ring of
//! records, with sum and min segment trees.

use rand::Rng;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{HostData, HostState, HostTensor, SavedState};
use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::frames::FrameStacks;
use crate::replay::check_indices;
use crate::ring::Ring;
use crate::segment_tree::{Reduce, SegmentTree};
use crate::MAX_PRIORITIZED_CAPACITY;

/// A prioritized sample: the records, their slots (for `update_records`) and their
/// importance weights.
#[derive(Clone, Debug, PartialEq)]
pub struct PrioritizedSample {
    /// The records, batched.
    pub records: Value,
    /// The slot of each record.
    pub indices: Vec<usize>,
    /// `(N P(i))^-beta / max_j (N P(j))^-beta`, so the largest weight is 1.
    pub weights: Vec<f64>,
}

/// Proportional prioritized replay: record `i` is drawn with probability
/// `p_i^alpha / sum_k p_k^alpha`.
///
/// New records get the largest priority seen so far (1.0 at first), so each is replayed at
/// least once with high probability before its TD error is known.
#[derive(Clone, Debug)]
pub struct PrioritizedReplay {
    ring: Ring,
    alpha: f64,
    beta: f64,
    max_priority: f64,
    sum_tree: SegmentTree,
    min_tree: SegmentTree,
}

impl PrioritizedReplay {
    /// A memory of `capacity` records of `space`; `alpha` shapes priorities, `beta` corrects
    /// the sampling bias in the importance weights (RLgraph's defaults: 1.0 and 0.0).
    pub fn new(name: &str, space: &Space, capacity: usize, alpha: f64, beta: f64) -> Result<Self> {
        PrioritizedReplay::with_frames(name, space, capacity, alpha, beta, None)
    }

    /// Like [`PrioritizedReplay::new`], with the leaves `frames` names stored as frame
    /// stacks: each frame once, shared by every record that holds it (see [`FrameStacks`]).
    pub fn with_frames(
        name: &str,
        space: &Space,
        capacity: usize,
        alpha: f64,
        beta: f64,
        frames: Option<&FrameStacks>,
    ) -> Result<Self> {
        let bad = |reason: String| MemoryError::BadArguments {
            memory: name.into(),
            method: "new".into(),
            reason,
        };
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(bad(format!("alpha must be finite and >= 0, got {alpha}")));
        }
        if !(beta.is_finite() && beta >= 0.0) {
            return Err(bad(format!("beta must be finite and >= 0, got {beta}")));
        }
        // The priority trees are allocated whole, up front: refuse before allocating.
        if capacity > MAX_PRIORITIZED_CAPACITY {
            let gib = (capacity as f64).log2().ceil().exp2() * 2.0 * 8.0 / f64::from(1u32 << 30);
            return Err(bad(format!(
                "capacity {capacity} needs priority trees of about {gib:.0} GiB; a prioritized replay holds at most {MAX_PRIORITIZED_CAPACITY} records"
            )));
        }
        Ok(PrioritizedReplay {
            ring: Ring::new(name, space, capacity, frames)?,
            alpha,
            beta,
            max_priority: 1.0,
            sum_tree: SegmentTree::new(capacity, Reduce::Sum),
            min_tree: SegmentTree::new(capacity, Reduce::Min),
        })
    }

    /// Inserts a batch of records, each at the current maximum priority.
    pub fn insert_records(&mut self, batch: &Value) -> Result<()> {
        let checked = self.ring.check(batch)?;
        let n = checked.records;
        let start = self.ring.write_checked(&checked);
        let slots = self.written_slots(start, n);
        let weights = vec![self.max_priority.powf(self.alpha); slots.len()];
        self.set_weights(&slots, &weights);
        Ok(())
    }

    /// Inserts a batch of records, each at its own priority (Ape-X's worker-side priorities).
    /// The records and priorities are all checked first: on error nothing changes.
    pub fn insert_records_with(&mut self, batch: &Value, priorities: &[f64]) -> Result<()> {
        let checked = self.ring.check(batch)?;
        let n = checked.records;
        let bad = |reason: String| MemoryError::BadArguments {
            memory: self.ring.name.clone(),
            method: "insert_records_with".into(),
            reason,
        };
        if priorities.len() != n {
            return Err(bad(format!("{n} records but {} priorities", priorities.len())));
        }
        if let Some((i, &p)) = priorities
            .iter()
            .enumerate()
            .find(|(_, p)| !(p.is_finite() && **p >= 0.0))
        {
            return Err(bad(format!("priority {i} is {p}; priorities must be finite and >= 0")));
        }
        let start = self.ring.write_checked(&checked);
        let slots = self.written_slots(start, n);
        self.set_priorities(&slots, &priorities[n - slots.len()..]);
        Ok(())
    }

    /// `n` records drawn with probability proportional to `priority^alpha`, with replacement.
    pub fn get_records<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<PrioritizedSample> {
        self.ring.require_sample("get_records", n)?;
        let total = self.sum_tree.root();
        if n > 0 && total <= 0.0 {
            return Err(MemoryError::BadArguments {
                memory: self.ring.name.clone(),
                method: "get_records".into(),
                reason: "every stored priority is 0, so nothing can be drawn".into(),
            });
        }
        let last = self.ring.size() - 1;
        let prefixes: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * total).collect();
        let mut indices = self.sum_tree.find_prefix_sums(&prefixes);
        for i in &mut indices {
            // Rounding can push a draw just past the last filled leaf.
            *i = (*i).min(last);
        }
        let weights = self.weights(&indices);
        Ok(PrioritizedSample {
            records: self.ring.gather(&indices),
            indices,
            weights,
        })
    }

    /// Importance weights of the records at `indices`, normalized by the largest possible.
    pub fn weights(&self, indices: &[usize]) -> Vec<f64> {
        let total = self.sum_tree.root();
        let size = self.ring.size() as f64;
        let weight = |p: f64| (size * p / total).powf(-self.beta);
        let min = self.min_tree.root();
        // With a zero priority stored, the largest weight is unbounded; normalize by the
        // largest in this sample instead.
        let max_weight = if min > 0.0 {
            weight(min)
        } else {
            indices
                .iter()
                .map(|&i| weight(self.sum_tree.get(i)))
                .filter(|w| w.is_finite())
                .fold(0.0, f64::max)
        };
        indices
            .iter()
            .map(|&i| weight(self.sum_tree.get(i)) / max_weight)
            .collect()
    }

    /// Sets the priorities of the records at `indices`. All are checked first: on error
    /// nothing changes.
    pub fn update_records(&mut self, indices: &[usize], priorities: &[f64]) -> Result<()> {
        if indices.len() != priorities.len() {
            return Err(MemoryError::BadArguments {
                memory: self.ring.name.clone(),
                method: "update_records".into(),
                reason: format!("{} indices but {} priorities", indices.len(), priorities.len()),
            });
        }
        check_indices(&self.ring, indices)?;
        if let Some((&index, &priority)) = indices
            .iter()
            .zip(priorities)
            .find(|(_, p)| !(p.is_finite() && **p >= 0.0))
        {
            return Err(MemoryError::BadPriority {
                memory: self.ring.name.clone(),
                index,
                priority,
            });
        }
        self.set_priorities(indices, priorities);
        Ok(())
    }

    /// The slots a batch of `n` records written from `start` went to; only the last
    /// `capacity` records of an oversized batch are still held.
    fn written_slots(&self, start: usize, n: usize) -> Vec<usize> {
        let capacity = self.ring.capacity();
        (n.saturating_sub(capacity)..n)
            .map(|i| (start + i) % capacity)
            .collect()
    }

    /// Gives `slots` the priorities `priorities` (raised to alpha in the trees) and raises
    /// the maximum priority that new records get.
    fn set_priorities(&mut self, slots: &[usize], priorities: &[f64]) {
        let weights: Vec<f64> = priorities.iter().map(|p| p.powf(self.alpha)).collect();
        self.set_weights(slots, &weights);
        self.max_priority = priorities.iter().fold(self.max_priority, |m, &p| m.max(p));
    }

    /// Writes `priority^alpha` weights into both trees.
    fn set_weights(&mut self, slots: &[usize], weights: &[f64]) {
        self.sum_tree.set_many(slots, weights);
        self.min_tree.set_many(slots, weights);
    }

    /// Changes beta (Ape-X and Rainbow anneal it toward 1).
    pub fn set_beta(&mut self, beta: f64) {
        self.beta = beta;
    }

    /// `priority^alpha` of the record at slot `i`, as stored in the trees.
    pub fn tree_priority(&self, i: usize) -> (f64, f64) {
        (self.sum_tree.get(i), self.min_tree.get(i))
    }

    /// The sum tree.
    pub fn sum_tree(&self) -> &SegmentTree {
        &self.sum_tree
    }

    /// The min tree.
    pub fn min_tree(&self) -> &SegmentTree {
        &self.min_tree
    }

    /// The largest priority seen (new records get it).
    pub fn max_priority(&self) -> f64 {
        self.max_priority
    }

    /// The number of records held.
    pub fn size(&self) -> usize {
        self.ring.size()
    }

    /// The slot the next record is written to.
    pub fn index(&self) -> usize {
        self.ring.index()
    }

    /// The space of one record.
    pub fn record_space(&self) -> &Space {
        self.ring.record_space()
    }

    /// The most records it holds.
    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// The priority exponent.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The importance-weight exponent.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The records at the given slots, in that order.
    pub fn records_at(&self, indices: &[usize]) -> Result<Value> {
        check_indices(&self.ring, indices)?;
        Ok(self.ring.gather(indices))
    }

    /// Bytes reserved for the records held: their columns, and the frame pool if any (the
    /// priority trees, sized by the capacity, not included).
    pub fn reserved_bytes(&self) -> usize {
        self.ring.reserved_bytes()
    }

    fn restored(&self, state: &SavedState) -> Result<PrioritizedReplay> {
        let bad = |reason: String| MemoryError::BadState {
            memory: self.ring.name.clone(),
            reason,
        };
        let ring = self.ring.restored(state)?;
        let max_priority = state.meta["max_priority"]
            .as_f64()
            .ok_or_else(|| bad("'max_priority' is missing".into()))?;
        if !(max_priority.is_finite() && max_priority > 0.0) {
            return Err(bad(format!(
                "'max_priority' is {max_priority}; expected a finite number above 0"
            )));
        }
        let weights = match state.tensors.get("priorities").map(|t| &t.data) {
            Some(HostData::F64(w)) if w.len() == ring.size() => w,
            _ => return Err(bad(format!("tensor 'priorities' must be {} f64 values", ring.size()))),
        };
        // The sum tree samples in proportion to these: a NaN, an infinity or a negative
        // weight would make sampling meaningless.
        if let Some((i, w)) = weights.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w >= 0.0)) {
            return Err(bad(format!(
                "priority {i} is {w}; expected a finite number of at least 0"
            )));
        }
        let mut next = self.clone();
        next.ring = ring;
        next.max_priority = max_priority;
        next.sum_tree = SegmentTree::new(self.ring.capacity(), Reduce::Sum);
        next.min_tree = SegmentTree::new(self.ring.capacity(), Reduce::Min);
        let slots: Vec<usize> = (0..weights.len()).collect();
        next.set_weights(&slots, weights);
        Ok(next)
    }
}

impl HostState for PrioritizedReplay {
    fn save_state(&self) -> rlgraph_core::Result<SavedState> {
        let mut state = SavedState {
            meta: json!({ "max_priority": self.max_priority, "alpha": self.alpha, "beta": self.beta }),
            ..SavedState::default()
        };
        self.ring.save(&mut state);
        let leaves = self.sum_tree.leaves(self.ring.size());
        state
            .tensors
            .insert("priorities".into(), HostTensor::f64([leaves.len()], leaves)?);
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
