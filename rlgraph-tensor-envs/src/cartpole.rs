//! CartPole-v1 as a tensor program: the host version's explicit Euler step over all copies.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, Result};
use rlgraph_envs::cartpole::{
    FORCE_MAG, GRAVITY, LENGTH, MASS_POLE, POLE_MASS_LENGTH, TAU, THETA_THRESHOLD, TOTAL_MASS, X_THRESHOLD,
};
use rlgraph_envs::CartPole;

use crate::batched::{column, discrete_actions, CudaStep, Dynamics};
use crate::cuda_step::{f32_literal, kernel_source};

/// CartPole-v1's dynamics over `[n, 4]` states `(x, x_dot, theta, theta_dot)`.
pub struct CartPoleDynamics<B: Backend> {
    x_limit: B::Tensor,
    theta_limit: B::Tensor,
    ones: B::Tensor,
}

impl<B: Backend> CartPoleDynamics<B> {
    /// The dynamics for `n` copies on `device`.
    pub fn new(n: usize, device: Device) -> Result<Self> {
        Ok(CartPoleDynamics {
            x_limit: B::scalar(X_THRESHOLD, DType::F32, device)?,
            theta_limit: B::scalar(THETA_THRESHOLD, DType::F32, device)?,
            ones: B::full(&[n], 1.0, DType::F32, device)?,
        })
    }
}

impl<B: Backend> Dynamics<B> for CartPoleDynamics<B> {
    fn id(&self) -> &str {
        "CartPole-v1"
    }

    fn width(&self) -> usize {
        4
    }

