//! Backend conformance: every op of every family on candle and on tch, with the same inputs,
//! must give the same outputs and gradients (1e-5 relative for f32), and those outputs must
//! equal the values worked out by hand in each case. One module per op family of
//! `rlgraph_core::backend`, so `cargo test conformance::reduce` checks one family, and a new
//! backend can be brought up family by family. With `RLGRAPH_TEST_DEVICE=cuda:0` the tch side
//! runs on the GPU.

/// What every family's cases use.
mod prelude {
    pub(super) use super::{shaped, var};
    pub(super) use backend_candle::Candle;
    pub(super) use backend_tch::Tch;
    pub(super) use rand::SeedableRng;
    pub(super) use rand_chacha::ChaCha8Rng;
    pub(super) use rlgraph_core::backend::prelude::*;
    pub(super) use rlgraph_core::{test_device, CoreError, DType, HostTensor, Result};
    pub(super) use rlgraph_tests::{assert_backends_agree, assert_expected, f32s, host, i64s};
}

use prelude::*;

/// Defines a test that runs `$body` (generic over the backend `$B`) on both backends, checks
/// they agree, and checks the outputs against `$expected` (one flat list per output).
macro_rules! case {
    ($name:ident, $expected:expr, <$B:ident> $body:block) => {
        #[test]
        fn $name() {
            fn run<$B: Backend>() -> Result<Vec<HostTensor>> $body
            let candle = run::<Candle>().unwrap_or_else(|e| panic!("candle: {e}"));
            let tch = run::<Tch>().unwrap_or_else(|e| panic!("tch: {e}"));
            assert_backends_agree(stringify!($name), &candle, &tch);
            let expected: Vec<Vec<f64>> = $expected;
            assert_expected(stringify!($name), &candle, &expected);
        }
    };
}

mod autodiff;
mod bitwise;
mod compare;
mod core_ops;
mod elementwise;
mod index;
mod module;
mod optimizer;
mod random;
mod reduce;
mod shape;

/// Fails the case unless `t` has `shape`.
pub(super) fn shaped<B: Backend>(t: B::Tensor, shape: &[usize]) -> Result<B::Tensor> {
    if B::shape(&t) != shape {
        return Err(CoreError::Backend {
            backend: B::NAME,
            op: "test",
            message: format!("shape {:?}, expected {shape:?}", B::shape(&t)),
        });
    }
    Ok(t)
}

/// A variable of `shape` holding `data`.
pub(super) fn var<B: Backend>(shape: &[usize], data: &[f32]) -> Result<B::Var> {
    B::var(&f32s::<B>(shape, data)?)
}
