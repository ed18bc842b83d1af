//! Adam on libtorch in place: the arithmetic of `rlgraph_core::backend::adam_step_ops` in
//! the same order, written into the variable and its moments instead of through a dozen new
//! tensors.
//!
//! Why: the separate ops allocate a fresh tensor the size of the variable for each of about
//! twenty steps, and libtorch's allocator hands big ones out as new pages, so most of an
//! Atari DQN update (2.4 million weights) went to page faults and memory traffic: the
//! optimizer took 165 ms of a 230 ms update. In place it is four temporaries and thirteen
//! passes.

use rlgraph_core::{AdamScalars, AdamStep};
use tch::{Device, Tensor};

/// One Adam step in place, in the fewest kernels where each op is a kernel launch (a GPU) and
/// the separate ops' exact arithmetic everywhere else.
pub(crate) fn step_for_device(
    var: &Tensor,
    m: &Tensor,
    v: &Tensor,
    g: &Tensor,
    h: &AdamStep,
) -> Result<(), tch::TchError> {
    match var.device() {
        Device::Cpu => step(var, m, v, g, h),
        _ => step_in_eight_kernels(var, m, v, g, h),
    }
}

/// One Adam step on `var` with moments `m` and `v` and gradient `g`, in place (outside the
/// gradient tape). Each product and sum is rounded as the separate ops round it; only the
/// sign of a zero moment may differ (they add `0.0` after every scaling).
pub(crate) fn step(var: &Tensor, m: &Tensor, v: &Tensor, g: &Tensor, h: &AdamStep) -> Result<(), tch::TchError> {
    tch::no_grad(|| {
        let (mut var, mut m, mut v) = (var.shallow_clone(), m.shallow_clone(), v.shallow_clone());
        // m = b1 m + (1 - b1) g
        let _ = m.f_mul_scalar_(h.beta1)?;
        let _ = m.f_add_(&g.f_mul_scalar(1.0 - h.beta1)?)?;
        // v = b2 v + (1 - b2) g²
        let _ = v.f_mul_scalar_(h.beta2)?;
        let mut g2 = g.f_square()?;
        let _ = g2.f_mul_scalar_(1.0 - h.beta2)?;
        let _ = v.f_add_(&g2)?;
        // var -= lr (m bias1) / (sqrt(v bias2) + eps)
        let mut denom = v.f_mul_scalar(h.bias2)?;
        let _ = denom.f_sqrt_()?;
        let _ = denom.f_add_scalar_(h.epsilon)?;
        let mut step = m.f_mul_scalar(h.bias1)?;
        let _ = step.f_div_(&denom)?;
        let _ = step.f_mul_scalar_(h.lr)?;
        let _ = var.f_sub_(&step)?;
        Ok(())
    })
}

/// One Adam step in place in eight kernels instead of fourteen, as PyTorch's single-tensor
/// Adam writes it (`lerp` for the moments, `addcdiv` for the step). On a GPU an Atari update
/// launches this for every variable, and each launch costs about what the small kernels do;
/// the numbers agree with [`step`] to rounding, not to the bit, so the CPU keeps [`step`].
pub(crate) fn step_in_eight_kernels(
    var: &Tensor,
    m: &Tensor,
    v: &Tensor,
    g: &Tensor,
    h: &AdamStep,
) -> Result<(), tch::TchError> {
    tch::no_grad(|| {
        let mut var = var.shallow_clone();
        let (m, v) = moments_by_lerp(m, v, g, h.beta1, h.beta2)?;
        // sqrt(v bias2) + eps, with bias2's root taken on the host.
        let mut denom = v.f_sqrt()?;
        let _ = denom.f_mul_scalar_(h.bias2.sqrt())?;
        let _ = denom.f_add_scalar_(h.epsilon)?;
        let step = m.f_mul_scalar(-h.lr * h.bias1)?;
        let _ = var.f_addcdiv_(&step, &denom)?;
        Ok(())
    })
}

/// Adam's moments moved in place by `lerp`: `m + (1 - b1)(g - m) = b1 m + (1 - b1) g`, and
/// likewise `v` with `g²`; the two, as handles.
fn moments_by_lerp(
    m: &Tensor,
    v: &Tensor,
    g: &Tensor,
    beta1: f64,
    beta2: f64,
) -> Result<(Tensor, Tensor), tch::TchError> {
    let (mut m, mut v) = (m.shallow_clone(), v.shallow_clone());
    let _ = m.f_lerp_(g, 1.0 - beta1)?;
    let _ = v.f_lerp_(&g.f_square()?, 1.0 - beta2)?;
    Ok((m, v))
}

/// [`rlgraph_core::OptimizerOps::adam_step_scaled`] in place: `step_in_eight_kernels` with
/// the step's scalars read from 0-d tensors on the device.
pub(crate) fn step_scaled(
    var: &Tensor,
    m: &Tensor,
    v: &Tensor,
    g: &Tensor,
    h: &AdamScalars<crate::TchTensor>,
) -> Result<(), tch::TchError> {
    tch::no_grad(|| {
        let mut var = var.shallow_clone();
        let (m, v) = moments_by_lerp(m, v, g, h.beta1, h.beta2)?;
        let mut denom = v.f_sqrt()?;
        let _ = denom.f_mul_(&h.sqrt_bias2.0)?;
        let _ = denom.f_add_scalar_(h.epsilon)?;
        let mut step = m.f_mul(&h.lr_bias1.0)?;
        let _ = step.f_div_(&denom)?;
        let _ = var.f_sub_(&step)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;

    /// The eight-kernel step equals the separate ops' arithmetic to f32 rounding, over three
    /// steps from zero moments (bias corrections included), with gradients of both signs.
    #[test]
    fn the_eight_kernel_step_agrees_with_the_separate_ops() {
        tch::manual_seed(3);
        let shape = [257i64];
        let start = Tensor::randn(shape, (Kind::Float, Device::Cpu));
        let vars = [start.copy(), start.copy()];
        let moments = [0, 1].map(|_| {
            (
                Tensor::zeros(shape, (Kind::Float, Device::Cpu)),
                Tensor::zeros(shape, (Kind::Float, Device::Cpu)),
            )
        });
        for t in 1..=3 {
            let g = Tensor::randn(shape, (Kind::Float, Device::Cpu)) * 0.1;
            let h = AdamStep::at(t as f64, 1e-3, 0.9, 0.999, 1e-8);
            step(&vars[0], &moments[0].0, &moments[0].1, &g, &h).unwrap();
            step_in_eight_kernels(&vars[1], &moments[1].0, &moments[1].1, &g, &h).unwrap();
        }
        let moved = (&vars[0] - &start).abs().max().double_value(&[]);
        assert!(moved > 1e-3, "the steps moved the variable ({moved})");
        for (a, b) in [
            (&vars[0], &vars[1]),
            (&moments[0].0, &moments[1].0),
            (&moments[0].1, &moments[1].1),
        ] {
            let gap = (a - b).abs().max().double_value(&[]);
            let scale = a.abs().max().double_value(&[]);
            assert!(gap <= 1e-6 * scale.max(1e-6), "gap {gap} at scale {scale}");
        }
    }
}
