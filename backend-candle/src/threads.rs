//! `init_threads`: fixes candle's CPU thread count once, so candle does not look it up again
//! on every matrix product.
//!
//! candle 0.11 reads `RAYON_NUM_THREADS`, and where it is unset on a Linux machine without
//! CPU capacities in sysfs (most x86 machines) counts the physical cores by reading and
//! parsing `/proc/cpuinfo`, on every `matmul`. For the small networks of RL agents that read
//! costs more than the product: DQN on CartPole ran about 5x slower on this project's
//! 2-core machines (3,500 against 19,000 frames per second).

/// Sets `RAYON_NUM_THREADS` to the machine's available parallelism if it is unset; returns
/// the count candle will use.
///
/// Call it first thing in `main`, before other threads start: it changes the process's
/// environment, which is not safe while another thread may read it (libraries written in C
/// read it without Rust's lock). Under `cargo`, `.cargo/config.toml` sets the variable for
/// this workspace's tests and benches instead.
///
/// ```
/// let threads = backend_candle::init_threads();
/// assert!(threads >= 1);
/// assert_eq!(std::env::var("RAYON_NUM_THREADS").unwrap(), threads.to_string());
/// ```
pub fn init_threads() -> usize {
    if let Some(n) = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return n;
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    n
}
