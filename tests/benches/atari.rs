//! RLgraph's Pong experiments on this machine's CPU, as `dqn_agent_for_pong.json` configures
//! them: 80x80 grayscale frames stacked four deep (bytes, scaled in the graph), three
//! convolutions, a dueling head with 512-unit streams, six actions.
//!
//! - `atari/update/{backend}/agent`: one DQN update of a batch of 32 through the learner
//!   (double-Q loss, target network, Adam with norm clipping), against
//!   `atari/update/{backend}/hand-written`: the same update written directly on the backend's
//!   ops (the same weights, the same loss, checked equal before timing).
//! - `atari/act/{backend}/agent/N`: greedy actions for N stacked states through the actor,
//!   against `atari/act/{backend}/hand-written/N`: the same forward pass and argmax by hand.
//!
//! `scripts/bench-atari.sh` runs this beside PyTorch doing the same in Python, on the same
//! number of threads, and prints the ratios. With `RLGRAPH_TEST_DEVICE=cuda:0` the backends
//! that have the GPU (tch on a CUDA libtorch) run both sides there: the learner and actor
//! through `execution_spec.default_device`, the hand-written code on the same device; every
//! timed call ends in a download (the loss, the actions), so GPU work is waited for.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use agents::{dqn_actor, Actor, DqnConfig, DqnLearner, GraphLearner, Learner, WorkerLayout};
use rlgraph_core::spaces::{Array, Dtype, IntBox, Space, Value};
use rlgraph_core::{test_device, AdamStep, Backend, DType, GraphExecutor, HostData, HostTensor};
use rlgraph_tests::{Candle, Tch};

/// RLgraph's Pong DQN config, laid out for Atari's 210x160 RGB bytes: the roles' config and
/// the states they see (80x80x4 bytes).
fn pong<B: Backend>() -> (DqnConfig, Space, Space) {
    // The checkout it was built in, or (a binary carried to a GPU machine by
    // scripts/build-cuda.sh) the checkout it runs in.
    let built_in = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/rlgraph/dqn_agent_for_pong.json"
    );
    let text = std::fs::read_to_string(built_in)
        .or_else(|_| std::fs::read_to_string("configs/rlgraph/dqn_agent_for_pong.json"))
        .expect("RLgraph's Pong config, from the checkout");
    let mut spec: serde_json::Value = serde_json::from_str(&text).expect("json");
    spec["execution_spec"]["default_device"] = test_device::<B>().to_string().into();
    let raw = Space::from(
        IntBox::new(256)
            .unwrap()
            .with_dtype(Dtype::Uint8)
            .unwrap()
            .with_shape(vec![210, 160, 3]),
    );
    let layout = WorkerLayout::plan::<B>(&spec, &raw, 0)
        .expect("layout")
        .expect("a frame stack");
    let config = DqnConfig::parse(&layout.inner_spec).expect("config");
    (config, layout.state_space, Space::from(IntBox::new(6).unwrap()))
}

fn stacks(n: usize, rng: &mut ChaCha8Rng) -> Value {
    Value::Uint8(Array::new([n, 80, 80, 4], (0..n * 25_600).map(|_| rng.random()).collect()).unwrap())
}