    fn limit(&self) -> Option<usize> {
        Some(500)
    }

    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        CartPole::start_state(rng).to_vec()
    }

    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        let (low, high) = CartPole::START_BOX;
        (low.to_vec(), high.to_vec())
    }

    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        discrete_actions::<B>(self.id(), actions, n, 2)
    }

    fn advance(&self, s: &B::Tensor, a: &B::Tensor, _draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let (x, x_dot, theta, theta_dot) = (
            column::<B>(s, 0)?,
            column::<B>(s, 1)?,
            column::<B>(s, 2)?,
            column::<B>(s, 3)?,
        );
        let force = B::affine(a, 2.0 * FORCE_MAG, -FORCE_MAG)?;
        let (sin, cos) = (B::sin(&theta)?, B::cos(&theta)?);
        let spin = B::affine(&B::mul(&B::square(&theta_dot)?, &sin)?, POLE_MASS_LENGTH, 0.0)?;
        let temp = B::affine(&B::add(&force, &spin)?, 1.0 / TOTAL_MASS, 0.0)?;
        let numerator = B::sub(&B::affine(&sin, GRAVITY, 0.0)?, &B::mul(&cos, &temp)?)?;
        let denominator = B::affine(&B::square(&cos)?, -LENGTH * MASS_POLE / TOTAL_MASS, LENGTH * 4.0 / 3.0)?;
        let theta_acc = B::div(&numerator, &denominator)?;
        let x_acc = B::sub(
            &temp,
            &B::affine(&B::mul(&theta_acc, &cos)?, POLE_MASS_LENGTH / TOTAL_MASS, 0.0)?,
        )?;
        let euler = |v: &B::Tensor, dv: &B::Tensor| B::add(v, &B::affine(dv, TAU, 0.0)?);
        let (x, theta) = (euler(&x, &x_dot)?, euler(&theta, &theta_dot)?);
        let next = B::concat(
            &[
                x.clone(),
                euler(&x_dot, &x_acc)?,
                theta.clone(),
                euler(&theta_dot, &theta_acc)?,
            ],
            1,
        )?;
        let out_x = B::gt(&B::abs(&x)?, &self.x_limit)?;
        let out_theta = B::gt(&B::abs(&theta)?, &self.theta_limit)?;
        let terminated = B::squeeze(&B::maximum(&out_x, &out_theta)?, 1)?;
        Ok((next, self.ones.clone(), terminated))
    }

    fn observe(&self, state: &B::Tensor) -> Result<B::Tensor> {
        Ok(state.clone())
    }

    fn fused(&self) -> bool {
        true
    }

    fn cuda_step(&self) -> Option<CudaStep> {
        // The actions cast to f32 and clamped as `discrete_actions` does (NaN stays NaN), then
        // `advance`'s ops one by one in f32 (the launch has no fused multiply-adds); the frame
        // adds `Batched::step`'s clock and restart: the tensor path's numbers in one pass.
        let f = f32_literal;
        let body = format!(
            r#"
  float x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
  float a = clamp_like_torch(v, 0.0f, 1.0f);
  float force = a * {force2} + {neg_force};
  float sn = sinf(theta), cs = cosf(theta);
  float spin = theta_dot * theta_dot * sn * {pml} + 0.0f;
  float temp = (force + spin) * {inv_total} + 0.0f;
  float numerator = (sn * {gravity} + 0.0f) - cs * temp;
  float denominator = cs * cs * {den_mul} + {den_add};
  float theta_acc = numerator / denominator;
  float x_acc = temp - (theta_acc * cs * {pml_total} + 0.0f);
  next[0] = x + (x_dot * {tau} + 0.0f);
  next[1] = x_dot + (x_acc * {tau} + 0.0f);
  next[2] = theta + (theta_dot * {tau} + 0.0f);
  next[3] = theta_dot + (theta_acc * {tau} + 0.0f);
  term = fabsf(next[0]) > {x_limit} || fabsf(next[2]) > {theta_limit};
  rew = 1.0f;"#,
            force2 = f(2.0 * FORCE_MAG),
            neg_force = f(-FORCE_MAG),
            pml = f(POLE_MASS_LENGTH),
            inv_total = f(1.0 / TOTAL_MASS),
            gravity = f(GRAVITY),
            den_mul = f(-LENGTH * MASS_POLE / TOTAL_MASS),
            den_add = f(LENGTH * 4.0 / 3.0),
            pml_total = f(POLE_MASS_LENGTH / TOTAL_MASS),
            tau = f(TAU),
            x_limit = f(X_THRESHOLD),
            theta_limit = f(THETA_THRESHOLD),
        );
        Some(CudaStep {
            source: kernel_source("cartpole_step", 4, "", &body),
            name: "cartpole_step",
        })
    }

    fn advance_one(&self, _copy: usize, row: &mut [f32], action: f64) -> Result<(f32, bool)> {
        // `advance`'s ops one by one in f32, `affine(v, m, a)` being `v * m + a`, so the pass
        // gives the tensor path's numbers to the bit.
        let f = |v: f64| v as f32;
        let (x, x_dot, theta, theta_dot) = (row[0], row[1], row[2], row[3]);
        let a = (action as f32).clamp(0.0, 1.0);
        let force = a * f(2.0 * FORCE_MAG) + f(-FORCE_MAG);
        let (sin, cos) = (theta.sin(), theta.cos());
        let spin = theta_dot * theta_dot * sin * f(POLE_MASS_LENGTH) + 0.0;
        let temp = (force + spin) * f(1.0 / TOTAL_MASS) + 0.0;
        let numerator = (sin * f(GRAVITY) + 0.0) - cos * temp;
        let denominator = cos * cos * f(-LENGTH * MASS_POLE / TOTAL_MASS) + f(LENGTH * 4.0 / 3.0);
        let theta_acc = numerator / denominator;
        let x_acc = temp - (theta_acc * cos * f(POLE_MASS_LENGTH / TOTAL_MASS) + 0.0);
        let euler = |v: f32, dv: f32| v + (dv * f(TAU) + 0.0);
        let (x, theta) = (euler(x, x_dot), euler(theta, theta_dot));
        row.copy_from_slice(&[x, euler(x_dot, x_acc), theta, euler(theta_dot, theta_acc)]);
        let terminated = x.abs() > f(X_THRESHOLD) || theta.abs() > f(THETA_THRESHOLD);
        Ok((1.0, terminated))
    }
}
