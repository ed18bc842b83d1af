//! The C allocator tuned for tensors: big buffers reused, not handed back to the kernel.
//!
//! Both backends allocate their CPU tensors with `malloc`. glibc serves a block above its
//! mmap threshold with fresh pages from the kernel and returns them when it is freed, and
//! trims the heap's free top beyond its trim threshold; an update that makes and drops a few
//! hundred tensors of megabytes then spends its time in page faults (an Atari DQN update
//! took ten times the page faults of a tuned one, and 10-30% longer). With the mmap threshold
//! at its largest (32 MiB) and trimming only past 256 MiB of free heap, those blocks are
//! reused. Larger blocks (a replay's frame pool) are still mapped and returned.

use std::sync::Once;

/// Applies the settings once per process, on glibc, unless a `MALLOC_` variable shows the
/// allocator is configured already. The backends call it at first use.
pub fn tune_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::vars_os().any(|(k, _)| k.to_string_lossy().starts_with("MALLOC_")) {
            return;
        }
        tune();
    });
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune() {
    // SAFETY: mallopt only changes the allocator's thresholds; it is thread-safe in glibc.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune() {}
