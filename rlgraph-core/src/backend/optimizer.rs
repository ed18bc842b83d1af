//! `OptimizerOps`: optimizer steps a backend may fuse into few kernels.

use super::{AutodiffOps, ElementwiseOps};
use crate::error::Result;

/// Optimizer steps over variables. Each has a default as separate ops; a backend may fuse
/// them into fewer kernels giving the same numbers.
pub trait OptimizerOps: AutodiffOps + ElementwiseOps {
    /// One Adam step on `var` with gradient `g` and moment variables `m` and `v` (all of one
    /// shape): `m = β1 m + (1 - β1) g`, `v = β2 v + (1 - β2) g²`, then
    /// `var -= lr (m · bias1) / (sqrt(v · bias2) + ε)`. By default as separate ops.
    fn adam_step(var: &Self::Var, m: &Self::Var, v: &Self::Var, g: &Self::Tensor, h: &AdamStep) -> Result<()> {
        adam_step_ops::<Self>(var, m, v, g, h)
    }

    /// One Adam step whose step-dependent scalars are 0-d tensors on the variable's device
    /// (see [`AdamScalars`]), so that nothing crosses to the host and a recorded update
    /// replays them as they change: `m` and `v` as in [`OptimizerOps::adam_step`], then
    /// `var -= (m · lr_bias1) / (sqrt(v) · sqrt_bias2 + ε)`. By default as separate ops.
    fn adam_step_scaled(
        var: &Self::Var,
        m: &Self::Var,
        v: &Self::Var,
        g: &Self::Tensor,
        h: &AdamScalars<Self::Tensor>,
    ) -> Result<()> {
        adam_step_scaled_ops::<Self>(var, m, v, g, h)
    }

    /// One RMSProp step on `var` with gradient `g` (PyTorch's `RMSprop`):
    /// `v = ρ v + (1 - ρ) g²`; centred (with `mg`), also `mg = ρ mg + (1 - ρ) g` and the
    /// variance `v - mg²` in place of `v`; `s = g / (sqrt(·) + ε)`; with momentum (`mom`),
    /// `mom = μ mom + s` stands for `s`; then `var -= lr s`. By default as separate ops.
    fn rmsprop_step(
        var: &Self::Var,
        slots: RmsPropSlots<'_, Self::Var>,
        g: &Self::Tensor,
        h: &RmsPropStep,
    ) -> Result<()> {
        rmsprop_step_ops::<Self>(var, slots, g, h)
    }
}

/// The state variables of one [`OptimizerOps::rmsprop_step`], each of the variable's shape.
#[derive(Debug)]
pub struct RmsPropSlots<'a, V> {
    /// The squared gradients' running average.
    pub v: &'a V,
    /// The gradients' running average, when centred.
    pub mg: Option<&'a V>,
    /// The scaled steps' momentum buffer, when there is momentum.
    pub mom: Option<&'a V>,
}

// By hand: derived, they would ask the variables themselves to be `Copy`.
impl<V> Clone for RmsPropSlots<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V> Copy for RmsPropSlots<'_, V> {}

/// The scalars of one [`OptimizerOps::rmsprop_step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmsPropStep {
    /// The learning rate.
    pub lr: f64,
    /// The running averages' decay (PyTorch's `alpha`).
    pub decay: f64,
    /// Added to the root.
    pub epsilon: f64,
    /// The momentum buffer's decay (read only with a momentum buffer).
    pub momentum: f64,
}

/// [`OptimizerOps::rmsprop_step`] as separate backend ops: the default, and the fallback of
/// a backend whose fused step does not take some operands.
pub fn rmsprop_step_ops<B: AutodiffOps + ElementwiseOps>(
    var: &B::Var,
    slots: RmsPropSlots<'_, B::Var>,
    g: &B::Tensor,
    h: &RmsPropStep,
) -> Result<()> {
    let v_new = B::add(
        &B::affine(B::var_tensor(slots.v), h.decay, 0.0)?,
        &B::affine(&B::square(g)?, 1.0 - h.decay, 0.0)?,
    )?;
    B::var_set(slots.v, &v_new)?;
    let second = match slots.mg {
        Some(mg) => {
            let mg_new = B::add(
                &B::affine(B::var_tensor(mg), h.decay, 0.0)?,
                &B::affine(g, 1.0 - h.decay, 0.0)?,
            )?;
            B::var_set(mg, &mg_new)?;
            B::sub(&v_new, &B::square(&mg_new)?)?
        }
        None => v_new,
    };
    let scaled = B::div(g, &B::affine(&B::sqrt(&second)?, 1.0, h.epsilon)?)?;
    let step = match slots.mom {
        Some(mom) => {
            let mom_new = B::add(&B::affine(B::var_tensor(mom), h.momentum, 0.0)?, &scaled)?;
            B::var_set(mom, &mom_new)?;
            mom_new
        }
        None => scaled,
    };
    let w = B::detach(B::var_tensor(var));
    B::var_set(var, &B::sub(&w, &B::affine(&step, h.lr, 0.0)?)?)
}

