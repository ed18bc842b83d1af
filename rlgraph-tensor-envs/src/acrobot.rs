//! Acrobot-v1 as a tensor program: Gymnasium's "book" dynamics and one RK4 step per action.

use std::f64::consts::PI;

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, Result};
use rlgraph_envs::acrobot::{DT, G, I1, I2, L1, LC1, LC2, M1, M2, MAX_VEL_1, MAX_VEL_2};
use rlgraph_envs::Acrobot;

use crate::batched::{column, discrete_actions, CudaStep, Dynamics};
use crate::cuda_step::{f32_literal, kernel_source};

/// Acrobot-v1's dynamics over `[n, 4]` states `(theta1, theta2, dtheta1, dtheta2)`.
pub struct AcrobotDynamics<B: Backend> {
    one: B::Tensor,
    zero: B::Tensor,
    minus_ones: B::Tensor,
}

impl<B: Backend> AcrobotDynamics<B> {
    /// The dynamics for `n` copies on `device`.
    pub fn new(n: usize, device: Device) -> Result<Self> {
        Ok(AcrobotDynamics {
            one: B::scalar(1.0, DType::F32, device)?,
            zero: B::scalar(0.0, DType::F32, device)?,
            minus_ones: B::full(&[n], -1.0, DType::F32, device)?,
        })
    }
}

/// `x` wrapped into `[-pi, pi)` by whole turns.
fn wrap<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    crate::pendulum::angle_normalize::<B>(x)
}

/// The time derivative of the state columns under torque `a` (all `[n, 1]`).
fn dsdt<B: Backend>(s: &[B::Tensor; 4], a: &B::Tensor) -> Result<[B::Tensor; 4]> {
    let [theta1, theta2, dtheta1, dtheta2] = s;
    let (cos2, sin2) = (B::cos(theta2)?, B::sin(theta2)?);
    let d1 = B::affine(
        &cos2,
        M2 * 2.0 * L1 * LC2,
        M1 * LC1 * LC1 + M2 * (L1 * L1 + LC2 * LC2) + I1 + I2,
    )?;
    let d2 = B::affine(&cos2, M2 * L1 * LC2, M2 * LC2 * LC2 + I2)?;
    let phi2 = B::affine(
        &B::cos(&B::affine(&B::add(theta1, theta2)?, 1.0, -PI / 2.0)?)?,
        M2 * LC2 * G,
        0.0,
    )?;
    let spin = B::mul(
        &B::add(&B::square(dtheta2)?, &B::affine(&B::mul(dtheta2, dtheta1)?, 2.0, 0.0)?)?,
        &sin2,
    )?;
    let phi1 = B::add(
        &B::sub(
            &B::affine(
                &B::cos(&B::affine(theta1, 1.0, -PI / 2.0)?)?,
                (M1 * LC1 + M2 * L1) * G,
                0.0,
            )?,
            &B::affine(&spin, M2 * L1 * LC2, 0.0)?,
        )?,
        &phi2,
    )?;
    let d2_over_d1 = B::div(&d2, &d1)?;
    let numerator = B::sub(
        &B::add(a, &B::mul(&d2_over_d1, &phi1)?)?,
        &B::add(
            &B::affine(&B::mul(&B::square(dtheta1)?, &sin2)?, M2 * L1 * LC2, 0.0)?,
            &phi2,
        )?,
    )?;
    let denominator = B::affine(&B::mul(&d2_over_d1, &d2)?, -1.0, M2 * LC2 * LC2 + I2)?;
    let ddtheta2 = B::div(&numerator, &denominator)?;
    let ddtheta1 = B::neg(&B::div(&B::add(&B::mul(&d2, &ddtheta2)?, &phi1)?, &d1)?)?;
    Ok([dtheta1.clone(), dtheta2.clone(), ddtheta1, ddtheta2])
}

