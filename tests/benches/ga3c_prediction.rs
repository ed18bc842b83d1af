//! GA3C's point: one batched forward pass for many agents' states against one forward pass
//! per agent. The actor is the CartPole actor-critic of
//! `configs/ga3c-actor-critic-cartpole.json` (64-64 tanh policy), acting with exploration
//! through `Actor::act`, as the predictor threads call it, for 1 to 64 agents on candle and
//! on tch. Throughput is in predictions (states) per second; the ratio of the two rows of a
//! backend at one agent count is the gain of batching.

use agents::{pg_actor, Actor, GraphActor, PgConfig};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rlgraph_core::spaces::Value;
use rlgraph_core::Backend;
use rlgraph_envs::make;
use rlgraph_tests::{Candle, Tch};

fn actor<B: Backend>() -> (GraphActor<B>, Vec<Value>) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/ga3c-actor-critic-cartpole.json"
    );
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).expect("config")).expect("json");
    let config = PgConfig::parse(&spec).expect("config parses");
    let mut env = make("CartPole-v1", 0).expect("env");
    let actor = pg_actor::<B>(&config, env.state_space(), env.action_space(), 0).expect("actor");
    let states = (0..64).map(|i| env.reset(Some(i)).unwrap()).collect();
    (actor, states)
}

fn on<B: Backend>(c: &mut Criterion, name: &str) {
    let mut group = c.benchmark_group(format!("ga3c-prediction/{name}"));
    let (mut actor, states) = actor::<B>();
    for agents in [1usize, 4, 16, 64] {
        group.throughput(Throughput::Elements(agents as u64));
        let batch = &states[..agents];
        group.bench_with_input(BenchmarkId::new("batched", agents), batch, |b, batch| {
            b.iter(|| actor.act(batch, true, 0.0).expect("acts"))
        });
        group.bench_with_input(BenchmarkId::new("one-per-agent", agents), batch, |b, batch| {
            b.iter(|| {
                for s in batch {
                    actor.act(std::slice::from_ref(s), true, 0.0).expect("acts");
                }
            })
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    on::<Candle>(c, "candle");
    on::<Tch>(c, "tch");
}

criterion_group!(benches, bench);
criterion_main!(benches);
