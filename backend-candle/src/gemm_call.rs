//! One checked entry to the `gemm` crate (the matrix kernels candle itself uses), with the
//! thread count of [`rlgraph_core::threads`].
//!
//! With more than one thread, a large product is split by rows of its result into one
//! product per thread: the calling thread computes the first part and rayon's pool the others.
//! Each element is still one full dot product in the same order, so the numbers do not depend
//! on the thread count, and a thread the machine cannot run at the moment has its share taken
//! by the others (rayon steals work) instead of holding them at a barrier. Small products
//! (classic-control networks) stay on the calling thread.
//!
//! Why not candle's own matmul: candle reads `RAYON_NUM_THREADS` on every product, and
//! where it is unset counts the machine's physical cores by parsing `/proc/cpuinfo`, each
//! time (a 5x slowdown of CartPole DQN, and a variable every program had to set). Here the
//! count is the process's setting, read with one atomic load.

use gemm::Parallelism;

/// A strided matrix inside a slice: element `(i, j)` at `offset + i * rs + j * cs`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Strided {
    pub offset: usize,
    pub rs: usize,
    pub cs: usize,
}

impl Strided {
    /// A row-major `rows x cols` matrix starting at `offset`.
    pub fn rows(offset: usize, cols: usize) -> Self {
        Strided {
            offset,
            rs: cols,
            cs: 1,
        }
    }

    /// The same elements read as the transpose.
    pub fn t(self) -> Self {
        Strided {
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }

    /// Whether a `rows x cols` matrix so laid out lies inside `len` elements.
    fn fits(&self, rows: usize, cols: usize, len: usize) -> bool {
        if rows == 0 || cols == 0 {
            return self.offset <= len;
        }
        let last = self.offset + (rows - 1) * self.rs + (cols - 1) * self.cs;
        last < len
    }
}

/// Products of fewer multiply-adds than this run on one thread: splitting costs more.
const PARALLEL_MIN: usize = 1 << 21;

/// Rows each thread's share of a split product has at least.
const ROWS_MIN: usize = 16;

/// `gemm` on one thread, after the checks of [`product`].
///
/// # Safety
/// The three matrices must lie inside their slices, and `dst` overlap neither input.
#[allow(clippy::too_many_arguments)]
unsafe fn serial<T: Copy + 'static + num_like::One>(
    (m, n, k): (usize, usize, usize),
    dst: *mut T,
    d: Strided,
    accumulate: bool,
    lhs: *const T,
    a: Strided,
    rhs: *const T,
    b: Strided,
) {
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.add(d.offset),
            d.cs as isize,
            d.rs as isize,
            accumulate,
            lhs.add(a.offset),
            a.cs as isize,
            a.rs as isize,
            rhs.add(b.offset),
            b.cs as isize,
            b.rs as isize,
            // dst = alpha dst + beta lhs rhs.
            if accumulate { T::one() } else { T::zero() },
            T::one(),
            false,
            false,
            false,
            Parallelism::None,
        );
    }
}

