//! Acting at batch 1 through the DQN agent, as a training loop calls it: one CartPole state
//! in as a host value, one action out as a host value. The network is an MLP 4-64-64-2 with
//! ReLU. The baseline is the same forward pass hand-written on tch (a host slice in, no
//! autograd, argmax, the action read back), which is also what the Python PyTorch loop of
//! `scripts/bench_peers.py` does; the ratio of the two is what the agent costs on top.
//! `greedy` acts deterministically, `explore` epsilon-greedy in the graph.

use agents::{Agent, DqnAgent, DqnConfig};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use rlgraph_core::spaces::Value;
use rlgraph_core::Backend;
use rlgraph_envs::make;
use rlgraph_tests::{Candle, Tch};

/// The DQN agent of the act benchmark, seeded 0, and a CartPole state to act on.
fn agent<B: Backend>() -> (DqnAgent<B>, Value) {
    let spec = serde_json::json!({
        "type": "dqn",
        "network_spec": [
            {"type": "dense", "units": 64, "activation": "relu", "scope": "hidden1"},
            {"type": "dense", "units": 64, "activation": "relu", "scope": "hidden2"}
        ],
        "exploration_spec": {"epsilon_spec": {"decay_spec": ["linear", 1.0, 0.05]}}
    });
    let config = DqnConfig::parse(&spec).expect("config parses");
    let mut env = make("CartPole-v1", 0).expect("env");
    let agent = DqnAgent::<B>::new(config, env.state_space(), env.action_space(), 0).expect("agent");
    (agent, env.reset(Some(0)).expect("reset"))
}

fn on<B: Backend>(group: &mut BenchmarkGroup<'_, WallTime>, name: &str) {
    let (mut agent, state) = agent::<B>();
    let states = std::slice::from_ref(&state);
    group.bench_function(format!("{name}/agent-greedy"), |b| {
        b.iter(|| agent.get_actions(states, false, 0.5).expect("acts"))
    });
    group.bench_function(format!("{name}/agent-explore"), |b| {
        b.iter(|| agent.get_actions(states, true, 0.5).expect("acts"))
    });
}

/// The same network written directly on tch, without autograd: the baseline.
fn hand_written_tch(group: &mut BenchmarkGroup<'_, WallTime>) {
    tch::manual_seed(0);
    let layer = |i: i64, o: i64| {
        let opts = (tch::Kind::Float, tch::Device::Cpu);
        (tch::Tensor::randn([i, o], opts) * 0.1, tch::Tensor::zeros([o], opts))
    };
    let (w0, b0) = layer(4, 64);
    let (w1, b1) = layer(64, 64);
    let (w2, b2) = layer(64, 2);
    let state = [0.01f32, -0.02, 0.03, 0.04];
    group.bench_function("tch/hand-written", |b| {
        b.iter(|| {
            tch::no_grad(|| {
                let x = tch::Tensor::from_slice(&state).view([1, 4]);
                let h = (x.matmul(&w0) + &b0).relu();
                let h = (h.matmul(&w1) + &b1).relu();
                let q = h.matmul(&w2) + &b2;
                q.argmax(1, false).int64_value(&[0])
            })
        })
    });
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("agent-act");
    on::<Candle>(&mut group, "candle");
    on::<Tch>(&mut group, "tch");
    hand_written_tch(&mut group);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