/// One classic fourth-order Runge-Kutta step of length `DT`.
fn rk4<B: Backend>(y0: &[B::Tensor; 4], a: &B::Tensor) -> Result<[B::Tensor; 4]> {
    let shift = |k: &[B::Tensor; 4], h: f64| -> Result<[B::Tensor; 4]> {
        Ok([
            B::add(&y0[0], &B::affine(&k[0], h, 0.0)?)?,
            B::add(&y0[1], &B::affine(&k[1], h, 0.0)?)?,
            B::add(&y0[2], &B::affine(&k[2], h, 0.0)?)?,
            B::add(&y0[3], &B::affine(&k[3], h, 0.0)?)?,
        ])
    };
    let k1 = dsdt::<B>(y0, a)?;
    let k2 = dsdt::<B>(&shift(&k1, DT / 2.0)?, a)?;
    let k3 = dsdt::<B>(&shift(&k2, DT / 2.0)?, a)?;
    let k4 = dsdt::<B>(&shift(&k3, DT)?, a)?;
    let step = |i: usize| -> Result<B::Tensor> {
        let inner = B::add(
            &B::add(&k1[i], &B::affine(&k2[i], 2.0, 0.0)?)?,
            &B::add(&B::affine(&k3[i], 2.0, 0.0)?, &k4[i])?,
        )?;
        B::add(&y0[i], &B::affine(&inner, DT / 6.0, 0.0)?)
    };
    Ok([step(0)?, step(1)?, step(2)?, step(3)?])
}

impl<B: Backend> Dynamics<B> for AcrobotDynamics<B> {
    fn id(&self) -> &str {
        "Acrobot-v1"
    }

    fn width(&self) -> usize {
        4
    }