/// Adam's moments after gradient `g`, `m = β1 m + (1 - β1) g` and `v = β2 v + (1 - β2) g²`,
/// written into their variables and returned.
fn adam_moments<B: AutodiffOps + ElementwiseOps>(
    m: &B::Var,
    v: &B::Var,
    g: &B::Tensor,
    beta1: f64,
    beta2: f64,
) -> Result<(B::Tensor, B::Tensor)> {
    let m_new = B::add(
        &B::affine(B::var_tensor(m), beta1, 0.0)?,
        &B::affine(g, 1.0 - beta1, 0.0)?,
    )?;
    let v_new = B::add(
        &B::affine(B::var_tensor(v), beta2, 0.0)?,
        &B::affine(&B::square(g)?, 1.0 - beta2, 0.0)?,
    )?;
    B::var_set(m, &m_new)?;
    B::var_set(v, &v_new)?;
    Ok((m_new, v_new))
}

/// [`OptimizerOps::adam_step_scaled`] as separate backend ops: the default, and the fallback
/// of a backend whose fused step does not take some operands.
pub fn adam_step_scaled_ops<B: AutodiffOps + ElementwiseOps>(
    var: &B::Var,
    m: &B::Var,
    v: &B::Var,
    g: &B::Tensor,
    h: &AdamScalars<B::Tensor>,
) -> Result<()> {
    let (m_new, v_new) = adam_moments::<B>(m, v, g, h.beta1, h.beta2)?;
    let denom = B::affine(&B::mul(&B::sqrt(&v_new)?, &h.sqrt_bias2)?, 1.0, h.epsilon)?;
    let step = B::mul(&B::div(&m_new, &denom)?, &h.lr_bias1)?;
    let w = B::detach(B::var_tensor(var));
    B::var_set(var, &B::sub(&w, &step)?)
}

/// [`OptimizerOps::adam_step`] as separate backend ops: the default, and the fallback of a
/// backend whose fused step does not take some operands.
pub fn adam_step_ops<B: AutodiffOps + ElementwiseOps>(
    var: &B::Var,
    m: &B::Var,
    v: &B::Var,
    g: &B::Tensor,
    h: &AdamStep,
) -> Result<()> {
    let (m_new, v_new) = adam_moments::<B>(m, v, g, h.beta1, h.beta2)?;
    let m_hat = B::affine(&m_new, h.bias1, 0.0)?;
    let v_hat = B::affine(&v_new, h.bias2, 0.0)?;
    let step = B::div(&m_hat, &B::affine(&B::sqrt(&v_hat)?, 1.0, h.epsilon)?)?;
    let w = B::detach(B::var_tensor(var));
    B::var_set(var, &B::sub(&w, &B::affine(&step, h.lr, 0.0)?)?)
}

/// The scalars of one [`OptimizerOps::adam_step_scaled`]: the constants as numbers, what
/// changes from step to step as 0-d tensors on the variables' device.
#[derive(Clone, Debug)]
pub struct AdamScalars<T> {
    /// The learning rate times `1 / (1 - beta1^t)` at step `t` (from 1).
    pub lr_bias1: T,
    /// `sqrt(1 / (1 - beta2^t))` at step `t`.
    pub sqrt_bias2: T,
    /// The first moment's decay.
    pub beta1: f64,
    /// The second moment's decay.
    pub beta2: f64,
    /// Added to the second moment's scaled root.
    pub epsilon: f64,
}

/// The scalars of one [`OptimizerOps::adam_step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamStep {
    /// The learning rate.
    pub lr: f64,
    /// The first moment's decay.
    pub beta1: f64,
    /// The second moment's decay.
    pub beta2: f64,
    /// Added to the second moment's root.
    pub epsilon: f64,
    /// `1 / (1 - beta1^t)` at step `t` (from 1).
    pub bias1: f64,
    /// `1 / (1 - beta2^t)` at step `t` (from 1).
    pub bias2: f64,
}

impl AdamStep {
    /// The scalars of Adam's step number `step` (from 1), bias corrections worked out.
    pub fn at(step: f64, lr: f64, beta1: f64, beta2: f64, epsilon: f64) -> Self {
        AdamStep {
            lr,
            beta1,
            beta2,
            epsilon,
            bias1: 1.0 / (1.0 - beta1.powf(step)),
            bias2: 1.0 / (1.0 - beta2.powf(step)),
        }
    }
}
