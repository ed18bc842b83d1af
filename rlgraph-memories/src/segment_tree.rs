//! Segment trees over a power-of-two number of leaves: the sum tree finds the record whose
//! prefix sum of priorities covers a draw, the min tree gives the smallest priority for
//! importance weights. Both update in O(log n).

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
}

/// A binary segment tree stored as an array: node `i` has children `2i` and `2i+1`, and the
/// leaves sit at `capacity..2*capacity`.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentTree {
    reduce: Reduce,
    capacity: usize,
    nodes: Vec<f64>,
}

impl SegmentTree {
    /// A tree with room for `size` leaves, rounded up to the next power of two, all neutral.
    pub fn new(size: usize, reduce: Reduce) -> Self {
        let capacity = size.max(1).next_power_of_two();
        SegmentTree {
            reduce,
            capacity,
            nodes: vec![reduce.neutral(); 2 * capacity],
        }
    }

    /// The number of leaves (a power of two).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Sets leaf `i` (below `capacity`) and updates its ancestors.
    pub fn set(&mut self, i: usize, value: f64) {
        let mut node = i + self.capacity;
        self.nodes[node] = value;
        node /= 2;
        while node >= 1 {
            self.nodes[node] = self.reduce.apply(self.nodes[2 * node], self.nodes[2 * node + 1]);
            node /= 2;
        }
    }

    /// Leaf `i`.
    pub fn get(&self, i: usize) -> f64 {
        self.nodes[i + self.capacity]
    }

    /// The reduction over all leaves.
    pub fn root(&self) -> f64 {
        self.nodes[1]
    }

    /// The reduction over leaves `start..end`.
    pub fn reduce(&self, start: usize, end: usize) -> f64 {
        let (mut lo, mut hi) = (start + self.capacity, end.min(self.capacity) + self.capacity);
        let mut acc = self.reduce.neutral();
        while lo < hi {
            if lo % 2 == 1 {
                acc = self.reduce.apply(acc, self.nodes[lo]);
                lo += 1;
            }
            if hi % 2 == 1 {
                hi -= 1;
                acc = self.reduce.apply(acc, self.nodes[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        acc
    }

    /// For a sum tree: the first leaf `i` whose inclusive prefix sum exceeds `prefix`
    /// (leaves of priority 0 are never returned for `0 <= prefix < root()`).
    pub fn find_prefix_sum(&self, mut prefix: f64) -> usize {
        let mut node = 1;
        while node < self.capacity {
            let left = self.nodes[2 * node];
            if left > prefix {
                node *= 2;
            } else {
                prefix -= left;
                node = 2 * node + 1;
            }
        }
        node - self.capacity
    }

    /// `find_prefix_sum` for many prefixes at once. The descents run level by level, so
    /// their memory loads are independent and overlap: on a tree of a million leaves, whose
    /// lower levels miss the cache, this is several times faster than one descent after
    /// another.
    pub fn find_prefix_sums(&self, prefixes: &[f64]) -> Vec<usize> {
        let mut nodes = vec![1usize; prefixes.len()];
        let mut rest = prefixes.to_vec();
        let mut width = 1;
        while width < self.capacity {
            for (node, prefix) in nodes.iter_mut().zip(rest.iter_mut()) {
                let left = self.nodes[2 * *node];
                if left > *prefix {
                    *node *= 2;
                } else {
                    *prefix -= left;
                    *node = 2 * *node + 1;
                }
            }
            width *= 2;
        }
        nodes.into_iter().map(|n| n - self.capacity).collect()
    }

    /// The leaves `0..n`, for saving.
    pub fn leaves(&self, n: usize) -> &[f64] {
        &self.nodes[self.capacity..self.capacity + n.min(self.capacity)]
    }
}
