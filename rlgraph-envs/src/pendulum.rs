//! `Pendulum-v1`, with Gymnasium's dynamics, reward and 200-step limit.

use std::f64::consts::PI;

use rand::Rng;
use rlgraph_spaces::{Space, Value};

use crate::env::{core_accessors, core_snapshots, float_action, float_box, observation, Core, Env, Result, Step};

/// Angular speed limit.
pub const MAX_SPEED: f64 = 8.0;
/// Torque limit either way.
pub const MAX_TORQUE: f64 = 2.0;
/// Seconds per step.
pub const DT: f64 = 0.05;
/// Gravity.
pub const G: f64 = 10.0;
/// Mass.
pub const M: f64 = 1.0;
/// Length.
pub const L: f64 = 1.0;

/// An inverted pendulum swung up by a torque in [-2, 2]; the reward is
/// `-(angle^2 + 0.1 speed^2 + 0.001 torque^2)`, and episodes only end at the time limit.
pub struct Pendulum {
    state: [f64; 2],
    core: Core,
}

/// The angle mapped into `[-pi, pi)`, as Gymnasium's `angle_normalize`.
pub fn angle_normalize(x: f64) -> f64 {
    (x + PI).rem_euclid(2.0 * PI) - PI
}

impl Pendulum {
    /// A new Pendulum-v1.
    pub fn new(seed: u64) -> Self {
        let state_space = float_box(vec![-1.0, -1.0, -MAX_SPEED], vec![1.0, 1.0, MAX_SPEED]);
        let action_space = float_box(vec![-MAX_TORQUE], vec![MAX_TORQUE]);
        Pendulum {
            state: [0.0; 2],
            core: Core::new("Pendulum-v1", Some(200), seed, state_space, action_space),
        }
    }

    /// A start state as `reset` draws it: angle uniform in [-pi, pi), speed in [-1, 1).
    pub fn start_state(rng: &mut impl Rng) -> [f64; 2] {
        let (low, high) = Self::START_BOX;
        [rng.random_range(low[0]..high[0]), rng.random_range(low[1]..high[1])]
    }

    /// The box a start state is drawn uniformly from, `(low, high)`: an angle in ±π and an
    /// angular velocity in ±1, as Gymnasium's.
    pub const START_BOX: ([f64; 2], [f64; 2]) = ([-PI, -1.0], [PI, 1.0]);

    fn observe(&self) -> Value {
        let [th, thdot] = self.state;
        observation(&[th.cos(), th.sin(), thdot])
    }
}

impl Env for Pendulum {
    core_accessors!();
    core_snapshots!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.state = Self::start_state(self.core.begin(seed));
        Ok(self.observe())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let u = float_action(self.id(), &self.core.action_space, action, 1)?[0].clamp(-MAX_TORQUE, MAX_TORQUE);
        self.core.episode.tick()?;
        let [th, thdot] = self.state;
        let cost = angle_normalize(th).powi(2) + 0.1 * thdot * thdot + 0.001 * u * u;
        let new_thdot =
            (thdot + (3.0 * G / (2.0 * L) * th.sin() + 3.0 / (M * L * L) * u) * DT).clamp(-MAX_SPEED, MAX_SPEED);
        self.state = [th + new_thdot * DT, new_thdot];
        let truncated = self.core.episode.finish(false);
        Ok(Step {
            observation: self.observe(),
            reward: -cost,
            terminated: false,
            truncated,
        })
    }

    fn state(&self) -> Option<Vec<f64>> {
        Some(self.state.to_vec())
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let any = (f64::NEG_INFINITY, f64::INFINITY);
        self.state = self
            .core
            .set(state, "theta, theta_dot", [any, (-MAX_SPEED, MAX_SPEED)])?;
        Ok(())
    }
}
