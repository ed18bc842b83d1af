//! Forward pass of the Nature-DQN network (84x84x4 NHWC input) through the executor, built
//! from its RLgraph layer specs, against the same computation hand-written on the backend
//! (one NHWC -> NCHW permute, three convolutions, flatten, two dense layers), batch 1 and 32.
//! With `RLGRAPH_TEST_DEVICE=cuda:0` the backends that have the GPU run there, and both sides
//! wait for their result (a download).

use rlgraph_core::backend::prelude::*;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rlgraph_core::{test_device, Backend, DType, Device, GraphExecutor, Tree};
use rlgraph_tests::{finished, gpu_test_device, variable_tensors, Candle, Tch};

fn network<B: Backend>() -> GraphExecutor<B> {
    rlgraph_tests::network_on_test_device(
        &rlgraph_tests::dummies::nature_dqn_spec(),
        r#"{"type": "float-box", "shape": [84, 84, 4], "add_batch_rank": true}"#,
    )
}

fn hand_written<B: Backend>(x: &B::Tensor, w: &[B::Tensor]) -> B::Tensor {
    let run = || -> rlgraph_core::Result<B::Tensor> {
        let batch = B::shape(x)[0];
        // NHWC -> NCHW once; the kernels are stored OIHW already.
        let mut h = B::permute(x, &[0, 3, 1, 2])?;
        for (i, stride) in [(0, 4), (2, 2), (4, 1)] {
            h = B::relu(&B::add(
                &B::conv2d(&h, &w[i], stride, 0)?,
                &B::reshape(&w[i + 1], &[1, B::shape(&w[i + 1])[0], 1, 1])?,
            )?)?;
        }
        // Flatten in NHWC order, as the layer does, so the same dense weights apply.
        let h = B::permute(&h, &[0, 2, 3, 1])?;
        let h = B::reshape(&h, &[batch, 3136])?;
        let h = B::relu(&B::add(&B::matmul(&h, &w[6])?, &w[7])?)?;
        B::add(&B::matmul(&h, &w[8])?, &w[9])
    };
    run().expect("forward")
}

fn weights<B: Backend>(exec: &GraphExecutor<B>) -> Vec<B::Tensor> {
    let vars = [
        "conv1/kernel",
        "conv1/bias",
        "conv2/kernel",
        "conv2/bias",
        "conv3/kernel",
        "conv3/bias",
        "fc/kernel",
        "fc/bias",
        "q/kernel",
        "q/bias",
    ];
    variable_tensors(exec, vars.map(|p| format!("neural-network/{p}")))
}

fn bench_backend<B: Backend>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("nature-dqn/{}", B::NAME));
    group.sample_size(20);
    for batch in [1usize, 32] {
        let mut exec = network::<B>();
        let w = weights(&exec);
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let device = test_device::<B>();
        let on_gpu = device != Device::Cpu;
        let x = B::uniform(&[batch, 84, 84, 4], 0.0, 1.0, DType::F32, device, &mut rng).expect("x");
        // Same weights, same input: the two paths must agree before they are timed.
        let input = Tree::Leaf(x.clone());
        let a = B::to_host(
            exec.execute_tensors("call", [&input]).expect("runs")[0]
                .as_leaf()
                .expect("leaf"),
        )
        .expect("host");
        let b = B::to_host(&hand_written::<B>(&x, &w)).expect("host");
        assert!(a
            .data
            .to_f64()
            .iter()
            .zip(b.data.to_f64())
            .all(|(p, q)| (p - q).abs() <= 1e-4 * (1.0 + q.abs())));
        group.bench_with_input(BenchmarkId::new("executor", batch), &input, |bch, input| {
            bch.iter(|| {
                let out = exec.execute_tensors("call", [input]).expect("runs");
                finished::<B>(out[0].as_leaf().expect("leaf").clone(), on_gpu)
            })
        });
        group.bench_with_input(BenchmarkId::new("hand-written", batch), &x, |bch, x| {
            bch.iter(|| finished::<B>(hand_written::<B>(x, &w), on_gpu))
        });
    }
    group.finish();
}

/// The executor's forward pass replayed from a CUDA graph (tch on a GPU only): the input
/// copied in, one replay, the Q-values downloaded.
fn bench_captured(c: &mut Criterion) {
    use rlgraph_core::GraphCapture;
    let Some(device) = gpu_test_device::<Tch>() else {
        return;
    };
    let mut group = c.benchmark_group("nature-dqn/tch");
    group.sample_size(20);
    for batch in [1usize, 32] {
        let mut exec = network::<Tch>();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let x = Tch::uniform(&[batch, 84, 84, 4], 0.0, 1.0, DType::F32, device, &mut rng).expect("x");
        let input = Tch::uniform(&[batch, 84, 84, 4], 0.0, 1.0, DType::F32, device, &mut rng).expect("input");
        let recorded = rlgraph_core::capture::<Tch, _>(device, || {
            let out = exec.execute_tensors("call", [&Tree::Leaf(input.clone())])?;
            Ok(out[0].as_leaf().expect("leaf").clone())
        });
        let (graph, q) = match recorded {
            Ok(recorded) => recorded,
            Err(e) => return eprintln!("nature-dqn captured at batch {batch}: {e}"),
        };
        group.bench_with_input(BenchmarkId::new("executor-captured", batch), &x, |bch, x| {
            bch.iter(|| {
                Tch::copy_into(&input, x).expect("copy in");
                graph.replay().expect("replay");
                finished::<Tch>(q.clone(), true)
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
