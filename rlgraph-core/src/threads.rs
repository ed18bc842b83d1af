//! How many threads the backends' CPU kernels (matrix products, convolutions) use: one
//! process-wide setting that both backends read, so that no program has to set an
//! environment variable, and candle and libtorch never oversubscribe each other.
//!
//! The default is one thread. Measured on this project's 2-core machines (see the Atari table
//! in the book, `docs/book/src/performance/atari.md` in the repository): one thread is the
//! fastest for the small networks of classic control, where waking a second thread costs more
//! than the product it would share, and it is the only count that stays fast beside other busy
//! processes (environment processes of the Gymnasium bridge, other actors, a build): libtorch's
//! OpenMP workers wait for each other at every parallel region, and with the cores taken by
//! others each wait is a scheduler's time slice (12x slower acting on Pong beside two busy
//! processes). A learner alone on its machine gains from more: [`set_kernel_threads`] (the
//! `rlgraph` program's `--threads`) or the `RLGRAPH_THREADS` variable raises it, up to
//! [`available_cpus`], which counts the CPUs this process may run on (its affinity mask and
//! cgroup quota), not the host's.
//!
//! ```
//! use rlgraph_core::threads;
//!
//! assert!(threads::available_cpus() >= 1);
//! threads::set_kernel_threads(2);
//! assert_eq!(threads::kernel_threads(), 2.min(threads::available_cpus()));
//! threads::set_kernel_threads(1);
//! assert_eq!(threads::kernel_threads(), 1);
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The count set by [`set_kernel_threads`]; 0 while unset.
static SET: AtomicUsize = AtomicUsize::new(0);

/// The CPUs this process may run on: its affinity mask (`taskset`, a container's cpuset),
/// capped by its cgroup's CPU quota, as the operating system reports them when first asked.
pub fn available_cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Sets the threads the backends' CPU kernels use from now on, at least 1 and at most
/// [`available_cpus`].
pub fn set_kernel_threads(n: usize) {
    SET.store(n.clamp(1, available_cpus()), Ordering::Relaxed);
}

/// The threads the backends' CPU kernels use: as set by [`set_kernel_threads`], else from
/// `RLGRAPH_THREADS` (a count, or `all` for [`available_cpus`]), else 1.
pub fn kernel_threads() -> usize {
    match SET.load(Ordering::Relaxed) {
        0 => {
            static FROM_ENV: OnceLock<usize> = OnceLock::new();
            *FROM_ENV.get_or_init(|| parse(std::env::var("RLGRAPH_THREADS").ok().as_deref()).unwrap_or(1))
        }
        n => n,
    }
}

/// A thread count as `--threads` and `RLGRAPH_THREADS` spell it: a positive count (capped by
/// [`available_cpus`]) or `all`; `None` for anything else.
pub fn parse(text: Option<&str>) -> Option<usize> {
    match text?.trim() {
        "all" => Some(available_cpus()),
        t => t
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .map(|n| n.min(available_cpus())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_and_stay_within_the_cpus() {
        let cpus = available_cpus();
        assert_eq!(parse(Some("1")), Some(1));
        assert_eq!(parse(Some(" all ")), Some(cpus));
        assert_eq!(parse(Some("100000")), Some(cpus));
        assert_eq!(parse(Some("0")), None);
        assert_eq!(parse(Some("two")), None);
        assert_eq!(parse(None), None);
    }
}
