//! `OptimizerOps`: Adam's step, fused or not, against the formula worked by hand.

use super::prelude::*;

// One Adam step from zero moments at t = 1 (lr 0.1, beta1 0.9, beta2 0.999, eps 1e-8), by
// hand: m = 0.1 g = [0.05, -0.1], v = 0.001 g^2 = [0.00025, 0.001]; corrected (x10, x1000)
// they are [0.5, -1] and [0.25, 1], so each weight moves by 0.1 * (+-1) against its gradient.
// In f32 (the fused path on candle) and in f64 (the separate ops).
case!(adam_step_by_hand, vec![
    vec![0.9, -1.9], vec![0.05, -0.1], vec![0.00025, 0.001],
    vec![0.9, -1.9], vec![0.05, -0.1], vec![0.00025, 0.001],
], <B> {
    let h = rlgraph_core::AdamStep { lr: 0.1, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, bias1: 10.0, bias2: 1000.0 };
    let mut out = vec![];
    for dtype in [DType::F32, DType::F64] {
        let at = |x: &[f32]| -> Result<B::Var> { B::var(&B::cast(&f32s::<B>(&[2], x)?, dtype)?) };
        let (w, m, v) = (at(&[1.0, -2.0])?, at(&[0.0, 0.0])?, at(&[0.0, 0.0])?);
        let g = B::cast(&f32s::<B>(&[2], &[0.5, -1.0])?, dtype)?;
        B::adam_step(&w, &m, &v, &g, &h)?;
        out.extend(host::<B>(&[B::var_tensor(&w).clone(), B::var_tensor(&m).clone(), B::var_tensor(&v).clone()])?);
    }
    Ok(out)
});

// The same step with its changing scalars as 0-d tensors (what a recorded GPU update reads):
// lr * bias1 = 0.1 * 10 = 1 and sqrt(bias2) = sqrt(1000), so the weights move as above.
case!(adam_step_scaled_by_hand, vec![
    vec![0.9, -1.9], vec![0.05, -0.1], vec![0.00025, 0.001],
    vec![0.9, -1.9], vec![0.05, -0.1], vec![0.00025, 0.001],
], <B> {
    let mut out = vec![];
    for dtype in [DType::F32, DType::F64] {
        let scalar = |x: f64| -> Result<B::Tensor> { B::cast(&B::reshape(&f32s::<B>(&[1], &[x as f32])?, &[])?, dtype) };
        let h = rlgraph_core::AdamScalars {
            lr_bias1: scalar(1.0)?,
            sqrt_bias2: scalar(1000f64.sqrt())?,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
        };
        let at = |x: &[f32]| -> Result<B::Var> { B::var(&B::cast(&f32s::<B>(&[2], x)?, dtype)?) };
        let (w, m, v) = (at(&[1.0, -2.0])?, at(&[0.0, 0.0])?, at(&[0.0, 0.0])?);
        let g = B::cast(&f32s::<B>(&[2], &[0.5, -1.0])?, dtype)?;
        B::adam_step_scaled(&w, &m, &v, &g, &h)?;
        out.extend(host::<B>(&[B::var_tensor(&w).clone(), B::var_tensor(&m).clone(), B::var_tensor(&v).clone()])?);
    }
    Ok(out)
});
