//! Segment trees over a power-of-two number of leaves: the sum tree finds the record whose
//! prefix sum of priorities covers a draw, the min tree gives the smallest priority for
//! importance weights. Both update in O(log n).
//!
//! Each node has eight children stored together in one 64-byte, cache-line-aligned block, so
//! a descent touches one cache line per level and a million leaves take seven levels instead
//! of twenty: the lower levels of a large tree miss the cache, and that is what sampling
//! costs.

/// The reduction a tree applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// Sum of the leaves (neutral 0).
    Sum,
    /// Minimum of the leaves (neutral +inf).
    Min,
}

impl Reduce {
    fn neutral(self) -> f64 {
        match self {
            Reduce::Sum => 0.0,
            Reduce::Min => f64::INFINITY,
        }
    }

    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Reduce::Sum => a + b,
            Reduce::Min => a.min(b),
        }
    }

    /// The reduction of one block, pairwise: three dependent steps instead of eight, and
    /// the same value for the same children however they were last written.
    fn block(self, b: &Block) -> f64 {
        let [a, b, c, d, e, f, g, h] = b.0;
        let r = |x, y| self.apply(x, y);
        r(r(r(a, b), r(c, d)), r(r(e, f), r(g, h)))
    }
}

const ARITY: usize = 8;

/// Eight sibling values in one cache line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(64))]
struct Block([f64; ARITY]);

/// An 8-ary segment tree. `levels[0]` holds the root's eight children; `levels[k]` holds
/// the children of the nodes of `levels[k - 1]`, block `j` being the children of node `j`;
/// the last level holds the leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentTree {
    reduce: Reduce,
    capacity: usize,
    levels: Vec<Vec<Block>>,
}

impl SegmentTree {
    /// A tree with room for `size` leaves, rounded up to the next power of two, all neutral.
    pub fn new(size: usize, reduce: Reduce) -> Self {
        let capacity = size.max(1).next_power_of_two();
        let mut blocks = capacity.div_ceil(ARITY);
        let mut levels = vec![vec![Block([reduce.neutral(); ARITY]); blocks]];
        while blocks > 1 {
            blocks = blocks.div_ceil(ARITY);
            levels.push(vec![Block([reduce.neutral(); ARITY]); blocks]);
        }
        levels.reverse();
        SegmentTree {
            reduce,
            capacity,
            levels,
        }
    }

    /// The number of leaves (a power of two).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Sets leaf `i` (below `capacity`) and updates its ancestors.
    pub fn set(&mut self, i: usize, value: f64) {
        let mut node = i;
        let mut value = value;
        for level in self.levels.iter_mut().rev() {
            let block = &mut level[node / ARITY];
            block.0[node % ARITY] = value;
            value = self.reduce.block(block);
            node /= ARITY;
        }
    }

    /// Sets leaf `indices[k]` to `values[k]` for every `k` (a later duplicate wins, as with
    /// [`SegmentTree::set`] in order), then updates each changed ancestor once, level by
    /// level: a learner's batch of priorities shares most of its upper nodes, and a level
    /// with fewer nodes than the batch is recomputed whole.
    ///
    /// # Panics
    /// If an index is at or beyond `capacity`, as [`SegmentTree::set`] does.
    pub fn set_many(&mut self, indices: &[usize], values: &[f64]) {
        let Some(leaves) = self.levels.last_mut() else { return };
        // The blocks of the level below that changed; consecutive repeats are dropped, and
        // any others only cost a second identical recomputation.
        let mut changed: Vec<usize> = Vec::with_capacity(indices.len());
        for (&i, &v) in indices.iter().zip(values) {
            leaves[i / ARITY].0[i % ARITY] = v;
            if changed.last() != Some(&(i / ARITY)) {
                changed.push(i / ARITY);
            }
        }
        for level in (0..self.levels.len() - 1).rev() {
            let (upper, lower) = self.levels.split_at_mut(level + 1);
            let (parents, children) = (&mut upper[level], &lower[0]);
            if children.len() <= changed.len() {
                for (node, block) in children.iter().enumerate() {
                    parents[node / ARITY].0[node % ARITY] = self.reduce.block(block);
                }
                changed.clear();
                changed.extend(0..parents.len());
            } else {
                let mut kept = 0;
                for k in 0..changed.len() {
                    let node = changed[k];
                    parents[node / ARITY].0[node % ARITY] = self.reduce.block(&children[node]);
                    if kept == 0 || changed[kept - 1] != node / ARITY {
                        changed[kept] = node / ARITY;
                        kept += 1;
                    }
                }
                changed.truncate(kept);
            }
        }
    }

    /// Leaf `i`.
    pub fn get(&self, i: usize) -> f64 {
        self.levels
            .last()
            .map_or(self.reduce.neutral(), |leaves| leaves[i / ARITY].0[i % ARITY])
    }

    /// The reduction over all leaves.
    pub fn root(&self) -> f64 {
        self.reduce.block(&self.levels[0][0])
    }

    /// The reduction over leaves `start..end`.
    pub fn reduce(&self, start: usize, end: usize) -> f64 {
        let end = end.min(self.capacity);
        if start >= end {
            return self.reduce.neutral();
        }
        self.reduce_node(0, 0, start, end)
    }

    /// The reduction of the children of `node` at `level` that fall in `start..end`, where
    /// child `c` covers leaves `[c * span, (c + 1) * span)` with `span` leaves per child.
    fn reduce_node(&self, level: usize, node: usize, start: usize, end: usize) -> f64 {
        let span = ARITY.pow((self.levels.len() - 1 - level) as u32);
        let mut acc = self.reduce.neutral();
        for c in 0..ARITY {
            let child = node * ARITY + c;
            let (lo, hi) = (child * span, (child + 1) * span);
            if hi <= start || lo >= end {
                continue;
            }
            let value = if start <= lo && hi <= end {
                self.levels[level][node].0[c]
            } else {
                self.reduce_node(level + 1, child, start, end)
            };
            acc = self.reduce.apply(acc, value);
        }
        acc
    }

    /// For a sum tree: the first leaf `i` whose inclusive prefix sum exceeds `prefix`
    /// (leaves of priority 0 are never returned for `0 <= prefix < root()`).
    pub fn find_prefix_sum(&self, prefix: f64) -> usize {
        self.find_prefix_sums(&[prefix])[0]
    }

    /// `find_prefix_sum` for many prefixes at once. The descents run level by level, so
    /// their memory loads are independent and overlap.
    pub fn find_prefix_sums(&self, prefixes: &[f64]) -> Vec<usize> {
        let mut nodes = vec![0usize; prefixes.len()];
        let mut rest = prefixes.to_vec();
        for level in &self.levels {
            for (node, prefix) in nodes.iter_mut().zip(rest.iter_mut()) {
                let block = &level[*node].0;
                // The child whose running sum first exceeds the prefix; past the last
                // non-empty child on rounding, the last child with weight.
                let mut chosen = ARITY - 1;
                for (c, &w) in block.iter().enumerate() {
                    if w > *prefix {
                        chosen = c;
                        break;
                    }
                    *prefix -= w;
                }
                if chosen == ARITY - 1 && block[chosen] <= 0.0 {
                    chosen = block.iter().rposition(|&w| w > 0.0).unwrap_or(0);
                    *prefix = block[chosen].max(0.0) * 0.5;
                }
                *node = *node * ARITY + chosen;
            }
        }
        nodes
    }

    /// The leaves `0..n`, for saving.
    pub fn leaves(&self, n: usize) -> Vec<f64> {
        (0..n.min(self.capacity)).map(|i| self.get(i)).collect()
    }
}