    fn limit(&self) -> Option<usize> {
        Some(500)
    }

    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        Acrobot::start_state(rng).to_vec()
    }

    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        let (low, high) = Acrobot::START_BOX;
        (low.to_vec(), high.to_vec())
    }

    /// Torques `-1, 0, +1` for actions `0, 1, 2`.
    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        B::affine(&discrete_actions::<B>(self.id(), actions, n, 3)?, 1.0, -1.0)
    }

    fn advance(
        &self,
        s: &B::Tensor,
        torque: &B::Tensor,
        _draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let y0 = [
            column::<B>(s, 0)?,
            column::<B>(s, 1)?,
            column::<B>(s, 2)?,
            column::<B>(s, 3)?,
        ];
        let [t1, t2, d1, d2] = rk4::<B>(&y0, torque)?;
        let (t1, t2) = (wrap::<B>(&t1)?, wrap::<B>(&t2)?);
        let d1 = B::clamp(&d1, -MAX_VEL_1, MAX_VEL_1)?;
        let d2 = B::clamp(&d2, -MAX_VEL_2, MAX_VEL_2)?;
        let height = B::neg(&B::add(&B::cos(&t1)?, &B::cos(&B::add(&t2, &t1)?)?)?)?;
        let terminated = B::squeeze(&B::gt(&height, &self.one)?, 1)?;
        let reward = B::where_cond(&terminated, &self.zero, &self.minus_ones)?;
        Ok((B::concat(&[t1, t2, d1, d2], 1)?, reward, terminated))
    }

    fn observe(&self, state: &B::Tensor) -> Result<B::Tensor> {
        let (t1, t2) = (column::<B>(state, 0)?, column::<B>(state, 1)?);
        B::concat(
            &[
                B::cos(&t1)?,
                B::sin(&t1)?,
                B::cos(&t2)?,
                B::sin(&t2)?,
                column::<B>(state, 2)?,
                column::<B>(state, 3)?,
            ],
            1,
        )
    }

    fn cuda_step(&self) -> Option<CudaStep> {
        // `dsdt`, `rk4` and `advance`'s ops one by one in f32, in their order (see
        // `kernel_source`).
        let f = f32_literal;
        let helpers = format!(
            r#"{angle_normalize}
__device__ void dsdt(const float* y, float a, float* out) {{
  float theta1 = y[0], theta2 = y[1], dtheta1 = y[2], dtheta2 = y[3];
  float cos2 = cosf(theta2), sin2 = sinf(theta2);
  float d1 = cos2 * {d1_mul} + {d1_add};
  float d2 = cos2 * {d2_mul} + {d2_add};
  float phi2 = cosf((theta1 + theta2) * 1.0f + {neg_half_pi}) * {phi2_mul} + 0.0f;
  float spin = (dtheta2 * dtheta2 + (dtheta2 * dtheta1 * 2.0f + 0.0f)) * sin2;
  float phi1 = ((cosf(theta1 * 1.0f + {neg_half_pi}) * {phi1_mul} + 0.0f) - (spin * {spin_mul} + 0.0f)) + phi2;
  float d2_over_d1 = d2 / d1;
  float numerator = (a + d2_over_d1 * phi1) - ((dtheta1 * dtheta1 * sin2 * {spin_mul} + 0.0f) + phi2);
  float denominator = d2_over_d1 * d2 * -1.0f + {d2_add};
  float ddtheta2 = numerator / denominator;
  float ddtheta1 = -((d2 * ddtheta2 + phi1) / d1);
  out[0] = dtheta1; out[1] = dtheta2; out[2] = ddtheta1; out[3] = ddtheta2;
}}
"#,
            angle_normalize = crate::pendulum::angle_normalize_source(),
            d1_mul = f(M2 * 2.0 * L1 * LC2),
            d1_add = f(M1 * LC1 * LC1 + M2 * (L1 * L1 + LC2 * LC2) + I1 + I2),
            d2_mul = f(M2 * L1 * LC2),
            d2_add = f(M2 * LC2 * LC2 + I2),
            neg_half_pi = f(-PI / 2.0),
            phi2_mul = f(M2 * LC2 * G),
            phi1_mul = f((M1 * LC1 + M2 * L1) * G),
            spin_mul = f(M2 * L1 * LC2),
        );
        let body = format!(
            r#"
  float torque = clamp_like_torch(v, 0.0f, 2.0f) * 1.0f + -1.0f;
  float y0[4] = {{s[0], s[1], s[2], s[3]}};
  float k1[4], k2[4], k3[4], k4[4], y[4];
  dsdt(y0, torque, k1);
  for (int j = 0; j < 4; ++j) y[j] = y0[j] + (k1[j] * {half_dt} + 0.0f);
  dsdt(y, torque, k2);
  for (int j = 0; j < 4; ++j) y[j] = y0[j] + (k2[j] * {half_dt} + 0.0f);
  dsdt(y, torque, k3);
  for (int j = 0; j < 4; ++j) y[j] = y0[j] + (k3[j] * {dt} + 0.0f);
  dsdt(y, torque, k4);
  for (int j = 0; j < 4; ++j) {{
    float inner = (k1[j] + (k2[j] * 2.0f + 0.0f)) + ((k3[j] * 2.0f + 0.0f) + k4[j]);
    y[j] = y0[j] + (inner * {sixth_dt} + 0.0f);
  }}
  next[0] = angle_normalize(y[0]);
  next[1] = angle_normalize(y[1]);
  next[2] = clamp_like_torch(y[2], {neg_max_vel_1}, {max_vel_1});
  next[3] = clamp_like_torch(y[3], {neg_max_vel_2}, {max_vel_2});
  float height = -(cosf(next[0]) + cosf(next[1] + next[0]));
  term = height > 1.0f;
  rew = term ? 0.0f : -1.0f;"#,
            half_dt = f(DT / 2.0),
            dt = f(DT),
            sixth_dt = f(DT / 6.0),
            max_vel_1 = f(MAX_VEL_1),
            neg_max_vel_1 = f(-MAX_VEL_1),
            max_vel_2 = f(MAX_VEL_2),
            neg_max_vel_2 = f(-MAX_VEL_2),
        );
        Some(CudaStep {
            source: kernel_source("acrobot_step", 4, &helpers, &body),
            name: "acrobot_step",
        })
    }
}
