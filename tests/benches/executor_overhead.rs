//! Per-call overhead of the executor: an MLP forward pass (8 -> 64 -> 64 -> 4, ReLU) through
//! `GraphExecutor::execute_tensors`, against the same forward pass hand-written directly on
//! candle and on tch, with the same weights, at batch sizes 1, 32 and 256. Both sides use
//! the trainable variables as they are, so both record autograd history alike
//! (`rlgraph_tests::overhead`).
//!
//! Criterion times one side and then the other, so a machine whose speed drifts skews their
//! ratio; `examples/executor_overhead_ratio.rs` interleaves the two for a steadier ratio.
//!
//! With `RLGRAPH_TEST_DEVICE=cuda:0` and a CUDA libtorch, the tch side runs on the GPU and
//! both of its sides wait for the result (a download), so queued kernels are counted.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{test_device, DType, Device, Tree};
use rlgraph_tests::overhead::{candle_forward, mlp_executor, mlp_weights, tch_forward};
use rlgraph_tests::{finished, Candle, Tch};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("mlp-forward");
    for batch in [1usize, 32, 256] {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        // candle
        let mut exec = mlp_executor::<Candle>(test_device::<Candle>());
        let w = mlp_weights(&exec);
        let x = Candle::uniform(&[batch, 8], -1.0, 1.0, DType::F32, Device::Cpu, &mut rng).expect("x");
        // Each side drops its result (and the autograd history behind it) within the timing,
        // as a caller would. Both borrow the input.
        let input = Tree::Leaf(x.clone());
        group.bench_with_input(BenchmarkId::new("candle/executor", batch), &input, |b, input| {
            b.iter(|| exec.execute_tensors("run", [input]).expect("runs"))
        });
        group.bench_with_input(BenchmarkId::new("candle/hand-written", batch), &x, |b, x| {
            b.iter(|| candle_forward(x, &w))
        });
        // tch
        let device = test_device::<Tch>();
        let mut exec = mlp_executor::<Tch>(device);
        let w = mlp_weights(&exec);
        let on_gpu = device != Device::Cpu;
        let x = Tch::uniform(&[batch, 8], -1.0, 1.0, DType::F32, device, &mut rng).expect("x");
        let input = Tree::Leaf(x.clone());
        group.bench_with_input(BenchmarkId::new("tch/executor", batch), &input, |b, input| {
            b.iter(|| {
                let out = exec.execute_tensors("run", [input]).expect("runs");
                finished::<Tch>(out[0].as_leaf().expect("leaf").clone(), on_gpu)
            })
        });
        group.bench_with_input(BenchmarkId::new("tch/hand-written", batch), &x, |b, x| {
            b.iter(|| finished::<Tch>(tch_forward(x, &w), on_gpu))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
