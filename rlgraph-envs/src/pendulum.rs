//! `Pendulum-v1`, with Gymnasium's dynamics, reward and 200-step limit.

use std::f64::consts::PI;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{FloatBox, Space, Value};

use crate::env::{float_action, observation, seeded, Env, EnvError, Episode, Result, Step};

const MAX_SPEED: f64 = 8.0;
const MAX_TORQUE: f64 = 2.0;
const DT: f64 = 0.05;
const G: f64 = 10.0;
const M: f64 = 1.0;
const L: f64 = 1.0;

/// An inverted pendulum swung up by a torque in [-2, 2]; the reward is
/// `-(angle^2 + 0.1 speed^2 + 0.001 torque^2)`, and episodes only end at the time limit.
pub struct Pendulum {
    state: [f64; 2],
    rng: ChaCha8Rng,
    episode: Episode,
    state_space: Space,
    action_space: Space,
}

/// The angle mapped into `[-pi, pi)`, as Gymnasium's `angle_normalize`.
pub fn angle_normalize(x: f64) -> f64 {
    (x + PI).rem_euclid(2.0 * PI) - PI
}

impl Pendulum {
    /// A new Pendulum-v1.
    pub fn new(seed: u64) -> Self {
        Pendulum {
            state: [0.0; 2],
            rng: seeded(seed),
            episode: Episode::new("Pendulum-v1", Some(200)),
            state_space: FloatBox::per_element([3], vec![-1.0, -1.0, -MAX_SPEED], vec![1.0, 1.0, MAX_SPEED])
                .map(Space::from)
                .unwrap_or_else(|_| Space::from(FloatBox::new([3]))),
            action_space: FloatBox::bounded([1], -MAX_TORQUE, MAX_TORQUE)
                .map(Space::from)
                .unwrap_or_else(|_| Space::from(FloatBox::new([1]))),
        }
    }

    fn observe(&self) -> Value {
        let [th, thdot] = self.state;
        observation(&[th.cos(), th.sin(), thdot])
    }
}

impl Env for Pendulum {
    fn id(&self) -> &str {
        &self.episode.id
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    fn reset(&mut self, seed: Option<u64>) -> Value {
        if let Some(seed) = seed {
            self.rng = seeded(seed);
        }
        self.state = [self.rng.random_range(-PI..PI), self.rng.random_range(-1.0..1.0)];
        self.episode.start();
        self.observe()
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let u = float_action(self.id(), &self.action_space, action, 1)?[0].clamp(-MAX_TORQUE, MAX_TORQUE);
        self.episode.tick()?;
        let [th, thdot] = self.state;
        let cost = angle_normalize(th).powi(2) + 0.1 * thdot * thdot + 0.001 * u * u;
        let new_thdot =
            (thdot + (3.0 * G / (2.0 * L) * th.sin() + 3.0 / (M * L * L) * u) * DT).clamp(-MAX_SPEED, MAX_SPEED);
        self.state = [th + new_thdot * DT, new_thdot];
        let truncated = self.episode.finish(false);
        Ok(Step {
            observation: self.observe(),
            reward: -cost,
            terminated: false,
            truncated,
        })
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        self.state = state.try_into().map_err(|_| EnvError::BadState {
            env: self.id().into(),
            reason: format!("expected 2 values (theta, theta_dot), got {}", state.len()),
        })?;
        self.episode.start();
        Ok(())
    }
}
