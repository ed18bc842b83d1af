//! candle's CPU threads, sized from `rlgraph_core::threads` with no call and no variable.
//!
//! Matrix products and convolutions go through this crate's own kernels (`gemm_call.rs`),
//! which read the process's kernel thread count on every call. candle's large elementwise
//! ops run on a pool of its own that candle sizes once, at first use, from
//! `CANDLE_NUM_THREADS` (else `RAYON_NUM_THREADS`, else every physical core). So that pool
//! follows the same count, the backend's first use sets `CANDLE_NUM_THREADS` unless a
//! variable already says otherwise, and only while the process has one thread: a variable
//! set while another thread may read the environment is not safe.

use std::sync::Once;

/// Sizes candle's elementwise pool like the kernels (`RLGRAPH_THREADS`, else 1), once, when
/// no variable sizes it and this is the process's only thread. The backend calls it where
/// work starts (uploads, new tensors and variables).
pub(crate) fn first_use() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
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

/// Sets the threads of this crate's matrix kernels and of candle's elementwise pool to `n`
/// (at least 1, at most the CPUs this process may use); returns the count.
///
/// The matrix kernels follow at once. candle's pool is sized when first used, so call this
/// first thing in `main`, before other threads start: it sets `CANDLE_NUM_THREADS`, which is
/// not safe while another thread may read the environment. Without it, both use
/// `RLGRAPH_THREADS`, else one thread.
///
/// ```
/// let n = backend_candle::init_threads(1);
/// assert_eq!(n, 1);
/// assert_eq!(rlgraph_core::threads::kernel_threads(), 1);
/// ```
pub fn init_threads(n: usize) -> usize {
    rlgraph_core::threads::set_kernel_threads(n);
    let n = rlgraph_core::threads::kernel_threads();
    std::env::set_var("CANDLE_NUM_THREADS", n.to_string());
    n
}
