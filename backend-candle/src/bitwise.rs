//! The bit family on candle, which has no bit kernels: the I64 elements are worked on in
//! place of a kernel, one pass on the host (candle's CPU tensors live there already).

use candle_core::{DType as CDType, Tensor};
use rlgraph_core::backend::prelude::*;
use rlgraph_core::backend::shift_in_range;
use rlgraph_core::{CoreError, Result};

use crate::{broadcast_shape, err, Candle};

/// `t`'s elements if it holds I64, else an error naming `op` and the dtype.
fn elements(op: &'static str, t: &Tensor) -> Result<Vec<i64>> {
    if t.dtype() != CDType::I64 {
        return Err(CoreError::Backend {
            backend: Candle::NAME,
            op,
            message: format!("bit operations take I64 tensors, got {:?}", t.dtype()),
        });
    }
    t.flatten_all().and_then(|f| f.to_vec1::<i64>()).map_err(err(op))
}

/// `t` with every element mapped by `f`, on `t`'s device and in its shape.
fn map(op: &'static str, t: &Tensor, f: impl Fn(i64) -> i64) -> Result<Tensor> {
    let values: Vec<i64> = elements(op, t)?.into_iter().map(f).collect();
    Tensor::from_vec(values, t.dims(), t.device()).map_err(err(op))
}

impl BitwiseOps for Candle {
    fn bitwise(op: BitOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        let shape = broadcast_shape(op.name(), a.dims(), b.dims())?;
        let wide = |t: &Tensor| t.broadcast_as(shape.as_slice()).map_err(err(op.name()));
        let (x, y) = (elements(op.name(), &wide(a)?)?, elements(op.name(), &wide(b)?)?);
        let f = match op {
            BitOp::And => |p: i64, q: i64| p & q,
            BitOp::Or => |p: i64, q: i64| p | q,
            BitOp::Xor => |p: i64, q: i64| p ^ q,
        };
        let values: Vec<i64> = x.into_iter().zip(y).map(|(p, q)| f(p, q)).collect();
        Tensor::from_vec(values, shape, a.device()).map_err(err(op.name()))
    }
    fn shift_left(t: &Tensor, bits: u32) -> Result<Tensor> {
        let bits = shift_in_range(Candle::NAME, "shift_left", bits)?;
        map("shift_left", t, |x| x.wrapping_shl(bits))
    }
    fn shift_right(t: &Tensor, bits: u32) -> Result<Tensor> {
        let bits = shift_in_range(Candle::NAME, "shift_right", bits)?;
        map("shift_right", t, |x| x >> bits)
    }
}
