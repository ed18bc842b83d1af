//! libtorch's intra-op threads follow `rlgraph_core::threads`: one by default, whatever
//! libtorch would pick (every core of the machine, whose OpenMP workers then wait on each
//! other at every parallel region: Pong acting ran 12x slower beside two busy processes).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The count last given to libtorch (0: none yet).
static APPLIED: AtomicUsize = AtomicUsize::new(0);

/// Gives libtorch the process's kernel thread count if it changed since the last call; the
/// backend calls it where work starts (uploads, new tensors and variables), so no program has
/// to.
pub(crate) fn sync() {
    rlgraph_core::host_allocator::tune_once();
    let n = rlgraph_core::threads::kernel_threads();
    if APPLIED.load(Ordering::Relaxed) != n {
        tch::set_num_threads(i32::try_from(n).unwrap_or(1));
        APPLIED.store(n, Ordering::Relaxed);
    }
}

/// The threads libtorch's CPU kernels use now (after the backend's first use, the count of
/// `rlgraph_core::threads::kernel_threads`).
pub fn intra_op_threads() -> usize {
    sync();
    usize::try_from(tch::get_num_threads()).unwrap_or(1)
}
