//! Cross-crate integration tests for rlgraph-rs; the test files live in `tests/tests/`.
//!
//! This library holds the conformance harness: a case is one function generic over
//! [`Backend`], run on candle and on tch, whose outputs must agree within
//! [`REL_TOL`] (relative) / [`ABS_TOL`] (absolute, for values near zero), and must match
//! the expected numbers written in the case, which come from hand calculation.

use rlgraph_core::{test_device, Backend, Device, GraphExecutor, HostTensor, Result};

/// Relative tolerance between backends for f32 results.
pub const REL_TOL: f64 = 1e-5;
/// Absolute tolerance for results near zero, where a relative one means nothing.
pub const ABS_TOL: f64 = 1e-6;

/// Uploads an f32 tensor of `shape` to the test device ([`test_device`]).
pub fn f32s<B: Backend>(shape: &[usize], data: &[f32]) -> Result<B::Tensor> {
    B::from_host(&HostTensor::f32(shape, data.to_vec())?, test_device::<B>())
}

/// Uploads an i64 tensor of `shape` to the test device.
pub fn i64s<B: Backend>(shape: &[usize], data: &[i64]) -> Result<B::Tensor> {
    B::from_host(&HostTensor::i64(shape, data.to_vec())?, test_device::<B>())
}

/// Downloads tensors for comparison.
pub fn host<B: Backend>(ts: &[B::Tensor]) -> Result<Vec<HostTensor>> {
    ts.iter().map(B::to_host).collect()
}

/// `t`, once computed: on a GPU it is downloaded, which waits for the queued kernels, so a
/// benchmark times the work and not only its launch. On the CPU it is returned as it is.
pub fn finished<B: Backend>(t: B::Tensor, on_gpu: bool) -> B::Tensor {
    if on_gpu {
        B::to_host(&t).expect("download");
    }
    t
}

/// The test device where it is a GPU, for the benches that only measure there (captured
/// graphs, one-kernel steps); `None` on the CPU, where they skip.
pub fn gpu_test_device<B: Backend>() -> Option<Device> {
    Some(test_device::<B>()).filter(|d| *d != Device::Cpu)
}

/// A network built from an RLgraph `network_spec` (a JSON list of layers) on the test device
/// ([`test_device`]), its input `inputs` in the space `input_space` (JSON), seeded 0: what the
/// forward-pass benchmarks time.
pub fn network_on_test_device<B: Backend>(spec: &serde_json::Value, input_space: &str) -> GraphExecutor<B> {
    let space = rlgraph_core::spaces::Space::from_json_str(input_space).expect("input space");
    let root = rlgraph_components::from_spec::<B>(spec, "network_spec").expect("network spec");
    GraphExecutor::build(
        root,
        &std::collections::BTreeMap::from([("inputs".to_string(), space)]),
        &rlgraph_core::BuildOptions {
            device_map: rlgraph_core::DeviceMap::new(test_device::<B>()),
            ..Default::default()
        },
        0,
    )
    .expect("the network builds")
}

/// Handles to the variables at scope paths `paths` of `exec` (the tensors themselves, not
/// copies), for benchmarks that compute with the executor's own weights by hand.
pub fn variable_tensors<B: Backend>(
    exec: &GraphExecutor<B>,
    paths: impl IntoIterator<Item = String>,
) -> Vec<B::Tensor> {
    let store = exec.store();
    paths
        .into_iter()
        .map(|path| B::var_tensor(store.var(store.index(&path).expect("the variable exists"))).clone())
        .collect()
}

/// Whether `a` and `b` agree within the conformance tolerances.
pub fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= ABS_TOL.max(REL_TOL * a.abs().max(b.abs()))
}

/// Panics with a clear message unless both backends gave the same shapes, dtypes and values.
pub fn assert_backends_agree(case: &str, a: &[HostTensor], b: &[HostTensor]) {
    assert_eq!(a.len(), b.len(), "{case}: number of outputs");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.shape, y.shape, "{case}: output {i} shape (candle vs tch)");
        assert_eq!(x.dtype(), y.dtype(), "{case}: output {i} dtype (candle vs tch)");
        for (j, (p, q)) in x.data.to_f64().iter().zip(y.data.to_f64()).enumerate() {
            assert!(close(*p, q), "{case}: output {i} element {j}: candle {p} vs tch {q}");
        }
    }
}

/// Panics unless the outputs equal the hand-computed values (flattened, one list per output).
pub fn assert_expected(case: &str, got: &[HostTensor], expected: &[Vec<f64>]) {
    assert_eq!(got.len(), expected.len(), "{case}: number of outputs");
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let g = g.data.to_f64();
        assert_eq!(g.len(), e.len(), "{case}: output {i} length");
        for (j, (p, q)) in g.iter().zip(e).enumerate() {
            assert!(close(*p, *q), "{case}: output {i} element {j}: got {p}, expected {q}");
        }
    }
}

pub mod dummies;
pub mod overhead;
pub mod values;

pub use backend_candle::Candle;
pub use backend_tch::Tch;

/// Defines each test body once and runs it as two tests, `NAME::candle` and `NAME::tch`.
#[macro_export]
macro_rules! both_backends {
    ($(fn $name:ident<$B:ident>() $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                fn body<$B: rlgraph_core::Backend>() $body
                #[test]
                fn candle() {
                    body::<$crate::Candle>()
                }
                #[test]
                fn tch() {
                    body::<$crate::Tch>()
                }
            }
        )*
    };
}
