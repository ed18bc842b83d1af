//! MountainCar-v0 as a tensor program.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, Result};
use rlgraph_envs::mountain_car::{FORCE, GOAL_POSITION, GRAVITY, MAX_POSITION, MAX_SPEED, MIN_POSITION};
use rlgraph_envs::MountainCar;

use crate::batched::{column, discrete_actions, CudaStep, Dynamics};
use crate::cuda_step::{f32_literal, kernel_source};

/// MountainCar-v0's dynamics over `[n, 2]` states `(position, velocity)`.
pub struct MountainCarDynamics<B: Backend> {
    min_position: B::Tensor,
    goal: B::Tensor,
    zero: B::Tensor,
    minus_ones: B::Tensor,
}

impl<B: Backend> MountainCarDynamics<B> {
    /// The dynamics for `n` copies on `device`.
    pub fn new(n: usize, device: Device) -> Result<Self> {
        Ok(MountainCarDynamics {
            min_position: B::scalar(MIN_POSITION, DType::F32, device)?,
            goal: B::scalar(GOAL_POSITION, DType::F32, device)?,
            zero: B::scalar(0.0, DType::F32, device)?,
            minus_ones: B::full(&[n], -1.0, DType::F32, device)?,
        })
    }
}

impl<B: Backend> Dynamics<B> for MountainCarDynamics<B> {
    fn id(&self) -> &str {
        "MountainCar-v0"
    }

    fn width(&self) -> usize {
        2
    }

    fn limit(&self) -> Option<usize> {
        Some(200)
    }

    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        MountainCar::start_state(rng).to_vec()
    }

    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        let (low, high) = MountainCar::START_BOX;
        (low.to_vec(), high.to_vec())
    }

    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        discrete_actions::<B>(self.id(), actions, n, 3)
    }

    fn advance(&self, s: &B::Tensor, a: &B::Tensor, _draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let (position, velocity) = (column::<B>(s, 0)?, column::<B>(s, 1)?);
        let push = B::affine(a, FORCE, -FORCE)?;
        let pull = B::affine(&B::cos(&B::affine(&position, 3.0, 0.0)?)?, -GRAVITY, 0.0)?;
        let velocity = B::clamp(&B::add(&velocity, &B::add(&push, &pull)?)?, -MAX_SPEED, MAX_SPEED)?;
        let position = B::clamp(&B::add(&position, &velocity)?, MIN_POSITION, MAX_POSITION)?;
        let stuck = B::mul(&B::eq(&position, &self.min_position)?, &B::lt(&velocity, &self.zero)?)?;
        let velocity = B::where_cond(&stuck, &self.zero, &velocity)?;
        let at_goal = B::mul(&B::ge(&position, &self.goal)?, &B::ge(&velocity, &self.zero)?)?;
        let next = B::concat(&[position, velocity], 1)?;
        Ok((next, self.minus_ones.clone(), B::squeeze(&at_goal, 1)?))
    }

    fn observe(&self, state: &B::Tensor) -> Result<B::Tensor> {
        Ok(state.clone())
    }

    fn cuda_step(&self) -> Option<CudaStep> {
        // `advance`'s ops one by one in f32, in its order (see `kernel_source`).
        let f = f32_literal;
        let body = format!(
            r#"
  float a = clamp_like_torch(v, 0.0f, 2.0f);
  float position = s[0], velocity = s[1];
  float push = a * {force} + {neg_force};
  float pull = cosf(position * 3.0f + 0.0f) * {neg_gravity} + 0.0f;
  velocity = clamp_like_torch(velocity + (push + pull), {neg_max_speed}, {max_speed});
  position = clamp_like_torch(position + velocity, {min_position}, {max_position});
  if (position == {min_position} && velocity < 0.0f) velocity = 0.0f;
  term = position >= {goal} && velocity >= 0.0f;
  next[0] = position;
  next[1] = velocity;
  rew = -1.0f;"#,
            force = f(FORCE),
            neg_force = f(-FORCE),
            neg_gravity = f(-GRAVITY),
            max_speed = f(MAX_SPEED),
            neg_max_speed = f(-MAX_SPEED),
            min_position = f(MIN_POSITION),
            max_position = f(MAX_POSITION),
            goal = f(GOAL_POSITION),
        );
        Some(CudaStep {
            source: kernel_source("mountain_car_step", 2, "", &body),
            name: "mountain_car_step",
        })
    }
}
