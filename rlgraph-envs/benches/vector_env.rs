//! Vector-environment throughput: CartPole steps per second at 1, 16 and 256 copies,
//! stepped sequentially (one core) through `VectorEnv`, against a plain loop over
//! `CartPole::step` without the vector wrapper.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rlgraph_envs::{CartPole, Env, Stepping, VectorEnv};
use rlgraph_spaces::Value;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole-steps");
    for n in [1usize, 16, 256] {
        group.throughput(Throughput::Elements(n as u64));
        let envs: Vec<Box<dyn Env>> = (0..n)
            .map(|i| Box::new(CartPole::new(i as u64)) as Box<dyn Env>)
            .collect();
        let mut vector = VectorEnv::new(envs, Stepping::Sequential).expect("same spaces");
        vector.reset_all(Some(0)).unwrap();
        let actions: Vec<Value> = (0..n).map(|i| Value::i32((i % 2) as i32)).collect();
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
