//! candle's CPU threads, sized from `rlgraph_core::threads` with no call and no variable.
//!
//! Matrix products and convolutions go through this crate's own kernels (`gemm_call.rs`),
//! which read the process's kernel thread count on every call. candle's large elementwise
//! ops run on a pool of its own that candle sizes once, at first use, from
//! `CANDLE_NUM_THREADS` (else `RAYON_NUM_THREADS`, else every physical core), whose workers
//! spin between ops: beside a second kernel thread or libtorch's, a spinning worker takes the
//! core they need (an Atari update on two kernel threads was no faster than on one until the
//! pool had none). Elementwise ops are bound by memory anyway, so the pool gets one thread:
//! the backend's first use sets `CANDLE_NUM_THREADS=1` unless a variable already says
//! otherwise, and only while the process has one thread, as a variable set while another
//! thread may read the environment is not safe.

use std::sync::Once;

/// Gives candle's elementwise pool one thread, once, when no variable sizes it and this is
/// the process's only thread; tunes the allocator. The backend calls it where work starts
/// (uploads, new tensors and variables).
pub(crate) fn first_use() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        rlgraph_core::host_allocator::tune_once();
        let unset = std::env::var_os("CANDLE_NUM_THREADS").is_none() && std::env::var_os("RAYON_NUM_THREADS").is_none();
        if unset && only_thread() {
            std::env::set_var(
                "CANDLE_NUM_THREADS",
                rlgraph_core::threads::kernel_threads().to_string(),
            );
        }
    });
}

/// Whether this process runs one thread (Linux's `/proc/self/status`; elsewhere, unknown:
/// false).
fn only_thread() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:").map(|n| n.trim() == "1"))
        })
        .unwrap_or(false)
}

/// Sets the threads of the backends' matrix kernels to `n` (at least 1, at most the CPUs this
/// process may use) and gives candle's elementwise pool one; returns the kernel count.
///
/// Call it first thing in `main`, before other threads start: it sets `CANDLE_NUM_THREADS`,
/// which is not safe while another thread may read the environment (where that cannot be
/// promised, `rlgraph_core::threads::set_kernel_threads` changes the kernels alone, and the
/// backend's first use sizes the pool).
///
/// ```
/// let n = backend_candle::init_threads(1);
/// assert_eq!(n, 1);
/// assert_eq!(rlgraph_core::threads::kernel_threads(), 1);
/// ```
pub fn init_threads(n: usize) -> usize {
    rlgraph_core::threads::set_kernel_threads(n);
    std::env::set_var("CANDLE_NUM_THREADS", "1");
    rlgraph_core::threads::kernel_threads()
}
