//! Device-resident CartPole throughput (steps per second over all copies) at 1 to 65,536
//! copies, on candle and on tch (on a GPU with `RLGRAPH_TEST_DEVICE=cuda:0`), against the
//! host `VectorEnv` (sequential, one core) and a plain loop over `CartPole::step`, in the
//! same run. On the CPU the tensor environments step as one fused host pass; `tensor-ops`
//! is the same environment stepped by its tensor ops, the baseline of that pass. On a GPU,
//! `tensor-tch-cuda:0-captured` replays one recorded step (CUDA graphs) and
//! `tensor-tch-cuda:0-one-kernel` launches one kernel compiled at run time per step (both with
//! backend-tch's cuda-shim feature), and every device side is timed as the PyTorch and JAX anchors time theirs: steps
//! queued back to back, one wait at the end. `RLGRAPH_BENCH_COPIES=1,256` picks the copy
//! counts; the host sides run up to 65,536 copies.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::Value;
use rlgraph_core::{test_device, Backend, Device, HostTensor};
use rlgraph_envs::{CartPole, Env, Stepping, VectorEnv};
use rlgraph_tests::{gpu_test_device, Candle, Tch};

fn copies() -> Vec<usize> {
    std::env::var("RLGRAPH_BENCH_COPIES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16, 256, 4096, 65536])
}

/// How the tensor copies restart (`RLGRAPH_BENCH_RESTARTS`), and the label suffix that says so.
fn restarts(n: usize) -> (rlgraph_tensor_envs::Restarts, &'static str) {
    match std::env::var("RLGRAPH_BENCH_RESTARTS").as_deref() {
        Ok("philox") => (rlgraph_tensor_envs::Restarts::Philox, "-philox"),
        _ => (
            rlgraph_tensor_envs::Restarts::Stream {
                depth: rlgraph_tensor_envs::default_depth(n),
            },
            "",
        ),
    }
}

fn tensor_side<B: Backend>(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    let device = test_device::<B>();
    let (how, suffix) = restarts(n);
    let mut envs = rlgraph_tensor_envs::make_with::<B>("CartPole-v1", n, 0, device, how).expect("envs");
    envs.reset().expect("reset");
    let actions = random_actions::<B>(n, device);
    let label = format!("tensor-{}-{device}{suffix}", B::NAME);
    c.bench_function(BenchmarkId::new(label, n), |b| {
        b.iter_custom(|iters| steps_then_sync::<B>(iters, device, || envs.step(&actions).map(|s| s.observation)))
    });
}

/// The same steps replayed from one recorded step (CUDA graphs), on a GPU only.
fn captured_side(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    let Some(device) = gpu_test_device::<Tch>() else {
        return;
    };
    let envs = cartpole_copies::<Tch>(n, device);
    let actions = random_actions::<Tch>(n, device);
    let mut captured = match rlgraph_tensor_envs::Captured::new(envs, &actions) {
        Ok(captured) => captured,
        Err(e) => return eprintln!("captured tensor CartPole at {n} copies: {e}"),
    };
    c.bench_function(
        BenchmarkId::new(format!("tensor-tch-{device}-captured{}", restarts(n).1), n),
        |b| {
            b.iter_custom(|iters| {
                steps_then_sync::<Tch>(iters, device, || captured.step(&actions).map(|s| s.observation.clone()))
            })
        },
    );
}

/// The same steps as one kernel each (compiled at run time), on a GPU only.
fn one_kernel_side(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    use rlgraph_tensor_envs::TensorEnv;
    let Some(device) = gpu_test_device::<Tch>() else {
        return;
    };
    let mut envs = match rlgraph_tensor_envs::OneKernel::new(cartpole_copies::<Tch>(n, device)) {
        Ok(envs) => envs,
        Err(e) => return eprintln!("one-kernel tensor CartPole at {n} copies: {e}"),
    };
    envs.reset().expect("reset");
    let actions = random_actions::<Tch>(n, device);
    c.bench_function(
        BenchmarkId::new(format!("tensor-tch-{device}-one-kernel{}", restarts(n).1), n),
        |b| b.iter_custom(|iters| steps_then_sync::<Tch>(iters, device, || envs.step(&actions).map(|s| s.observation))),
    );
}

/// The time of `iters` steps queued back to back and one wait for the device at the end, as
/// the PyTorch and JAX anchors time theirs (a device-resident environment's observations stay
/// on the device; nothing downloads them).
fn steps_then_sync<B: Backend>(
    iters: u64,
    device: Device,
    mut step: impl FnMut() -> rlgraph_core::Result<B::Tensor>,
) -> std::time::Duration {
    let start = std::time::Instant::now();
    for _ in 0..iters {
        std::hint::black_box(step().expect("step"));
    }
    B::sync(device).expect("sync");
    start.elapsed()
}

fn random_actions<B: Backend>(n: usize, device: Device) -> B::Tensor {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let actions: Vec<i64> = (0..n).map(|_| rng.random_range(0..2)).collect();
    B::from_host(&HostTensor::i64([n], actions).expect("actions"), device).expect("upload")
}

/// `n` CartPole copies as `Batched` itself (not boxed), on `device`.
fn cartpole_copies<B: Backend>(
    n: usize,
    device: Device,
) -> rlgraph_tensor_envs::Batched<B, rlgraph_tensor_envs::CartPoleDynamics<B>> {
    let host = CartPole::new(0);
    let spaces = (host.state_space().clone(), host.action_space().clone());
    let dynamics = rlgraph_tensor_envs::CartPoleDynamics::<B>::new(n, device).expect("dynamics");
    rlgraph_tensor_envs::Batched::with_restarts(dynamics, n, device, 0, restarts(n).0, spaces).expect("envs")
}

/// The same CartPole copies stepped by tensor ops rather than the fused host pass.
fn tensor_ops_side<B: Backend>(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    use rlgraph_tensor_envs::TensorEnv;
    let device = test_device::<B>();
    let mut envs = cartpole_copies::<B>(n, device);
    envs.set_fused(false).expect("tensor ops");
    envs.reset().expect("reset");
    let actions = random_actions::<B>(n, device);
    c.bench_function(
        BenchmarkId::new(format!("tensor-ops-{}-{device}{}", B::NAME, restarts(n).1), n),
        |b| b.iter_custom(|iters| steps_then_sync::<B>(iters, device, || envs.step(&actions).map(|s| s.observation))),
    );
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("tensor-cartpole-steps");
    group.sample_size(20);
    for n in copies() {
        group.throughput(Throughput::Elements(n as u64));
        tensor_side::<Candle>(&mut group, n);
        tensor_side::<Tch>(&mut group, n);
        captured_side(&mut group, n);
        one_kernel_side(&mut group, n);
        if test_device::<Candle>() == Device::Cpu {
            tensor_ops_side::<Candle>(&mut group, n);
        }
        if n > 65536 {
            continue;
        }
        let actions: Vec<Value> = (0..n).map(|i| Value::i32((i % 2) as i32)).collect();
        let envs: Vec<Box<dyn Env>> = (0..n)
            .map(|i| Box::new(CartPole::new(i as u64)) as Box<dyn Env>)
            .collect();
        let mut vector = VectorEnv::new(envs, Stepping::Sequential).expect("same spaces");
        vector.reset_all(Some(0)).unwrap();
        group.bench_function(BenchmarkId::new("vector-env", n), |b| {
            b.iter(|| vector.step(&actions).expect("steps"))
        });
        let mut plain: Vec<CartPole> = (0..n).map(|i| CartPole::new(i as u64)).collect();
        for e in &mut plain {
            e.reset(Some(0)).unwrap();
        }
        group.bench_function(BenchmarkId::new("plain-loop", n), |b| {
            b.iter(|| {
                for (e, a) in plain.iter_mut().zip(&actions) {
                    let s = e.step(a).expect("steps");
                    if s.terminated || s.truncated {
                        e.reset(None).unwrap();
                    }
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
