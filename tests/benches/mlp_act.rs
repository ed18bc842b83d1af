//! Greedy acting through the executor with the MLP of `gpu_anchors.py` part B (4-64-64-2,
//! tanh), at batch 1, 256 and 4,096, timed as that script times PyTorch so the two sit side
//! by side: `device` queues calls back to back and waits once at the end; `host-roundtrip`
//! brings each observation from the host and each action back. On tch on a GPU
//! (`RLGRAPH_TEST_DEVICE=cuda:0`) the same forward pass and argmax also run replayed from a
//! CUDA graph (`captured-*`), as PyTorch's `torch.cuda.graph` does. Candle runs on the CPU.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{test_device, DType, Device, GraphCapture, GraphExecutor, Tree};
use rlgraph_tests::{gpu_test_device, Candle, Tch};

const BATCHES: [usize; 3] = [1, 256, 4096];

fn network<B: Backend>() -> GraphExecutor<B> {
    let spec = serde_json::json!([
        {"type": "dense", "units": 64, "activation": "tanh", "scope": "hidden1"},
        {"type": "dense", "units": 64, "activation": "tanh", "scope": "hidden2"},
        {"type": "dense", "units": 2, "scope": "logits"}
    ]);
    rlgraph_tests::network_on_test_device(&spec, r#"{"type": "float-box", "shape": [4], "add_batch_rank": true}"#)
}

/// The greedy actions for `x`: the network's logits, then argmax, all on `x`'s device.
fn act<B: Backend>(exec: &mut GraphExecutor<B>, x: &B::Tensor) -> rlgraph_core::Result<B::Tensor> {
    let out = B::without_grad(|| exec.execute_tensors("call", [&Tree::Leaf(x.clone())]))?;
    let logits = out[0].as_leaf().expect("one leaf").clone();
    B::argmax(&logits, 1, false)
}

/// `iters` runs of `f`, then one wait for the device: the time per call of calls queued back to back.
fn queued<B: Backend>(iters: u64, device: Device, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    B::sync(device).expect("sync");
    start.elapsed()
}

fn bench_backend<B: Backend>(c: &mut Criterion) {
    let device = test_device::<B>();
    let mut group = c.benchmark_group(format!("mlp-act/{}", B::NAME));
    group.sample_size(20);
    for batch in BATCHES {
        let mut exec = network::<B>();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
        let host = B::uniform(&[batch, 4], 0.0, 1.0, DType::F32, Device::Cpu, &mut rng).expect("host x");
        let host = B::to_host(&host).expect("host");
        let x = B::from_host(&host, device).expect("x");
        group.bench_with_input(BenchmarkId::new("device", batch), &x, |bch, x| {
            bch.iter_custom(|iters| {
                queued::<B>(iters, device, || {
                    act::<B>(&mut exec, x).expect("acts");
                })
            })
        });
        group.bench_with_input(BenchmarkId::new("host-roundtrip", batch), &host, |bch, host| {
            bch.iter(|| {
                let x = B::from_host(host, device).expect("upload");
                B::to_host(&act::<B>(&mut exec, &x).expect("acts")).expect("download")
            })
        });
    }
    group.finish();
}

/// The same forward pass and argmax replayed from a CUDA graph (tch on a GPU only).
fn bench_captured(c: &mut Criterion) {
    let Some(device) = gpu_test_device::<Tch>() else {
        return;
    };
    let mut group = c.benchmark_group("mlp-act/tch");
    group.sample_size(20);
    for batch in BATCHES {
        let mut exec = network::<Tch>();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
        let host = Tch::uniform(&[batch, 4], 0.0, 1.0, DType::F32, Device::Cpu, &mut rng).expect("host x");
        let input = Tch::to_device(&host, device).expect("input");
        // A warm-up outside the recording: cuBLAS makes its handle on first use.
        let eager = Tch::to_host(&act::<Tch>(&mut exec, &input).expect("warm-up")).expect("download");
        let recorded = rlgraph_core::capture::<Tch, _>(device, || act::<Tch>(&mut exec, &input));
        let (graph, actions) = match recorded {
            Ok(recorded) => recorded,
            Err(e) => return eprintln!("mlp-act captured at batch {batch}: {e}"),
        };
        graph.replay().expect("replay");
        assert_eq!(
            Tch::to_host(&actions).expect("download"),
            eager,
            "replayed actions differ"
        );
        group.bench_function(BenchmarkId::new("captured-device", batch), |bch| {
            bch.iter_custom(|iters| queued::<Tch>(iters, device, || graph.replay().expect("replay")))
        });
        group.bench_function(BenchmarkId::new("captured-host-roundtrip", batch), |bch| {
            bch.iter(|| {
                Tch::copy_into(&input, &host).expect("copy in");
                graph.replay().expect("replay");
                Tch::to_host(&actions).expect("download")
            })
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    bench_backend::<Candle>(c);
    bench_backend::<Tch>(c);
    bench_captured(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);
