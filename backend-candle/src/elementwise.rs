//! The elementwise family on candle: its broadcasting ops, a faster tanh, and a sigmoid that overflows to the right limit.

use candle_core::Tensor;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{BinaryOp, Result, UnaryOp};

use crate::{err, fast_relu, fast_tanh, full_like, Candle};

impl ElementwiseOps for Candle {
    #[inline]
    fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        match op {
            BinaryOp::Add => a.broadcast_add(b),
            BinaryOp::Sub => a.broadcast_sub(b),
            BinaryOp::Mul => a.broadcast_mul(b),
            BinaryOp::Div => a.broadcast_div(b),
            BinaryOp::Maximum => a.broadcast_maximum(b),
            BinaryOp::Minimum => a.broadcast_minimum(b),
            BinaryOp::Pow => a.broadcast_pow(b),
        }
        .map_err(err(op.name()))
    }
    #[inline]
    fn unary(op: UnaryOp, t: &Tensor) -> Result<Tensor> {
        match op {
            UnaryOp::Neg => t.neg(),
            UnaryOp::Exp => t.exp(),
            UnaryOp::Log => t.log(),
            UnaryOp::Sqrt => t.sqrt(),
            UnaryOp::Square => t.sqr(),
            UnaryOp::Abs => t.abs(),
            UnaryOp::Tanh => fast_tanh::apply(t),
            UnaryOp::Sin => t.sin(),
            UnaryOp::Cos => t.cos(),
            UnaryOp::Floor => t.floor(),
            // 1 / (1 + e^-t): e^-t overflowing to inf still gives the right limit 0.
            UnaryOp::Sigmoid => t
                .neg()
                .and_then(|x| x.exp())
                .and_then(|x| x.affine(1.0, 1.0))
                .and_then(|x| x.recip()),
            UnaryOp::Relu => fast_relu::apply(t),
        }
        .map_err(err(op.name()))
    }
    fn affine(t: &Tensor, mul: f64, add: f64) -> Result<Tensor> {
        t.affine(mul, add).map_err(err("affine"))
    }
    fn clamp(t: &Tensor, min: f64, max: f64) -> Result<Tensor> {
        let lo = full_like(t, min)?;
        let hi = full_like(t, max)?;
        t.broadcast_maximum(&lo)
            .and_then(|x| x.broadcast_minimum(&hi))
            .map_err(err("clamp"))
    }
}
