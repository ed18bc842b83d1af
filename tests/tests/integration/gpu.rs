//! Checks that need a CUDA GPU and a CUDA libtorch: they run wherever libtorch sees one and
//! are skipped, with a message, elsewhere. On a GPU machine:
//! `RLGRAPH_TEST_DEVICE=cuda:0 cargo test -p rlgraph-tests --test integration gpu::` (with that
//! variable set, every other test of this crate runs its tch side on the GPU too).

use rlgraph_core::backend::prelude::*;
use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{test_device, BuildOptions, DType, Device, DeviceMap, GraphExecutor, HostTensor, Tree};
use rlgraph_tests::dummies::mlp;
use rlgraph_tests::Tch;

type TchTensor = <Tch as BackendCore>::Tensor;
/// A reset's observation or a step's four tensors, or why they could not be had.
type Stepped = Result<Vec<TchTensor>, String>;

const GPU: Device = Device::Cuda(0);

/// Held by every test that seeds libtorch's CUDA generator and draws from it: the generator is
/// the process's, so two such tests side by side would interleave their draws.
static DEVICE_GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn device_generator() -> std::sync::MutexGuard<'static, ()> {
    DEVICE_GENERATOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn mlp_on(options: &BuildOptions, seed: u64) -> GraphExecutor<Tch> {
    let spaces = BTreeMap::from([("x".to_string(), Space::from(FloatBox::new([8])).with_batch_rank(true))]);
    GraphExecutor::build(mlp::<Tch>("mlp", &[32, 32, 4]), &spaces, options, seed).expect("builds")
}

/// Whether libtorch sees `GPU` here; says so on stderr when it does not.
fn gpu_here() -> bool {
    if Tch::device_available(GPU) {
        return true;
    }
    eprintln!("skipped: libtorch sees no {GPU} here (a CUDA libtorch on a GPU machine runs this test)");
    false
}

fn on(device_map: DeviceMap) -> BuildOptions {
    BuildOptions {
        device_map,
        ..Default::default()
    }
}

/// Runs `run` on a fixed batch uploaded to `device` and downloads the output.
fn forward(exec: &mut GraphExecutor<Tch>, device: Device) -> HostTensor {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = Tch::uniform(&[16, 8], -1.0, 1.0, DType::F32, device, &mut rng).expect("x");
    let out = exec.execute_tensors("run", vec![Tree::Leaf(x)]).expect("runs");
    Tch::to_host(out[0].as_leaf().expect("leaf")).expect("download")
}

fn assert_close(a: &HostTensor, b: &HostTensor) {
    assert_eq!(a.shape, b.shape);
    for (i, (p, q)) in a.data.to_f64().iter().zip(b.data.to_f64()).enumerate() {
        assert!((p - q).abs() <= 1e-5 * (1.0 + q.abs()), "element {i}: {p} vs {q}");
    }
}

#[test]
fn libtorch_sees_the_gpu_and_computes_there() {
    if !gpu_here() {
        return;
    }
    let t = Tch::from_host(&HostTensor::f32([3], vec![1.0, 2.0, 3.0]).unwrap(), GPU).unwrap_or_else(|e| panic!("{e}"));
    assert!(Tch::device_available(GPU));
    let y = Tch::affine(&t, 2.0, 1.0).unwrap();
    assert_eq!(Tch::device(&y), GPU);
    assert_eq!(
        Tch::to_host(&y).unwrap(),
        HostTensor::f32([3], vec![3.0, 5.0, 7.0]).unwrap()
    );
}

#[test]
fn the_test_device_variable_moves_component_tests_to_the_gpu() {
    if !gpu_here() {
        return;
    }
    if std::env::var_os("RLGRAPH_TEST_DEVICE").is_none() {
        eprintln!("skipped: RLGRAPH_TEST_DEVICE is not set, so the other tests stay on the CPU");
        return;
    }
    assert_eq!(
        test_device::<Tch>(),
        GPU,
        "run with RLGRAPH_TEST_DEVICE=cuda:0 so the other tests use the GPU"
    );
    let spaces = [("x", Space::from(FloatBox::new([8])).with_batch_rank(true))];
    let mut t = rlgraph_core::ComponentTest::<Tch>::new(mlp::<Tch>("mlp", &[4]), spaces, 1).unwrap();
    let infos = t.executor().variable_infos().to_vec();
    assert!(!infos.is_empty() && infos.iter().all(|v| v.device == GPU), "{infos:?}");
}