/// `dst (m x n) = lhs (m x k) . rhs (k x n)`, or `dst += ...` with `accumulate`: candle's call
/// of `gemm` (the same arguments, so the same numbers), after checking that every matrix
/// lies inside its slice. `false` when one does not (nothing is written).
#[allow(clippy::too_many_arguments)]
pub(crate) fn product<T: Copy + 'static + num_like::One>(
    (m, n, k): (usize, usize, usize),
    dst: &mut [T],
    d: Strided,
    accumulate: bool,
    lhs: &[T],
    a: Strided,
    rhs: &[T],
    b: Strided,
) -> bool {
    if !(d.fits(m, n, dst.len()) && a.fits(m, k, lhs.len()) && b.fits(k, n, rhs.len())) {
        return false;
    }
    if m == 0 || n == 0 {
        return true;
    }
    let threads = rlgraph_core::threads::kernel_threads().min(m / ROWS_MIN).max(1);
    let row_major = d.cs == 1 && d.rs >= n;
    if threads == 1 || m * n * k < PARALLEL_MIN || !row_major {
        // A tall result is computed as its transpose, `rhs^T . lhs^T`: `gemm` repacks its left
        // operand in panels of rows, and the shorter side packs the fewer numbers (a dense
        // layer's weight gradient, `x^T . grad` for 32 rows of 1,024 inputs, packed eight times
        // the numbers the other way round). Each element is the same dot product either way.
        let (shape, d, (lhs, a), (rhs, b)) = match m > n {
            true => ((n, m, k), d.t(), (rhs.as_ptr(), b.t()), (lhs.as_ptr(), a.t())),
            false => ((m, n, k), d, (lhs.as_ptr(), a), (rhs.as_ptr(), b)),
        };
        // SAFETY: the three matrices lie inside their slices (checked above; a transpose reads
        // the same elements), and `dst` is borrowed mutably, so it overlaps neither input.
        unsafe { serial(shape, dst.as_mut_ptr(), d, accumulate, lhs, a, rhs, b) };
        return true;
    }
    // Rows `[i * chunk, ...)` of the result are part `i` of `dst` from the first row on.
    let chunk = m.div_ceil(threads);
    let part_product = |i: usize, part: &mut [T]| {
        let rows = chunk.min(m - i * chunk);
        let a = Strided {
            offset: a.offset + i * chunk * a.rs,
            ..a
        };
        // SAFETY: part `i` holds rows `i * chunk..i * chunk + rows` of the checked `dst`
        // (each `d.rs` apart, the last `n` wide), and the matching rows of `lhs` lie inside it
        // as the whole did; parts are disjoint slices of `dst`.
        unsafe {
            serial(
                (rows, n, k),
                part.as_mut_ptr(),
                Strided { offset: 0, ..d },
                accumulate,
                lhs.as_ptr(),
                a,
                rhs.as_ptr(),
                b,
            )
        };
    };
    let mut parts = dst[d.offset..].chunks_mut(chunk * d.rs).enumerate();
    let first = parts.next();
    // In place: the calling thread computes part 0 while the pool takes the rest, where
    // handing every part to the pool left it waiting (SAC's 256-wide updates on two threads:
    // 1.05x one thread's speed that way, 1.24x this way).
    rayon::in_place_scope(|scope| {
        for (i, part) in parts {
            scope.spawn(move |_| part_product(i, part));
        }
        if let Some((i, part)) = first {
            part_product(i, part);
        }
    });
    true
}

/// The two constants `gemm` is called with.
pub(crate) mod num_like {
    /// Zero and one of a float type.
    pub trait One: Send + Sync {
        /// 0.
        fn zero() -> Self;
        /// 1.
        fn one() -> Self;
    }

    impl One for f32 {
        fn zero() -> Self {
            0.0
        }
        fn one() -> Self {
            1.0
        }
    }

    impl One for f64 {
        fn zero() -> Self {
            0.0
        }
        fn one() -> Self {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{product, Strided};
    use crate::test_values::values;

    #[test]
    fn a_product_split_over_threads_equals_one_thread_to_the_bit() {
        let (m, n, k) = (300, 70, 120);
        let (a, b) = (values(m * k, 1), values(k * n, 2));
        let run = |threads: usize| {
            rlgraph_core::threads::set_kernel_threads(threads);
            let mut out = vec![0.0f32; m * n + 5];
            // An offset result, and the right operand read transposed.
            let ok = product(
                (m, n, k),
                &mut out,
                Strided::rows(5, n),
                false,
                &a,
                Strided::rows(0, k),
                &b,
                Strided::rows(0, k).t(),
            );
            assert!(ok);
            out
        };
        let one = run(1);
        let two = run(2);
        rlgraph_core::threads::set_kernel_threads(1);
        assert!(one.iter().zip(&two).all(|(x, y)| x.to_bits() == y.to_bits()));
        // A result that does not fit its slice is refused, not written.
        let mut small = vec![0.0f32; 10];
        assert!(!product(
            (m, n, k),
            &mut small,
            Strided::rows(0, n),
            false,
            &a,
            Strided::rows(0, k),
            &b,
            Strided::rows(0, n)
        ));
    }
}
