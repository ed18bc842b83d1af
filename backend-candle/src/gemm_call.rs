//! One checked entry to the `gemm` crate (the matrix kernels candle itself uses), with the
//! thread count of [`rlgraph_core::threads`].
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

/// The parallelism of one product: the kernel threads of [`rlgraph_core::threads`].
fn parallelism() -> Parallelism {
    match rlgraph_core::threads::kernel_threads() {
        0 | 1 => Parallelism::None,
        n => Parallelism::Rayon(n),
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
    // SAFETY: the three matrices lie inside their slices (checked above), `dst` is borrowed
    // mutably and so overlaps neither input, and `gemm` reads and writes only the elements
    // of the given extents.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr().add(d.offset),
            d.cs as isize,
            d.rs as isize,
            accumulate,
            lhs.as_ptr().add(a.offset),
            a.cs as isize,
            a.rs as isize,
            rhs.as_ptr().add(b.offset),
            b.cs as isize,
            b.rs as isize,
            // dst = alpha dst + beta lhs rhs.
            if accumulate { T::one() } else { T::zero() },
            T::one(),
            false,
            false,
            false,
            parallelism(),
        );
    }
    true
}

/// The two constants `gemm` is called with.
pub(crate) mod num_like {
    /// Zero and one of a float type.
    pub trait One {
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