#[test]
fn a_graph_on_the_gpu_or_split_across_devices_gives_the_cpu_result() {
    if !gpu_here() {
        return;
    }
    let cpu = forward(&mut mlp_on(&on(DeviceMap::new(Device::Cpu)), 7), Device::Cpu);
    let mut gpu = mlp_on(&on(DeviceMap::new(GPU)), 7);
    assert!(gpu.variable_infos().iter().all(|v| v.device == GPU));
    assert_close(&forward(&mut gpu, GPU), &cpu);
    // The middle layer alone on the GPU: the plan moves activations there and back.
    let mut split = mlp_on(&on(DeviceMap::new(Device::Cpu).assign("mlp/dense-1", GPU)), 7);
    let devices: Vec<(String, Device)> = split
        .variable_infos()
        .iter()
        .map(|v| (v.path.clone(), v.device))
        .collect();
    assert!(
        devices
            .iter()
            .all(|(p, d)| (*d == GPU) == p.starts_with("mlp/dense-1/")),
        "{devices:?}"
    );
    assert_close(&forward(&mut split, Device::Cpu), &cpu);
}

#[test]
fn gpu_variables_survive_a_checkpoint() {
    if !gpu_here() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rlgraph-gpu-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mlp.ckpt");
    let mut a = mlp_on(&on(DeviceMap::new(GPU)), 7);
    let before = forward(&mut a, GPU);
    a.save(&file).unwrap();
    // Another seed gives other initial weights, until the restore brings the saved ones back.
    let mut b = mlp_on(&on(DeviceMap::new(GPU)), 99);
    assert!(forward(&mut b, GPU) != before);
    b.restore(&file).unwrap();
    assert!(b.variable_infos().iter().all(|v| v.device == GPU));
    assert_close(&forward(&mut b, GPU), &before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// 256 CartPole copies on the GPU seeded 5, restarting from a stream of 4 start states each
/// (1,000 steps of random actions cycle through it many times) or from Philox draws.
fn gpu_cartpoles(philox: bool) -> rlgraph_tensor_envs::Batched<Tch, rlgraph_tensor_envs::CartPoleDynamics<Tch>> {
    use rlgraph_envs::{CartPole, Env};
    let n = 256;
    let spaces = (
        CartPole::new(0).state_space().clone(),
        CartPole::new(0).action_space().clone(),
    );
    let restarts = if philox {
        rlgraph_tensor_envs::Restarts::Philox
    } else {
        rlgraph_tensor_envs::Restarts::Stream { depth: 4 }
    };
    rlgraph_tensor_envs::Batched::with_restarts(
        rlgraph_tensor_envs::CartPoleDynamics::<Tch>::new(n, GPU).unwrap(),
        n,
        GPU,
        5,
        restarts,
        spaces,
    )
    .unwrap()
}

/// Steps `plain` (tensor ops, restarting from Philox draws where `philox`) and `other` side by
/// side for 1,000 steps of random actions (as floats on odd steps where `floats_too`),
/// asserting every output equal to the bit; returns where the tensor ops' copies ended.
/// `other` resets (given no actions) or steps, returning the tensors or why it failed.
fn lockstep_with_tensor_ops(
    philox: bool,
    other: &mut dyn FnMut(Option<&TchTensor>) -> Stepped,
    floats_too: bool,
) -> rlgraph_tensor_envs::TensorEnvSnapshot {
    use rand::Rng;
    use rlgraph_tensor_envs::TensorEnv;
    let mut plain = gpu_cartpoles(philox);
    let n = plain.num_envs();
    let reset = other(None).unwrap_or_else(|e| panic!("reset: {e}"));
    assert_eq!(
        Tch::to_host(&plain.reset().unwrap()).unwrap(),
        Tch::to_host(&reset[0]).unwrap()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut restarts = 0.0;
    for step in 0..1000 {
        let actions: Vec<i64> = (0..n).map(|_| rng.random_range(0..2)).collect();
        let mut actions = Tch::from_host(&HostTensor::i64([n], actions).unwrap(), GPU).unwrap();
        if floats_too && step % 2 == 1 {
            actions = Tch::cast(&actions, DType::F32).unwrap();
        }
        let expected = plain.step(&actions).unwrap();
        let got = other(Some(&actions)).unwrap_or_else(|e| panic!("step {step}: {e}"));
        let names = ["observation", "reward", "terminated", "truncated"];
        let expected_parts = [
            &expected.observation,
            &expected.reward,
            &expected.terminated,
            &expected.truncated,
        ];
        for ((what, a), b) in names.iter().zip(expected_parts).zip(&got) {
            assert_eq!(
                Tch::to_host(a).unwrap(),
                Tch::to_host(b).unwrap(),
                "{what} at step {step}"
            );
        }
        restarts += Tch::to_host(&expected.terminated)
            .unwrap()
            .data
            .to_f64()
            .iter()
            .sum::<f64>();
    }
    // Random actions end an episode in a few dozen steps: thousands of restarts, the stream
    // of 4 * 256 start states cycled.
    assert!(restarts > 4.0 * n as f64, "only {restarts} restarts");
    plain.snapshot().unwrap()
}

/// A step's four tensors, in `lockstep_with_tensor_ops`' order.
fn parts(step: &rlgraph_tensor_envs::TensorStep<Tch>) -> Vec<TchTensor> {
    vec![
        step.observation.clone(),
        step.reward.clone(),
        step.terminated.clone(),
        step.truncated.clone(),
    ]
}

#[test]
fn a_captured_tensor_step_equals_the_uncaptured_one_over_1000_steps() {
    use rlgraph_tensor_envs::Captured;
    if !gpu_here() {
        return;
    }
    for philox in [false, true] {
        let first = Tch::full(&[256], 0.0, DType::I64, GPU).unwrap();
        let mut captured = Captured::new(gpu_cartpoles(philox), &first).unwrap_or_else(|e| panic!("{e}"));
        let ended = lockstep_with_tensor_ops(
            philox,
            &mut |actions| match actions {
                None => captured.reset().map(|o| vec![o]).map_err(|e| e.to_string()),
                Some(a) => captured.step(a).map(parts).map_err(|e| e.to_string()),
            },
            false,
        );
        assert_eq!(captured.snapshot().unwrap(), ended, "philox {philox}");
    }
}

#[test]
fn a_forward_pass_replayed_from_a_cuda_graph_gives_the_uncaptured_result() {
    use rlgraph_core::GraphCapture;
    if !gpu_here() {
        return;
    }
    let mut exec = mlp_on(&on(DeviceMap::new(GPU)), 7);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let batch = |rng: &mut ChaCha8Rng| Tch::uniform(&[16, 8], -1.0, 1.0, DType::F32, GPU, rng).unwrap();
    let input = batch(&mut rng);
    let run = |exec: &mut GraphExecutor<Tch>, x: &<Tch as BackendCore>::Tensor| {
        let out = exec.execute_tensors("run", vec![Tree::Leaf(x.clone())]).unwrap();
        out[0].as_leaf().unwrap().clone()
    };
    // Once uncaptured first: cuBLAS makes its handle on first use, which a recording cannot.
    run(&mut exec, &input);
    let (graph, recorded) = rlgraph_core::capture::<Tch, _>(GPU, || {
        let out = exec.execute_tensors("run", vec![Tree::Leaf(input.clone())])?;
        Ok(out[0].as_leaf().expect("leaf").clone())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..5 {
        let x = batch(&mut rng);
        Tch::copy_into(&input, &x).unwrap();
        graph.replay().unwrap();
        // The recording ran on another stream's cuBLAS handle, which may pick another
        // algorithm: equal within the conformance tolerance, not to the bit.
        let expected = Tch::to_host(&run(&mut exec, &x)).unwrap();
        assert_close(&Tch::to_host(&recorded).unwrap(), &expected);
    }
}

#[test]
fn a_one_kernel_tensor_step_matches_the_tensor_ops_over_1000_steps() {
    use rlgraph_tensor_envs::{OneKernel, TensorEnv};
    if !gpu_here() {
        return;
    }
    // From the stream, and from Philox draws the kernel makes itself.
    for philox in [false, true] {
        let mut fused = OneKernel::new(gpu_cartpoles(philox)).unwrap_or_else(|e| panic!("{e}"));
        // Integer and float actions alternate: the kernel is compiled for each.
        let ended = lockstep_with_tensor_ops(
            philox,
            &mut |actions| match actions {
                None => fused.reset().map(|o| vec![o]).map_err(|e| e.to_string()),
                Some(a) => fused.step(a).map(|s| parts(&s)).map_err(|e| e.to_string()),
            },
            true,
        );
        assert_eq!(fused.snapshot().unwrap(), ended, "philox {philox}");
    }
}

/// PPO's device update replayed from a recording gives the numbers of the same updates run
/// op by op: the same losses and weights over five updates (the first runs op by op either
/// way, the second records and replays, the rest replay), both with the device's generator
/// seeded alike for the minibatch draws.
#[test]
fn a_recorded_ppo_update_equals_the_updates_run_op_by_op() {
    use agents::{Agent, TensorRollout};
    use rlgraph_envs::{CartPole, Env};
    if !gpu_here() {
        return;
    }
    let _generator = device_generator();
    let config = serde_json::json!({
        "type": "ppo",
        "execution_spec": {"default_device": "cuda:0"},
        "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
        "value_function_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
        "update_spec": {"batch_size": 512, "sample_size": 128, "num_iterations": 6},
        "optimizer_spec": {"type": "adam", "learning_rate": ["linear", 0.001, 0.0001], "clip_grad_norm": 0.5}
    });
    let env = CartPole::new(0);
    let (steps, copies) = (8, 64);
    let mut states_rng = ChaCha8Rng::seed_from_u64(6);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut draw = |low: f64, high: f64, dtype: DType| {
        let u = Tch::uniform(&[copies], low, high, DType::F32, GPU, &mut rng).unwrap();
        Tch::cast(&Tch::floor(&u).unwrap(), dtype).unwrap()
    };
    let rollout = TensorRollout::<Tch> {
        states: (0..steps)
            .map(|_| Tch::uniform(&[copies, 4], -1.0, 1.0, DType::F32, GPU, &mut states_rng).unwrap())
            .collect(),
        actions: (0..steps).map(|_| draw(0.0, 2.0, DType::I64)).collect(),
        rewards: (0..steps)
            .map(|_| Tch::full(&[copies], 1.0, DType::F32, GPU).unwrap())
            .collect(),
        // About one copy in eleven ends its episode at a step.
        terminated: (0..steps).map(|_| draw(0.0, 1.1, DType::U8)).collect(),
        truncated: (0..steps)
            .map(|_| Tch::full(&[copies], 0.0, DType::U8, GPU).unwrap())
            .collect(),
        next_states: Tch::uniform(&[copies, 4], -1.0, 1.0, DType::F32, GPU, &mut states_rng).unwrap(),
    };
    let run = |recording: bool| {
        let algorithm = agents::tensor_algorithm::<Tch>(&config)
            .unwrap()
            .expect("PPO trains on tensors");
        let mut agent = algorithm.agent(env.state_space(), env.action_space(), 3).unwrap();
        agent.set_recording(recording);
        assert!(Tch::draw_on_device(GPU, 17).unwrap(), "libtorch draws on {GPU}");
        let losses: Vec<f64> = (0..5)
            .map(|u| {
                agent
                    .update_from_tensors(&rollout, u as f64 / 5.0)
                    .unwrap_or_else(|e| panic!("update {u}: {e}"))
            })
            .collect();
        (losses, agent.get_weights().unwrap(), agent.recording())
    };
    let (recorded, recorded_weights, state) = run(true);
    assert_eq!(state, Some(Ok(())), "the updates replayed a recording");
    let (direct, direct_weights, off) = run(false);
    assert!(off.is_some_and(|r| r.is_err()), "op by op when turned off");
    // The replays launch the recorded kernels on the same data; cuBLAS may pick another
    // algorithm on the recording's stream, so equal to f32 rounding, not the bit.
    for (u, (a, b)) in recorded.iter().zip(&direct).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs().max(1.0),
            "update {u}: recorded {a}, op by op {b}"
        );
    }
    assert!(
        recorded.windows(2).any(|w| w[0] != w[1]),
        "the updates changed the loss: {recorded:?}"
    );
    for ((name, a), (_, b)) in recorded_weights.iter().zip(direct_weights.iter()) {
        let (a, b) = (a.data.to_f64(), b.data.to_f64());
        let gap = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        assert!(gap <= 1e-5, "{name}: the weights differ by {gap}");
    }
}

/// The device's own draws of minibatch indices: every row holds distinct indices in range.
#[test]
fn minibatch_indices_drawn_on_the_gpu_are_distinct_and_in_range() {
    if !gpu_here() {
        return;
    }
    let _generator = device_generator();
    assert!(Tch::draw_on_device(GPU, 4).unwrap());
    let (total, m, rows) = (1000, 300, 7);
    let drawn = Tch::sample_indices(total, m, rows, GPU, &mut ChaCha8Rng::seed_from_u64(0)).unwrap();
    assert_eq!(Tch::device(&drawn), GPU, "drawn on the device");
    let values = Tch::to_host(&drawn).unwrap().data.to_f64();
    assert_eq!(values.len(), rows * m);
    for row in values.chunks(m) {
        let distinct: std::collections::BTreeSet<i64> = row.iter().map(|&v| v as i64).collect();
        assert_eq!(distinct.len(), m, "distinct within a row");
        assert!(distinct.iter().all(|&i| (0..total as i64).contains(&i)), "in range");
    }
}

/// The device worker's recorded rollout and update (PPO on 256 tensor CartPoles, two updates:
/// the first rollout and update run op by op either way, the second are recorded and replayed)
/// play the episodes and reach the weights of the same run op by op, both drawing on the
/// device from the same seed. (Later replays are checked update by update above, and by the
/// GPU benchmark's run solving CartPole.)
#[test]
fn a_recorded_device_run_plays_the_run_op_by_op() {
    use executors::DeviceWorker;
    if !gpu_here() {
        return;
    }
    let _generator = device_generator();
    let config = serde_json::json!({
        "type": "ppo",
        "execution_spec": {"default_device": "cuda:0"},
        "network_spec": [{"type": "dense", "units": 32, "activation": "tanh"}],
        "value_function_spec": [{"type": "dense", "units": 32, "activation": "tanh"}],
        "memory_spec": {"type": "ring_buffer", "capacity": 4096},
        "update_spec": {"batch_size": 4096, "sample_size": 512, "num_iterations": 8},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001}
    });
    let run = |recording: bool| {
        let algorithm = agents::tensor_algorithm::<Tch>(&config)
            .unwrap()
            .expect("PPO trains on tensors");
        let envs = rlgraph_tensor_envs::make::<Tch>("CartPole-v1", 256, 0, GPU).unwrap();
        let agent = algorithm.agent(envs.state_space(), envs.action_space(), 0).unwrap();
        let mut worker = DeviceWorker::new(agent, envs)
            .with_device_draws(8)
            .with_recording(recording);
        let stats = worker
            .execute_timesteps(2 * 4096, |_| {})
            .unwrap_or_else(|e| panic!("{e}"));
        let state = (worker.rollout_recording(), worker.agent().recording());
        (stats.episode_rewards, worker.agent().get_weights().unwrap(), state)
    };
    let (recorded, recorded_weights, state) = run(true);
    assert_eq!(
        state,
        (Some(Ok(())), Some(Ok(()))),
        "rollouts and updates replayed recordings"
    );
    let (direct, direct_weights, _) = run(false);
    assert!(recorded.len() > 20, "episodes ended: {}", recorded.len());
    assert_eq!(
        recorded, direct,
        "the same episodes, in the same order, with the same returns"
    );
    for ((name, a), (_, b)) in recorded_weights.iter().zip(direct_weights.iter()) {
        let gap = a
            .data
            .to_f64()
            .iter()
            .zip(b.data.to_f64())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(gap <= 1e-4, "{name}: the weights differ by {gap}");
    }
}

/// `n` copies of `dynamics` on the GPU seeded 5, restarting from a stream of 4 start states
/// each or from Philox draws.
fn gpu_copies<D: rlgraph_tensor_envs::Dynamics<Tch>>(
    dynamics: D,
    n: usize,
    philox: bool,
    spaces: (Space, Space),
) -> rlgraph_tensor_envs::Batched<Tch, D> {
    let restarts = if philox {
        rlgraph_tensor_envs::Restarts::Philox
    } else {
        rlgraph_tensor_envs::Restarts::Stream { depth: 4 }
    };
    rlgraph_tensor_envs::Batched::with_restarts(dynamics, n, GPU, 5, restarts, spaces).unwrap()
}

/// MountainCar's, Acrobot's and Pendulum's one-kernel steps equal their tensor ops to the bit
/// over 1,000 steps of random actions (integers, and floats beyond the bounds for Pendulum's
/// torques), restarts from the stream and from Philox draws included: every copy is truncated
/// at least twice.
#[test]
fn the_other_one_kernel_steps_match_their_tensor_ops_over_1000_steps() {
    use rand::Rng;
    use rlgraph_envs::{Acrobot, Env, MountainCar, Pendulum};
    use rlgraph_tensor_envs::{AcrobotDynamics, Dynamics, MountainCarDynamics, OneKernel, PendulumDynamics, TensorEnv};
    if !gpu_here() {
        return;
    }
    let n = 256;
    fn lockstep<D: Dynamics<Tch> + 'static>(
        make: &dyn Fn(bool) -> rlgraph_tensor_envs::Batched<Tch, D>,
        actions: &dyn Fn(&mut ChaCha8Rng, usize) -> TchTensor,
    ) {
        for philox in [false, true] {
            let mut plain = make(philox);
            let id = plain.id().to_string();
            let mut fused = OneKernel::new(make(philox)).unwrap_or_else(|e| panic!("{id}: {e}"));
            let (a, b) = (plain.reset().unwrap(), fused.reset().unwrap());
            assert_eq!(Tch::to_host(&a).unwrap(), Tch::to_host(&b).unwrap(), "{id}: reset");
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let mut ended = 0.0;
            for step in 0..1000 {
                let act = actions(&mut rng, step);
                let expected = plain.step(&act).unwrap();
                let got = fused.step(&act).unwrap_or_else(|e| panic!("{id} step {step}: {e}"));
                for (what, x, y) in [
                    ("observation", &expected.observation, &got.observation),
                    ("reward", &expected.reward, &got.reward),
                    ("terminated", &expected.terminated, &got.terminated),
                    ("truncated", &expected.truncated, &got.truncated),
                ] {
                    assert_eq!(
                        Tch::to_host(x).unwrap(),
                        Tch::to_host(y).unwrap(),
                        "{id} (philox {philox}): {what} at step {step}"
                    );
                }
                let done = Tch::maximum(&expected.terminated, &expected.truncated).unwrap();
                ended += Tch::to_host(&done).unwrap().data.to_f64().iter().sum::<f64>();
            }
            let copies = plain.num_envs() as f64;
            assert!(ended >= 2.0 * copies, "{id}: only {ended} episodes ended");
            assert_eq!(
                plain.snapshot().unwrap(),
                fused.snapshot().unwrap(),
                "{id} (philox {philox})"
            );
        }
    }
    let discrete = |count: i64| {
        move |rng: &mut ChaCha8Rng, step: usize| {
            let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..count)).collect();
            let a = Tch::from_host(&HostTensor::i64([n], a).unwrap(), GPU).unwrap();
            // Float actions on odd steps: the kernel is compiled for each.
            if step % 2 == 1 {
                Tch::cast(&a, DType::F32).unwrap()
            } else {
                a
            }
        }
    };
    let spaces = |env: &dyn Env| (env.state_space().clone(), env.action_space().clone());
    lockstep(
        &|philox| {
            gpu_copies(
                MountainCarDynamics::<Tch>::new(n, GPU).unwrap(),
                n,
                philox,
                spaces(&MountainCar::new(0)),
            )
        },
        &discrete(3),
    );
    lockstep(
        &|philox| {
            gpu_copies(
                AcrobotDynamics::<Tch>::new(n, GPU).unwrap(),
                n,
                philox,
                spaces(&Acrobot::new(0)),
            )
        },
        &discrete(3),
    );
    lockstep(
        &|philox| {
            gpu_copies(
                PendulumDynamics::<Tch>::new(n, GPU).unwrap(),
                n,
                philox,
                spaces(&Pendulum::new(0)),
            )
        },
        &|rng, step| {
            let torques: Vec<f32> = (0..n).map(|_| rng.random_range(-2.5f32..2.5)).collect();
            // A column on odd steps, as a Gaussian policy hands its actions over.
            let shape = if step % 2 == 1 { vec![n, 1] } else { vec![n] };
            Tch::from_host(
                &HostTensor::new(shape, rlgraph_core::HostData::F32(torques)).unwrap(),
                GPU,
            )
            .unwrap()
        },
    );
}
