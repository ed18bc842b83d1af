//! Pendulum-v1 as a tensor program.

use std::f64::consts::PI;

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, CoreError, DType, Device, Result};
use rlgraph_envs::pendulum::{DT, G, L, M, MAX_SPEED, MAX_TORQUE};
use rlgraph_envs::Pendulum;

use crate::batched::{column, CudaStep, Dynamics};
use crate::cuda_step::{f32_literal, kernel_source};

/// Pendulum-v1's dynamics over `[n, 2]` states `(theta, theta_dot)`.
pub struct PendulumDynamics<B: Backend> {
    flags: B::Tensor,
}

impl<B: Backend> PendulumDynamics<B> {
    /// The dynamics for `n` copies on `device`.
    pub fn new(n: usize, device: Device) -> Result<Self> {
        Ok(PendulumDynamics {
            flags: B::full(&[n], 0.0, DType::U8, device)?,
        })
    }
}

/// The angle mapped into `[-pi, pi)`, as Gymnasium's `angle_normalize`, by `floor`.
pub fn angle_normalize<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    let shifted = B::affine(x, 1.0, PI)?;
    let turns = B::floor(&B::affine(&shifted, 1.0 / (2.0 * PI), 0.0)?)?;
    B::affine(&B::sub(&shifted, &B::affine(&turns, 2.0 * PI, 0.0)?)?, 1.0, -PI)
}

impl<B: Backend> Dynamics<B> for PendulumDynamics<B> {
    fn id(&self) -> &str {
        "Pendulum-v1"
    }

    fn width(&self) -> usize {
        2
    }

    fn limit(&self) -> Option<usize> {
        Some(200)
    }

    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        Pendulum::start_state(rng).to_vec()
    }

    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        let (low, high) = Pendulum::START_BOX;
        (low.to_vec(), high.to_vec())
    }

    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        let shape = B::shape(actions);
        if shape != [n] && shape != [n, 1] {
            return Err(CoreError::Config {
                at: "tensor env Pendulum-v1: step".into(),
                reason: format!("expected one torque per copy, shape [{n}] or [{n}, 1], got {shape:?}"),
            });
        }
        let torque = B::clamp(&B::cast(actions, DType::F32)?, -MAX_TORQUE, MAX_TORQUE)?;
        B::reshape(&torque, &[n, 1])
    }

    fn advance(&self, s: &B::Tensor, u: &B::Tensor, _draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let (th, thdot) = (column::<B>(s, 0)?, column::<B>(s, 1)?);
        let cost = B::add(
            &B::square(&angle_normalize::<B>(&th)?)?,
            &B::add(
                &B::affine(&B::square(&thdot)?, 0.1, 0.0)?,
                &B::affine(&B::square(u)?, 0.001, 0.0)?,
            )?,
        )?;
        let acc = B::add(
            &B::affine(&B::sin(&th)?, 3.0 * G / (2.0 * L), 0.0)?,
            &B::affine(u, 3.0 / (M * L * L), 0.0)?,
        )?;
        let thdot = B::clamp(&B::add(&thdot, &B::affine(&acc, DT, 0.0)?)?, -MAX_SPEED, MAX_SPEED)?;
        let th = B::add(&th, &B::affine(&thdot, DT, 0.0)?)?;
        let reward = B::neg(&B::squeeze(&cost, 1)?)?;
        Ok((B::concat(&[th, thdot], 1)?, reward, self.flags.clone()))
    }

    fn observe(&self, state: &B::Tensor) -> Result<B::Tensor> {
        let (th, thdot) = (column::<B>(state, 0)?, column::<B>(state, 1)?);
        B::concat(&[B::cos(&th)?, B::sin(&th)?, thdot], 1)
    }

    fn cuda_step(&self) -> Option<CudaStep> {
        // `advance`'s ops one by one in f32, in its order (see `kernel_source`).
        let f = f32_literal;
        let body = format!(
            r#"
  float u = clamp_like_torch(v, {neg_max_torque}, {max_torque});
  float th = s[0], thdot = s[1];
  float norm = angle_normalize(th);
  float cost = norm * norm + ((thdot * thdot * 0.1f + 0.0f) + (u * u * 0.001f + 0.0f));
  float acc = (sinf(th) * {gravity_term} + 0.0f) + (u * {torque_term} + 0.0f);
  thdot = clamp_like_torch(thdot + (acc * {dt} + 0.0f), {neg_max_speed}, {max_speed});
  next[0] = th + (thdot * {dt} + 0.0f);
  next[1] = thdot;
  rew = -cost;
  term = false;"#,
            max_torque = f(MAX_TORQUE),
            neg_max_torque = f(-MAX_TORQUE),
            gravity_term = f(3.0 * G / (2.0 * L)),
            torque_term = f(3.0 / (M * L * L)),
            dt = f(DT),
            max_speed = f(MAX_SPEED),
            neg_max_speed = f(-MAX_SPEED),
        );
        Some(CudaStep {
            source: kernel_source("pendulum_step", 2, &angle_normalize_source(), &body),
            name: "pendulum_step",
        })
    }
}

/// [`angle_normalize`] as a CUDA device function, its ops in its order.
pub(crate) fn angle_normalize_source() -> String {
    let f = f32_literal;
    format!(
        r#"
__device__ __forceinline__ float angle_normalize(float x) {{
  float shifted = x * 1.0f + {pi};
  float turns = floorf(shifted * {inv_two_pi} + 0.0f);
  return (shifted - (turns * {two_pi} + 0.0f)) * 1.0f + {neg_pi};
}}
"#,
        pi = f(PI),
        inv_two_pi = f(1.0 / (2.0 * PI)),
        two_pi = f(2.0 * PI),
        neg_pi = f(-PI),
    )
}
