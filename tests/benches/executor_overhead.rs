//! Per-call overhead of the executor: an MLP forward pass (8 -> 64 -> 64 -> 4, ReLU) through
//! `GraphExecutor::execute_tensors`, against the same forward pass hand-written directly on
//! candle and on tch, with the same weights, at batch sizes 1, 32 and 256. Both sides use
//! the trainable variables as they are, so both record autograd history alike.
//!
//! With `RLGRAPH_TEST_DEVICE=cuda:0` and a CUDA libtorch, the tch side runs on the GPU and
//! both of its sides wait for the result (a download), so queued kernels are counted.

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{test_device, Backend, BuildOptions, DType, Device, DeviceMap, GraphExecutor, Tree};
use rlgraph_tests::dummies::mlp;
use rlgraph_tests::{finished, Candle, Tch};

const WIDTHS: [usize; 3] = [64, 64, 4];

fn executor<B: Backend>() -> GraphExecutor<B> {
    let spaces = BTreeMap::from([("x".to_string(), Space::from(FloatBox::new([8])).with_batch_rank(true))]);
    let options = BuildOptions {
        device_map: DeviceMap::new(test_device::<B>()),
        ..Default::default()
    };
    GraphExecutor::build(mlp::<B>("mlp", &WIDTHS), &spaces, &options, 0).expect("builds")
}

fn weights<B: Backend>(exec: &GraphExecutor<B>) -> Vec<B::Tensor> {
    let store = exec.store();
    [
        "dense-0/kernel",
        "dense-0/bias",
        "dense-1/kernel",
        "dense-1/bias",
        "dense-2/kernel",
        "dense-2/bias",
    ]
    .iter()
    .map(|p| B::var_tensor(store.var(store.index(&format!("mlp/{p}")).expect("exists"))).clone())
    .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("mlp-forward");
    for batch in [1usize, 32, 256] {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        // candle
        let mut exec = executor::<Candle>();
        let w = weights(&exec);
        let x = Candle::uniform(&[batch, 8], -1.0, 1.0, DType::F32, Device::Cpu, &mut rng).expect("x");
        // The executor takes its inputs by value; making that handle is the caller's, not timed.
        group.bench_with_input(BenchmarkId::new("candle/executor", batch), &x, |b, x| {
            b.iter_batched(
                || [Tree::Leaf(x.clone())],
                |inputs| exec.execute_tensors("run", inputs).expect("runs"),
                BatchSize::SmallInput,
            )
        });
        // Both sides drop their results outside the timing (iter_batched), so neither pays for it.
        group.bench_with_input(BenchmarkId::new("candle/hand-written", batch), &x, |b, x| {
            b.iter_batched(
                || (),
                |()| {
                    let h = x
                        .matmul(&w[0])
                        .and_then(|h| h.broadcast_add(&w[1]))
                        .and_then(|h| h.relu())
                        .expect("h0");
                    let h = h
                        .matmul(&w[2])
                        .and_then(|h| h.broadcast_add(&w[3]))
                        .and_then(|h| h.relu())
                        .expect("h1");
                    h.matmul(&w[4]).and_then(|h| h.broadcast_add(&w[5])).expect("out")
                },
                BatchSize::SmallInput,
            )
        });
        // tch
        let mut exec = executor::<Tch>();
        let w = weights(&exec);
        let device = test_device::<Tch>();
        let on_gpu = device != Device::Cpu;
        let x = Tch::uniform(&[batch, 8], -1.0, 1.0, DType::F32, device, &mut rng).expect("x");
        group.bench_with_input(BenchmarkId::new("tch/executor", batch), &x, |b, x| {
            b.iter_batched(
                || [Tree::Leaf(x.clone())],
                |inputs| {
                    let out = exec.execute_tensors("run", inputs).expect("runs");
                    finished::<Tch>(out[0].as_leaf().expect("leaf").clone(), on_gpu)
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("tch/hand-written", batch), &x, |b, x| {
            b.iter_batched(
                || (),
                |()| {
                    let h = (x.0.matmul(&w[0].0) + &w[1].0).relu();
                    let h = (h.matmul(&w[2].0) + &w[3].0).relu();
                    finished::<Tch>(backend_tch::TchTensor(h.matmul(&w[4].0) + &w[5].0), on_gpu)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
