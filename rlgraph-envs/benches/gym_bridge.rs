//! The Gymnasium bridge's cost per step: CartPole-v1 through the bridge against the native
//! CartPole (the same dynamics, no process boundary), 16 CartPole copies with a process and a
//! message per copy against batches of copies in one or two processes, and Pong (`ALE/Pong-v5`, frameskip 4)
//! frames per second with 1 and 8 bridged copies stepped in parallel by a threaded
//! `VectorEnv`. Python's own per-step time, the other baseline, comes from
//! `scripts/bench-gym-python.py` (run it with the same interpreter).
//!
//! Needs `$RLGRAPH_PYTHON` (or the checkout's `.gym-venv/`); without one it benches nothing.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rlgraph_envs::gym::{GymBatch, GymEnv};
use rlgraph_envs::{CartPole, Env, EnvGroup, Stepping, VectorEnv};
use rlgraph_spaces::Value;
use serde_json::Map;

fn python() -> Option<String> {
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../.gym-venv/bin/python");
    std::env::var("RLGRAPH_PYTHON")
        .ok()
        .or_else(|| std::path::Path::new(venv).exists().then(|| venv.to_string()))
}

/// One step of `env` with `action`, resetting when the episode ends.
fn step(env: &mut dyn Env, action: &Value) {
    let s = env.step(action).expect("steps");
    if s.terminated || s.truncated {
        env.reset(None).expect("resets");
    }
}

fn bench(c: &mut Criterion) {
    let Some(python) = python() else {
        eprintln!("no Python with gymnasium: run scripts/install-gym.sh");
        return;
    };
    let mut group = c.benchmark_group("gym_bridge/cartpole_step");
    let action = Value::i32(1);
    let mut bridged = GymEnv::with_python(&python, "CartPole-v1", Map::new(), 0).expect("starts");
    bridged.reset(Some(0)).expect("resets");
    group.bench_function("bridge", |b| b.iter(|| step(&mut bridged, &action)));
    let mut native = CartPole::new(0);
    native.reset(Some(0)).expect("resets");
    group.bench_function("native", |b| b.iter(|| step(&mut native, &action)));
    group.finish();

    // Sixteen copies per vector step (the SB3 zoo's LunarLander PPO count): a process per
    // copy with a message each, against batches that take one message per process.
    let mut group = c.benchmark_group("gym_bridge/cartpole_16_copies");
    group.throughput(Throughput::Elements(16));
    let actions: Vec<Value> = (0..16).map(|i| Value::i32(i % 2)).collect();
    let per_copy = (0..16)
        .map(|i| {
            GymEnv::with_python(&python, "CartPole-v1", Map::new(), i)
                .map(|e| Box::new(e) as Box<dyn Env>)
                .expect("starts")
        })
        .collect();
    let batches = |processes: u64| -> Vec<Box<dyn EnvGroup>> {
        (0..processes)
            .map(|p| {
                let batch = GymBatch::from_id_with_python(&python, "gym:CartPole-v1", (16 / processes) as usize, p);
                Box::new(batch.expect("starts")) as Box<dyn EnvGroup>
            })
            .collect()
    };
    let vectors = [
        ("process-per-copy", VectorEnv::new(per_copy, Stepping::Threaded)),
        ("one-process", VectorEnv::from_groups(batches(1), Stepping::Threaded)),
        ("two-processes", VectorEnv::from_groups(batches(2), Stepping::Threaded)),
    ];
    for (name, vector) in vectors {
        let mut vector = vector.expect("same spaces");
        vector.reset_all(Some(0)).expect("resets");
        group.bench_function(name, |b| b.iter(|| vector.step(&actions).expect("steps")));
    }
    group.finish();

    let mut group = c.benchmark_group("gym_bridge/pong_frames");
    group.sample_size(20);
    for copies in [1usize, 8] {
        // Each step is 4 frames (Pong-v5's frameskip).
        group.throughput(Throughput::Elements(4 * copies as u64));
        let envs = (0..copies)
            .map(|i| {
                GymEnv::with_python(&python, "ALE/Pong-v5", Map::new(), i as u64)
                    .map(|e| Box::new(e) as Box<dyn Env>)
                    .expect("starts")
            })
            .collect();
        let mut vector = VectorEnv::new(envs, Stepping::Threaded).expect("same spaces");
        vector.reset_all(Some(0)).expect("resets");
        let actions: Vec<Value> = (0..copies).map(|i| Value::i32((i % 6) as i32)).collect();
        group.bench_function(BenchmarkId::new("threaded", copies), |b| {
            b.iter(|| vector.step(&actions).expect("steps"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
