//! The executor's per-call overhead as a ratio, measured so that drift in the machine's speed
//! cancels: blocks of executor calls and of the hand-written forward pass alternate, and the
//! ratio of their summed times is printed per backend and batch size. Criterion's
//! `executor_overhead` bench times each side in its own window instead.
//!
//! `cargo run --release -p rlgraph-tests --example executor_overhead_ratio [seconds per case]`

use rlgraph_core::backend::prelude::*;
use std::time::{Duration, Instant};

use rlgraph_core::{Backend, DType, Device, GraphExecutor, Tree};
use rlgraph_tests::overhead::{candle_forward, mlp_executor, mlp_weights, tch_forward};
use rlgraph_tests::{Candle, Tch};

/// Alternates `block` calls of each side for about `budget`; gives the executor's summed time
/// over the hand-written side's, and the hand-written time per call.
fn ratio<B: Backend>(
    exec: &mut GraphExecutor<B>,
    x: &B::Tensor,
    hand: impl Fn() -> B::Tensor,
    budget: Duration,
) -> (f64, Duration) {
    let block = 2000;
    let (mut executor, mut written, mut calls) = (Duration::ZERO, Duration::ZERO, 0u32);
    let input = Tree::Leaf(x.clone());
    let start = Instant::now();
    while start.elapsed() < budget {
        let t = Instant::now();
        for _ in 0..block {
            std::hint::black_box(exec.execute_tensors("run", [&input]).expect("runs"));
        }
        executor += t.elapsed();
        let t = Instant::now();
        for _ in 0..block {
            std::hint::black_box(hand());
        }
        written += t.elapsed();
        calls += block;
    }
    (executor.as_secs_f64() / written.as_secs_f64(), written / calls)
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let budget = Duration::from_secs_f64(seconds);
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
    println!("backend batch  hand-written/call  executor/hand-written");
    for batch in [1usize, 32, 256] {
        let mut exec = mlp_executor::<Candle>(Device::Cpu);
        let w = mlp_weights(&exec);
        let x = Candle::uniform(&[batch, 8], -1.0, 1.0, DType::F32, Device::Cpu, &mut rng).expect("x");
        let (r, per_call) = ratio(&mut exec, &x, || candle_forward(&x, &w), budget);
        println!("candle  {batch:5}  {per_call:>17.2?}  {r:.4}");
        let mut exec = mlp_executor::<Tch>(Device::Cpu);
        let w = mlp_weights(&exec);
        let x = Tch::uniform(&[batch, 8], -1.0, 1.0, DType::F32, Device::Cpu, &mut rng).expect("x");
        let (r, per_call) = ratio(&mut exec, &x, || tch_forward(&x, &w), budget);
        println!("tch     {batch:5}  {per_call:>17.2?}  {r:.4}");
    }
}
