//! The bit family on libtorch: its own bitwise and shift kernels, I64 only.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::backend::shift_in_range;
use rlgraph_core::{CoreError, Result};
use tch::Kind;

use crate::{ok, Tch, TchTensor};

/// `t` itself if it holds I64, else an error naming `op` and the dtype.
fn int64<'a>(op: &'static str, t: &'a TchTensor) -> Result<&'a tch::Tensor> {
    if t.0.kind() == Kind::Int64 {
        return Ok(&t.0);
    }
    Err(CoreError::Backend {
        backend: Tch::NAME,
        op,
        message: format!("bit operations take I64 tensors, got {:?}", t.0.kind()),
    })
}

impl BitwiseOps for Tch {
    fn bitwise(op: BitOp, a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        let (a, b) = (int64(op.name(), a)?, int64(op.name(), b)?);
        let out = match op {
            BitOp::And => a.f_bitwise_and_tensor(b),
            BitOp::Or => a.f_bitwise_or_tensor(b),
            BitOp::Xor => a.f_bitwise_xor_tensor(b),
        };
        ok(out, op.name())
    }
    fn shift_left(t: &TchTensor, bits: u32) -> Result<TchTensor> {
        let bits = i64::from(shift_in_range(Tch::NAME, "shift_left", bits)?);
        ok(
            int64("shift_left", t)?.f_bitwise_left_shift_tensor_scalar(bits),
            "shift_left",
        )
    }
    fn shift_right(t: &TchTensor, bits: u32) -> Result<TchTensor> {
        let bits = i64::from(shift_in_range(Tch::NAME, "shift_right", bits)?);
        ok(
            int64("shift_right", t)?.f_bitwise_right_shift_tensor_scalar(bits),
            "shift_right",
        )
    }
}