/// A replayed batch of `n` records, seeded.
fn batch(n: usize) -> Value {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let dict = [
        ("states", stacks(n, &mut rng)),
        ("next_states", stacks(n, &mut rng)),
        (
            "actions",
            Value::Int32(Array::new([n], (0..n).map(|_| rng.random_range(0..6)).collect()).unwrap()),
        ),
        (
            "rewards",
            Value::Float32(Array::new([n], (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()).unwrap()),
        ),
        (
            "terminals",
            Value::Bool(Array::new([n], (0..n).map(|_| rng.random_bool(0.1)).collect()).unwrap()),
        ),
    ];
    Value::Dict(dict.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The policy's (or target's) variables in the order the hand-written network takes them:
/// three convolutions (kernel, bias), the adapter's pre-network and action layer, the state
/// value stream and node.
fn weight_paths<B: Backend>(exec: &GraphExecutor<B>, net: &str) -> Vec<String> {
    let names: Vec<String> = exec.variables().expect("variables").into_keys().collect();
    let find = |must: &[&str], not: &[&str]| -> String {
        names
            .iter()
            .find(|p| {
                p.starts_with(&format!("dqn-agent/{net}/"))
                    && must.iter().all(|m| p.contains(m))
                    && !not.iter().any(|n| p.contains(n))
            })
            .unwrap_or_else(|| panic!("no variable of {net} with {must:?} in {names:?}"))
            .clone()
    };
    let mut paths = vec![];
    for conv in ["conv1", "conv2", "conv3"] {
        paths.push(find(&[conv, "kernel"], &[]));
        paths.push(find(&[conv, "bias"], &[]));
    }
    for (must, not) in [
        (&["action-adapter", "kernel"][..], &["action-layer"][..]),
        (&["action-adapter", "bias"], &["action-layer"]),
        (&["action-layer", "kernel"], &[]),
        (&["action-layer", "bias"], &[]),
        (&["state-value-stream", "kernel"], &[]),
        (&["state-value-stream", "bias"], &[]),
        (&["state-value-node", "kernel"], &[]),
        (&["state-value-node", "bias"], &[]),
    ] {
        paths.push(find(must, not));
    }
    paths
}

fn host_tensors<B: Backend>(exec: &GraphExecutor<B>, paths: &[String]) -> Vec<B::Tensor> {
    let vars = exec.variables().expect("variables");
    paths
        .iter()
        .map(|p| B::from_host(&vars[p], test_device::<B>()).expect("upload"))
        .collect()
}

type R<T> = rlgraph_core::Result<T>;

/// Q-values `[batch, 6]` of byte stacks `x` by hand: scale, three convolutions with ReLU,
/// flatten in NHWC order, dueling head.
fn q_values<B: Backend>(x: &B::Tensor, w: &[&B::Tensor]) -> R<B::Tensor> {
    let batch = B::shape(x)[0];
    let x = B::affine(&B::cast(x, DType::F32)?, 1.0 / 255.0, 0.0)?;
    let mut h = B::permute(&x, &[0, 3, 1, 2])?;
    for (i, stride) in [(0, 4), (2, 2), (4, 1)] {
        let c = B::shape(w[i + 1])[0];
        h = B::relu(&B::add(
            &B::conv2d(&h, w[i], stride, 0)?,
            &B::reshape(w[i + 1], &[1, c, 1, 1])?,
        )?)?;
    }
    let h = B::permute(&h, &[0, 2, 3, 1])?;
    let flat = B::shape(&h)[1..].iter().product();
    let h = B::reshape(&h, &[batch, flat])?;
    let a = B::linear(&B::linear(&h, w[6], w[7])?, w[8], w[9])?;
    let v = B::linear(&B::relu(&B::linear(&h, w[10], w[11])?)?, w[12], w[13])?;
    B::add(&v, &B::sub(&a, &B::mean(&a, &[1], true)?)?)
}

fn upload<B: Backend>(v: &Value) -> B::Tensor {
    let (shape, data) = match v {
        Value::Uint8(a) => (a.shape().to_vec(), HostData::U8(a.data().to_vec())),
        Value::Float32(a) => (a.shape().to_vec(), HostData::F32(a.data().to_vec())),
        Value::Int32(a) => (
            a.shape().to_vec(),
            HostData::I64(a.data().iter().map(|&x| x as i64).collect()),
        ),
        Value::Bool(a) => (
            a.shape().to_vec(),
            HostData::F32(a.data().iter().map(|&x| x as u8 as f32).collect()),
        ),
        other => panic!("no upload for {}", other.kind_name()),
    };
    B::from_host(&HostTensor::new(shape, data).unwrap(), test_device::<B>()).unwrap()
}

/// The DQN update by hand: double-Q targets from the target network, half the squared TD
/// error averaged, gradients, the global norm clipped to 20, Adam (lr 1e-4).
struct HandWritten<B: Backend> {
    vars: Vec<B::Var>,
    moments: Vec<(B::Var, B::Var)>,
    target: Vec<B::Tensor>,
    step: u64,
}

impl<B: Backend> HandWritten<B> {
    fn new(policy: Vec<B::Tensor>, target: Vec<B::Tensor>) -> Self {
        let device = test_device::<B>();
        let zeros = |t: &B::Tensor| B::var(&B::full(&B::shape(t), 0.0, DType::F32, device).unwrap()).unwrap();
        HandWritten {
            moments: policy.iter().map(|t| (zeros(t), zeros(t))).collect(),
            vars: policy.iter().map(|t| B::var(t).unwrap()).collect(),
            target,
            step: 0,
        }
    }

    fn loss(&self, b: &[B::Tensor; 5]) -> R<B::Tensor> {
        let w: Vec<&B::Tensor> = self.vars.iter().map(B::var_tensor).collect();
        let t: Vec<&B::Tensor> = self.target.iter().collect();
        let [s, a, r, terminal, sp] = b;
        let q_s = q_values::<B>(s, &w)?;
        let taken = B::squeeze(&B::gather(&q_s, 1, &B::unsqueeze(a, 1)?)?, 1)?;
        let best = B::argmax(&q_values::<B>(sp, &w)?, 1, true)?;
        let q_next = B::squeeze(&B::gather(&q_values::<B>(sp, &t)?, 1, &best)?, 1)?;
        let alive = B::affine(terminal, -0.99, 0.99)?;
        let y = B::detach(&B::add(r, &B::mul(&alive, &q_next)?)?);
        let delta = B::sub(&y, &taken)?;
        B::mean_all(&B::affine(&B::square(&delta)?, 0.5, 0.0)?)
    }

    fn update(&mut self, b: &[B::Tensor; 5]) -> R<f64> {
        let loss = self.loss(b)?;
        let vars: Vec<&B::Var> = self.vars.iter().collect();
        let grads = B::grads(&loss, &vars)?;
        // Every variable's sum of squares in one download: one wait on a GPU, not fourteen.
        let sums = grads
            .iter()
            .map(|g| B::reshape(&B::sum_all(&B::square(g)?)?, &[1]))
            .collect::<R<Vec<_>>>()?;
        let norm = B::to_host(&B::concat(&sums, 0)?)?
            .data
            .to_f64()
            .iter()
            .sum::<f64>()
            .sqrt();
        let grads: Vec<B::Tensor> = match norm > 20.0 {
            true => grads.iter().map(|g| B::affine(g, 20.0 / norm, 0.0)).collect::<R<_>>()?,
            false => grads,
        };
        self.step += 1;
        let h = AdamStep::at(self.step as f64, 1e-4, 0.9, 0.999, 1e-8);
        for ((var, (m, v)), g) in self.vars.iter().zip(&self.moments).zip(&grads) {
            B::adam_step(var, m, v, g, &h)?;
        }
        Ok(B::to_host(&loss)?.data.to_f64()[0])
    }
}

fn update_on<B: Backend>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let (config, s, a) = pong::<B>();
    let mut learner = DqnLearner::<B>::new(&config, &s, &a, 0).expect("learner");
    let records = batch(32);
    let exec = learner.executor();
    let policy = host_tensors(exec, &weight_paths(exec, "policy"));
    let target = host_tensors(exec, &weight_paths(exec, "target-policy"));
    let mut hand = HandWritten::<B>::new(policy, target);
    let field = |k: &str| match &records {
        Value::Dict(d) => upload::<B>(&d[k]),
        _ => unreachable!(),
    };
    let inputs = [
        field("states"),
        field("actions"),
        field("rewards"),
        field("terminals"),
        field("next_states"),
    ];
    // Same weights, same batch: the two updates' losses agree before they are timed.
    let by_hand = hand.update(&inputs).expect("hand-written update");
    let through = learner.learn(&records, 0.5).expect("learner update").loss;
    assert!(
        (by_hand - through).abs() <= 1e-4 * by_hand.abs().max(1e-3),
        "{by_hand} against {through}"
    );
    group.bench_function(format!("{}/agent", B::NAME), |b| {
        b.iter(|| learner.learn(&records, 0.5).expect("learns"))
    });
    group.bench_function(format!("{}/hand-written", B::NAME), |b| {
        b.iter(|| hand.update(&inputs).expect("updates"))
    });
}

fn act_on<B: Backend>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let (config, s, a) = pong::<B>();
    let mut learner = DqnLearner::<B>::new(&config, &s, &a, 0).expect("learner");
    let mut actor = dqn_actor::<B>(&config, &s, &a, 0).expect("actor");
    actor.load(&learner.publish().expect("snapshot")).expect("loads");
    let exec = learner.executor();
    let w = host_tensors(exec, &weight_paths(exec, "policy"));
    let w: Vec<&B::Tensor> = w.iter().collect();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for n in [1usize, 4, 16, 64] {
        let batch = stacks(n, &mut rng);
        let states = rlgraph_core::unstack(&batch).expect("unstack");
        let greedy = |actor: &mut agents::GraphActor<B>| actor.act(&states, false, 0.5).expect("acts").actions;
        let by_hand = || -> Vec<i64> {
            B::without_grad(|| {
                let q = q_values::<B>(&upload::<B>(&batch), &w).expect("forward");
                B::to_host(&B::argmax(&q, 1, false).expect("argmax"))
                    .expect("download")
                    .data
                    .to_f64()
                    .iter()
                    .map(|&x| x as i64)
                    .collect()
            })
        };
        let agent_actions: Vec<i64> = greedy(&mut actor)
            .iter()
            .map(|v| match v {
                Value::Int32(a) => a.data()[0] as i64,
                Value::Int64(a) => a.data()[0],
                other => panic!("an int action, not {}", other.kind_name()),
            })
            .collect();
        assert_eq!(agent_actions, by_hand(), "batch {n}: the same actions");
        group.bench_with_input(BenchmarkId::new(format!("{}/agent", B::NAME), n), &n, |b, _| {
            b.iter(|| greedy(&mut actor))
        });
        group.bench_with_input(BenchmarkId::new(format!("{}/hand-written", B::NAME), n), &n, |b, _| {
            b.iter(by_hand)
        });
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("atari/update");
    group.sample_size(10);
    update_on::<Candle>(&mut group);
    update_on::<Tch>(&mut group);
    group.finish();
    let mut group = c.benchmark_group("atari/act");
    group.sample_size(20);
    act_on::<Candle>(&mut group);
    act_on::<Tch>(&mut group);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
