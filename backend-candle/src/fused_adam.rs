//! Adam's step for f32 variables on the CPU as one pass over the elements.
//!
//! Why: written as backend ops, one Adam step is about fourteen elementwise ops per variable,
//! each allocating its result; a PPO minibatch step on CartPole updates twelve variables, and
//! `rlgraph train --profile` put nearly all of PPO's time in its updates. The pass below does
//! the same f32 arithmetic in the same order as those ops (candle's `affine` is `x * mul +
//! add` in f32), so the numbers are the same to the bit.

use candle_core::{DType, Result, Storage, Tensor, Var};
use rlgraph_core::AdamStep;

/// The elements of a contiguous f32 CPU tensor, copied out (`None` for anything else).
fn f32s(t: &Tensor) -> Option<Vec<f32>> {
    if t.dtype() != DType::F32 || !t.device().is_cpu() {
        return None;
    }
    let (storage, layout) = t.storage_and_layout();
    let (start, end) = layout.contiguous_offsets()?;
    match &*storage {
        Storage::Cpu(cpu) => cpu.as_slice::<f32>().ok().map(|s| s[start..end].to_vec()),
        _ => None,
    }
}

/// The step fused, where every operand is a contiguous f32 CPU tensor of one shape; `Ok(false)`
/// leaves the step to the separate ops.
pub fn step(var: &Var, m: &Var, v: &Var, g: &Tensor, h: &AdamStep) -> Result<bool> {
    let shape = var.shape();
    if m.shape() != shape || v.shape() != shape || g.shape() != shape {
        return Ok(false);
    }
    let (Some(mut w), Some(mut ms), Some(mut vs), Some(gs)) = (f32s(var), f32s(m), f32s(v), f32s(g)) else {
        return Ok(false);
    };
    let f = |x: f64| x as f32;
    let (b1, b2, lr, eps) = (f(h.beta1), f(h.beta2), f(h.lr), f(h.epsilon));
    let (c1, c2, one_b1, one_b2) = (f(h.bias1), f(h.bias2), f(1.0 - h.beta1), f(1.0 - h.beta2));
    for i in 0..w.len() {
        // Each line is one of the separate ops, `+ 0.0` included (it turns -0 into +0).
        let g = gs[i];
        let m_new = (ms[i] * b1 + 0.0) + (g * one_b1 + 0.0);
        let v_new = (vs[i] * b2 + 0.0) + ((g * g) * one_b2 + 0.0);
        let m_hat = m_new * c1 + 0.0;
        let v_hat = v_new * c2 + 0.0;
        let denominator = v_hat.sqrt() * 1.0 + eps;
        w[i] -= (m_hat / denominator) * lr + 0.0;
        ms[i] = m_new;
        vs[i] = v_new;
    }
    let device = var.device();
    m.set(&Tensor::from_vec(ms, shape, device)?)?;
    v.set(&Tensor::from_vec(vs, shape, device)?)?;
    var.set(&Tensor::from_vec(w, shape, device)?)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};
    use rlgraph_core::AdamStep;

    use crate::Candle;

    /// `n` test values with every 17th a zero of either sign, so every path of the arithmetic
    /// is taken.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut v = crate::test_values::values(n, seed);
        for (i, x) in v.iter_mut().enumerate() {
            match i % 17 {
                0 => *x = 0.0,
                1 => *x = -0.0,
                _ => {}
            }
        }
        v
    }

    fn var(data: Vec<f32>) -> Var {
        Var::from_tensor(&Tensor::from_vec(data.clone(), data.len(), &Device::Cpu).unwrap()).unwrap()
    }

    fn bits(v: &Var) -> Vec<u32> {
        crate::test_values::bits(v.as_tensor())
    }

    #[test]
    fn the_fused_step_equals_the_separate_ops_to_the_bit() {
        let n = 1000;
        let h = AdamStep {
            lr: 0.003,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            bias1: 1.0 / (1.0 - 0.9f64.powf(3.0)),
            bias2: 1.0 / (1.0 - 0.999f64.powf(3.0)),
        };
        let (w, m, v, g) = (
            values(n, 1),
            values(n, 2),
            values(n, 3).iter().map(|x| x.abs()).collect::<Vec<f32>>(),
            values(n, 4),
        );
        let g = Tensor::from_vec(g, n, &Device::Cpu).unwrap();
        let fused = (var(w.clone()), var(m.clone()), var(v.clone()));
        let ops = (var(w), var(m), var(v));
        assert!(
            super::step(&fused.0, &fused.1, &fused.2, &g, &h).unwrap(),
            "the fused path ran"
        );
        rlgraph_core::backend::adam_step_ops::<Candle>(&ops.0, &ops.1, &ops.2, &g, &h).unwrap();
        assert_eq!(bits(&fused.0), bits(&ops.0), "variable");
        assert_eq!(bits(&fused.1), bits(&ops.1), "first moment");
        assert_eq!(bits(&fused.2), bits(&ops.2), "second moment");
        // And the step moved the variable.
        assert_ne!(bits(&fused.0), bits(&var(values(n, 1))));
    }

    #[test]
    fn other_dtypes_and_mismatched_shapes_are_left_to_the_separate_ops() {
        let h = AdamStep {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            bias1: 10.0,
            bias2: 1000.0,
        };
        let f64s = |x: Vec<f64>| Var::from_tensor(&Tensor::new(x, &Device::Cpu).unwrap()).unwrap();
        let (w, m, v) = (f64s(vec![1.0]), f64s(vec![0.0]), f64s(vec![0.0]));
        let g = Tensor::new(vec![0.5f64], &Device::Cpu).unwrap();
        assert!(!super::step(&w, &m, &v, &g, &h).unwrap());
        let (w, m, v) = (var(vec![1.0, 2.0]), var(vec![0.0, 0.0]), var(vec![0.0, 0.0]));
        let g = Tensor::new(vec![0.5f32], &Device::Cpu).unwrap();
        assert!(!super::step(&w, &m, &v, &g, &h).unwrap());
    }
}
