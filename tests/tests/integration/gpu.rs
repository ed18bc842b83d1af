//! Checks that need a CUDA GPU and a CUDA libtorch, so they are ignored elsewhere. On a GPU
//! machine: `RLGRAPH_TEST_DEVICE=cuda:0 cargo test -p rlgraph-tests --test gpu -- --ignored`.
//! (With that variable set, every other test of this crate runs its tch side on the GPU too.)

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{test_device, Backend, BuildOptions, DType, Device, DeviceMap, GraphExecutor, HostTensor, Tree};
use rlgraph_tests::dummies::mlp;
use rlgraph_tests::Tch;

const GPU: Device = Device::Cuda(0);

fn mlp_on(options: &BuildOptions, seed: u64) -> GraphExecutor<Tch> {
    let spaces = BTreeMap::from([("x".to_string(), Space::from(FloatBox::new([8])).with_batch_rank(true))]);
    GraphExecutor::build(mlp::<Tch>("mlp", &[32, 32, 4]), &spaces, options, seed).expect("builds")
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
#[ignore = "needs a CUDA GPU and a CUDA libtorch"]
fn libtorch_sees_the_gpu_and_computes_there() {
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
#[ignore = "needs a CUDA GPU and a CUDA libtorch"]
fn the_test_device_variable_moves_component_tests_to_the_gpu() {
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
#[ignore = "needs a CUDA GPU and a CUDA libtorch"]
fn a_graph_on_the_gpu_or_split_across_devices_gives_the_cpu_result() {
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
#[ignore = "needs a CUDA GPU and a CUDA libtorch"]
fn gpu_variables_survive_a_checkpoint() {
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
