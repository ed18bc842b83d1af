//! The elementwise family on libtorch: one libtorch op per `BinaryOp` and `UnaryOp`.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::{BinaryOp, Result, UnaryOp};

use crate::{ok, Tch, TchTensor};

impl ElementwiseOps for Tch {
    #[inline]
    fn binary(op: BinaryOp, a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        let (a, b) = (&a.0, &b.0);
        let out = match op {
            BinaryOp::Add => a.f_add(b),
            BinaryOp::Sub => a.f_sub(b),
            BinaryOp::Mul => a.f_mul(b),
            // Integer division truncates toward zero, as candle's does.
            BinaryOp::Div if a.is_floating_point() => a.f_div(b),
            BinaryOp::Div => a.f_div_tensor_mode(b, "trunc"),
            BinaryOp::Maximum => a.f_maximum(b),
            BinaryOp::Minimum => a.f_minimum(b),
            BinaryOp::Pow => a.f_pow(b),
        };
        ok(out, op.name())
    }
    #[inline]
    fn unary(op: UnaryOp, t: &TchTensor) -> Result<TchTensor> {
        let t = &t.0;
        let out = match op {
            UnaryOp::Neg => t.f_neg(),
            UnaryOp::Exp => t.f_exp(),
            UnaryOp::Log => t.f_log(),
            UnaryOp::Sqrt => t.f_sqrt(),
            UnaryOp::Square => t.f_square(),
            UnaryOp::Abs => t.f_abs(),
            UnaryOp::Tanh => t.f_tanh(),
            UnaryOp::Sin => t.f_sin(),
            UnaryOp::Cos => t.f_cos(),
            UnaryOp::Floor => t.f_floor(),
            UnaryOp::Sigmoid => t.f_sigmoid(),
            UnaryOp::Relu => t.f_relu(),
        };
        ok(out, op.name())
    }
    fn affine(t: &TchTensor, mul: f64, add: f64) -> Result<TchTensor> {
        let kind = t.0.kind();
        ok(
            t.0.f_mul_scalar(mul)
                .and_then(|x| x.f_add_scalar(add))
                .and_then(|x| x.f_to_kind(kind)),
            "affine",
        )
    }
    fn clamp(t: &TchTensor, min: f64, max: f64) -> Result<TchTensor> {
        ok(t.0.f_clamp(min, max), "clamp")
    }
}
