//! `ElementwiseOps`: binary ops with broadcasting, unary ops, `affine` and `clamp`.

use super::prelude::*;

case!(add_broadcasts_rows, vec![vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let b = f32s::<B>(&[3], &[10.0, 20.0, 30.0])?;
    host::<B>(&[shaped::<B>(B::add(&a, &b)?, &[2, 3])?])
});

case!(sub_broadcasts_both_ways, vec![vec![0.0, -1.0, -2.0, 1.0, 0.0, -1.0]], <B> {
    let a = f32s::<B>(&[2, 1], &[1.0, 2.0])?;
    let b = f32s::<B>(&[1, 3], &[1.0, 2.0, 3.0])?;
    host::<B>(&[shaped::<B>(B::sub(&a, &b)?, &[2, 3])?])
});

case!(mul_by_scalar_tensor, vec![vec![3.0, -4.0]], <B> {
    let a = f32s::<B>(&[2], &[1.5, -2.0])?;
    host::<B>(&[B::mul(&a, &f32s::<B>(&[], &[2.0])?)?])
});

case!(div_floats, vec![vec![0.5, 0.75]], <B> {
    host::<B>(&[B::div(&f32s::<B>(&[2], &[1.0, 3.0])?, &f32s::<B>(&[2], &[2.0, 4.0])?)?])
});

case!(integer_add_and_truncating_div, vec![vec![4.0, 6.0], vec![3.0, -3.0]], <B> {
    let a = B::add(&i64s::<B>(&[2], &[1, 2])?, &i64s::<B>(&[2], &[3, 4])?)?;
    let b = B::div(&i64s::<B>(&[2], &[7, -7])?, &i64s::<B>(&[2], &[2, 2])?)?;
    host::<B>(&[a, b])
});

case!(maximum_and_minimum, vec![vec![3.0, 5.0, -1.0], vec![1.0, 2.0, -2.0]], <B> {
    let a = f32s::<B>(&[3], &[1.0, 5.0, -2.0])?;
    let b = f32s::<B>(&[3], &[3.0, 2.0, -1.0])?;
    host::<B>(&[B::maximum(&a, &b)?, B::minimum(&a, &b)?])
});

// Positive bases only: candle computes pow as exp(b * ln a).
case!(pow_of_positive_bases, vec![vec![4.0, 3f64.sqrt(), 0.25]], <B> {
    host::<B>(&[B::pow(&f32s::<B>(&[3], &[2.0, 3.0, 4.0])?, &f32s::<B>(&[3], &[2.0, 0.5, -1.0])?)?])
});

case!(affine_scales_and_shifts, vec![vec![4.0, 7.0], vec![7.0]], <B> {
    let a = B::affine(&f32s::<B>(&[2], &[1.0, 2.0])?, 3.0, 1.0)?;
    let b = B::affine(&i64s::<B>(&[1], &[3])?, 2.0, 1.0)?;
    host::<B>(&[a, b])
});

case!(neg_and_abs, vec![vec![-1.5, 2.0], vec![1.5, 2.0]], <B> {
    let a = f32s::<B>(&[2], &[1.5, -2.0])?;
    host::<B>(&[B::neg(&a)?, B::abs(&a)?])
});

case!(exp_and_log, vec![vec![1.0, std::f64::consts::E], vec![0.0, 2.0]], <B> {
    let e2 = std::f64::consts::E.powi(2) as f32;
    host::<B>(&[B::exp(&f32s::<B>(&[2], &[0.0, 1.0])?)?, B::log(&f32s::<B>(&[2], &[1.0, e2])?)?])
});

case!(sqrt_and_square, vec![vec![2.0, 1.5], vec![9.0, 2.25]], <B> {
    host::<B>(&[B::sqrt(&f32s::<B>(&[2], &[4.0, 2.25])?)?, B::square(&f32s::<B>(&[2], &[3.0, -1.5])?)?])
});

case!(tanh_and_sigmoid, vec![vec![0.5f64.tanh(), (-1f64).tanh()], vec![0.5, 1.0 / (1.0 + (-2f64).exp())]], <B> {
    host::<B>(&[B::tanh(&f32s::<B>(&[2], &[0.5, -1.0])?)?, B::sigmoid(&f32s::<B>(&[2], &[0.0, 2.0])?)?])
});

// sin(pi/6) = 1/2, sin(-pi/2) = -1, cos(pi/3) = 1/2, cos(pi) = -1; floor rounds toward -inf.
case!(sin_cos_and_floor, vec![vec![0.5, -1.0], vec![0.5, -1.0], vec![2.0, -3.0, -1.0, 0.0]], <B> {
    use std::f32::consts::PI;
    host::<B>(&[
        B::sin(&f32s::<B>(&[2], &[PI / 6.0, -PI / 2.0])?)?,
        B::cos(&f32s::<B>(&[2], &[PI / 3.0, PI])?)?,
        B::floor(&f32s::<B>(&[4], &[2.7, -2.5, -1.0, 0.3])?)?,
    ])
});

case!(relu_and_clamp, vec![vec![0.0, 0.5], vec![-1.0, 0.2, 1.0]], <B> {
    host::<B>(&[B::relu(&f32s::<B>(&[2], &[-1.0, 0.5])?)?, B::clamp(&f32s::<B>(&[3], &[-3.0, 0.2, 5.0])?, -1.0, 1.0)?])
});

// Every op as a parameter, on the same operands; the expected values are Rust's own f64
// functions, independent of both backends.
case!(unary_ops_as_parameters, {
    let x = [0.5f64, 2.0];
    let f = |g: fn(f64) -> f64| x.iter().map(|&v| g(v)).collect::<Vec<f64>>();
    vec![
        f(|v| -v),
        f(f64::exp),
        f(f64::ln),
        f(f64::sqrt),
        f(|v| v * v),
        f(f64::abs),
        f(f64::tanh),
        f(f64::sin),
        f(f64::cos),
        f(f64::floor),
        f(|v| 1.0 / (1.0 + (-v).exp())),
        f(|v| v.max(0.0)),
    ]
}, <B> {
    let x = f32s::<B>(&[2], &[0.5, 2.0])?;
    let ops = [
        UnaryOp::Neg,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sqrt,
        UnaryOp::Square,
        UnaryOp::Abs,
        UnaryOp::Tanh,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Floor,
        UnaryOp::Sigmoid,
        UnaryOp::Relu,
    ];
    let outs = ops.iter().map(|&op| B::unary(op, &x)).collect::<Result<Vec<_>>>()?;
    host::<B>(&outs)
});

// [3, 0.5] op [2, -1], worked by hand: the bases are positive so `pow` is defined for both.
case!(binary_ops_as_parameters, vec![
    vec![5.0, -0.5],
    vec![1.0, 1.5],
    vec![6.0, -0.5],
    vec![1.5, -0.5],
    vec![3.0, 0.5],
    vec![2.0, -1.0],
    vec![9.0, 2.0],
], <B> {
    let a = f32s::<B>(&[2], &[3.0, 0.5])?;
    let b = f32s::<B>(&[2], &[2.0, -1.0])?;
    let ops = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Pow,
    ];
    let outs = ops.iter().map(|&op| B::binary(op, &a, &b)).collect::<Result<Vec<_>>>()?;
    host::<B>(&outs)
});
