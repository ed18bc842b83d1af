//! Adam's step for f32 variables on the CPU, in place: three passes over the elements (the
//! two moments, then the weights), nothing copied.
//!
//! Why: written as backend ops, one Adam step is about fourteen elementwise ops per variable,
//! each allocating its result; a PPO minibatch step on CartPole updates twelve variables, and
//! `rlgraph train --profile` put nearly all of PPO's time in its updates. The passes below do
//! the same f32 arithmetic in the same order as those ops (candle's `affine` is `x * mul +
//! add` in f32), so the numbers are the same to the bit. In place, because copying the
//! operands out and the results back cost an Atari DQN update (2.4 million weights) 7% of its
//! time in memmove.

use candle_core::{CpuStorage, DType, InplaceOp2, InplaceOp3, Layout, Result, Tensor, Var};
use rlgraph_core::AdamStep;

use crate::cpu_slices::{contiguous_f32, contiguous_f32_mut};

/// Whether `t` is a contiguous f32 CPU tensor.
pub(crate) fn fusable(t: &Tensor) -> bool {
    t.dtype() == DType::F32 && t.device().is_cpu() && t.is_contiguous()
}

/// A moment in place: `x = (x * decay + 0) + (g * scale + 0)`, or with `g * g` for the
/// second moment.
struct Moment {
    decay: f32,
    scale: f32,
    square: bool,
}

impl InplaceOp2 for Moment {
    fn name(&self) -> &'static str {
        "adam-moment"
    }

    fn cpu_fwd(&self, s1: &mut CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<()> {
        let (x, g) = (contiguous_f32_mut(s1, l1, "adam")?, contiguous_f32(s2, l2, "adam")?);
        crate::wide_lanes::with_wide_lanes(|| {
            for (x, &g) in x.iter_mut().zip(g) {
                // Each product is one of the separate ops, `+ 0.0` included (it turns -0 into +0).
                let g = if self.square { g * g } else { g };
                *x = (*x * self.decay + 0.0) + (g * self.scale + 0.0);
            }
        });
        Ok(())
    }
}

/// The weights in place from the new moments: `w -= (m c1 + 0) / (sqrt(v c2 + 0) 1 + eps) lr + 0`.
struct Weights {
    c1: f32,
    c2: f32,
    eps: f32,
    lr: f32,
}

impl InplaceOp3 for Weights {
    fn name(&self) -> &'static str {
        "adam-weights"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<()> {
        let (w, m, v) = (
            contiguous_f32_mut(s1, l1, "adam")?,
            contiguous_f32(s2, l2, "adam")?,
            contiguous_f32(s3, l3, "adam")?,
        );
        // Sixteen lanes with AVX-512, eight with AVX2: the square roots and divisions are the cost.
        crate::wide_lanes::with_wide_lanes(|| {
            for ((w, &m), &v) in w.iter_mut().zip(m).zip(v) {
                let m_hat = m * self.c1 + 0.0;
                let v_hat = v * self.c2 + 0.0;
                let denominator = v_hat.sqrt() * 1.0 + self.eps;
                *w -= (m_hat / denominator) * self.lr + 0.0;
            }
        });
        Ok(())
    }
}

/// The step fused, where every operand is a contiguous f32 CPU tensor of one shape: three
/// passes that write the moments and the weights in place. `Ok(false)` leaves the step to the
/// separate ops (nothing was changed).
pub fn step(var: &Var, m: &Var, v: &Var, g: &Tensor, h: &AdamStep) -> Result<bool> {
    let shape = var.shape();
    if m.shape() != shape || v.shape() != shape || g.shape() != shape {
        return Ok(false);
    }
    if ![var.as_tensor(), m.as_tensor(), v.as_tensor(), g]
        .into_iter()
        .all(fusable)
    {
        return Ok(false);
    }
    let f = |x: f64| x as f32;
    m.as_tensor().inplace_op2(
        g,
        &Moment {
            decay: f(h.beta1),
            scale: f(1.0 - h.beta1),
            square: false,
        },
    )?;
    v.as_tensor().inplace_op2(
        g,
        &Moment {
            decay: f(h.beta2),
            scale: f(1.0 - h.beta2),
            square: true,
        },
    )?;
    var.as_tensor().inplace_op3(
        m.as_tensor(),
        v.as_tensor(),
        &Weights {
            c1: f(h.bias1),
            c2: f(h.bias2),
            eps: f(h.epsilon),
            lr: f(h.lr),
        },
    )?;
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
        let h = AdamStep::at(3.0, 0.003, 0.9, 0.999, 1e-8);
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
