//! Device-resident CartPole throughput (steps per second over all copies) at 1 to 65,536
//! copies, on candle and on tch (on a GPU with `RLGRAPH_TEST_DEVICE=cuda:0`), against the
//! host `VectorEnv` (sequential, one core) and a plain loop over `CartPole::step`, in the
//! same run. On the CPU the tensor environments step as one fused host pass; `tensor-ops`
//! is the same environment stepped by its tensor ops, the baseline of that pass. `RLGRAPH_BENCH_COPIES=1,256` picks the copy counts; the host sides run up to
//! 65,536 copies.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::Value;
use rlgraph_core::{test_device, Backend, Device, HostTensor};
use rlgraph_envs::{CartPole, Env, Stepping, VectorEnv};
use rlgraph_tests::{finished, Candle, Tch};

fn copies() -> Vec<usize> {
    std::env::var("RLGRAPH_BENCH_COPIES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16, 256, 4096, 65536])
}

fn tensor_side<B: Backend>(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    let device = test_device::<B>();
    let mut envs = rlgraph_tensor_envs::make::<B>("CartPole-v1", n, 0, device).expect("envs");
    envs.reset().expect("reset");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let actions: Vec<i64> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let actions = B::from_host(&HostTensor::i64([n], actions).expect("actions"), device).expect("upload");
    let on_gpu = device != Device::Cpu;
    let label = format!("tensor-{}-{device}", B::NAME);
    c.bench_function(BenchmarkId::new(label, n), |b| {
        b.iter(|| finished::<B>(envs.step(&actions).expect("step").observation, on_gpu))
    });
}

/// The same CartPole copies stepped by tensor ops rather than the fused host pass.
fn tensor_ops_side<B: Backend>(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    use rlgraph_tensor_envs::TensorEnv;
    let device = test_device::<B>();
    let host = CartPole::new(0);
    let spaces = (host.state_space().clone(), host.action_space().clone());
    let dynamics = rlgraph_tensor_envs::CartPoleDynamics::<B>::new(n, device).expect("dynamics");
    let depth = rlgraph_tensor_envs::default_depth(n);
    let mut envs = rlgraph_tensor_envs::Batched::new(dynamics, n, device, 0, depth, spaces).expect("envs");
    envs.set_fused(false).expect("tensor ops");
    envs.reset().expect("reset");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let actions: Vec<i64> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let actions = B::from_host(&HostTensor::i64([n], actions).expect("actions"), device).expect("upload");
    let on_gpu = device != Device::Cpu;
    c.bench_function(BenchmarkId::new(format!("tensor-ops-{}-{device}", B::NAME), n), |b| {
        b.iter(|| finished::<B>(envs.step(&actions).expect("step").observation, on_gpu))
    });
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("tensor-cartpole-steps");
    group.sample_size(20);
    for n in copies() {
        group.throughput(Throughput::Elements(n as u64));
        tensor_side::<Candle>(&mut group, n);
        tensor_side::<Tch>(&mut group, n);
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
