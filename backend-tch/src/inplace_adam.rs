//! Adam on libtorch in place: the arithmetic of `rlgraph_core::backend::adam_step_ops` in
//! the same order, written into the variable and its moments instead of through a dozen new
//! tensors.
//!
//! Why: the separate ops allocate a fresh tensor the size of the variable for each of about
//! twenty steps, and libtorch's allocator hands big ones out as new pages, so most of an
//! Atari DQN update (2.4 million weights) went to page faults and memory traffic: the
//! optimizer took 165 ms of a 230 ms update. In place it is four temporaries and thirteen
//! passes.

use rlgraph_core::AdamStep;
use tch::Tensor;

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
