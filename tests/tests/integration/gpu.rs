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
    let (graph, recorded) = Tch::capture(GPU, || {
        let out = exec.execute_tensors("run", vec![Tree::Leaf(input.clone())])?;
        Ok(out[0].as_leaf().expect("leaf").clone())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..5 {
        let x = batch(&mut rng);
        Tch::copy_into(&input, &x).unwrap();
        Tch::replay(&graph).unwrap();
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
