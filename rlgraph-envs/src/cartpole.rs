//! `CartPole-v1`, with Gymnasium's dynamics (explicit Euler), termination and 500-step limit.

use rand::Rng;
use rlgraph_spaces::{Space, Value};

use crate::env::{
    core_accessors, core_snapshots, discrete, discrete_action, float_box, observation, Core, Env, Result, Step,
};

/// Gravity (m/s^2).
pub const GRAVITY: f64 = 9.8;
/// Mass of the cart (kg).
pub const MASS_CART: f64 = 1.0;
/// Mass of the pole (kg).
pub const MASS_POLE: f64 = 0.1;
/// Cart plus pole.
pub const TOTAL_MASS: f64 = MASS_CART + MASS_POLE;
/// Half the pole's length (m).
pub const LENGTH: f64 = 0.5; // half the pole's length
/// Pole mass times half length.
pub const POLE_MASS_LENGTH: f64 = MASS_POLE * LENGTH;
/// The push of either action (N).
pub const FORCE_MAG: f64 = 10.0;
/// Seconds per step (explicit Euler).
pub const TAU: f64 = 0.02;
/// The cart position that ends an episode.
pub const X_THRESHOLD: f64 = 2.4;
/// The pole angle (radians, 12 degrees) that ends an episode.
pub const THETA_THRESHOLD: f64 = 12.0 * 2.0 * std::f64::consts::PI / 360.0;

/// A pole on a cart: push left (0) or right (1); +1 per step until the pole falls past 12
/// degrees or the cart leaves [-2.4, 2.4].
pub struct CartPole {
    state: [f64; 4],
    core: Core,
}

impl CartPole {
    /// A new CartPole-v1, seeded with `seed` until the first `reset` with a seed.
    pub fn new(seed: u64) -> Self {
        // Gymnasium's bounds: the velocities are unbounded.
        let high = vec![X_THRESHOLD * 2.0, f64::INFINITY, THETA_THRESHOLD * 2.0, f64::INFINITY];
        let low = high.iter().map(|h| -h).collect();
        CartPole {
            state: [0.0; 4],
            core: Core::new("CartPole-v1", Some(500), seed, float_box(low, high), discrete(2)),
        }
    }

    /// A start state as `reset` draws it: each element uniform in [-0.05, 0.05).
    pub fn start_state(rng: &mut impl Rng) -> [f64; 4] {
        let (low, high) = Self::START_BOX;
        std::array::from_fn(|i| rng.random_range(low[i]..high[i]))
    }

    /// The box a start state is drawn uniformly from, `(low, high)`: Gymnasium's ±0.05.
    pub const START_BOX: ([f64; 4], [f64; 4]) = ([-0.05; 4], [0.05; 4]);

    /// `(x, x_dot, theta, theta_dot)`.
    pub fn state(&self) -> [f64; 4] {
        self.state
    }
}

impl Env for CartPole {
    core_accessors!();
    core_snapshots!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.state = Self::start_state(self.core.begin(seed));
        Ok(observation(&self.state))
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = discrete_action(self.id(), &self.core.action_space, action, 2)?;
        self.core.episode.tick()?;
        let [x, x_dot, theta, theta_dot] = self.state;
        let force = if a == 1 { FORCE_MAG } else { -FORCE_MAG };
        let (sin, cos) = theta.sin_cos();
        // Squares grouped as Gymnasium's `np.square` groups them, so that every rounding,
        // and so every observation, is Gymnasium's to the last bit.
        let temp = (force + POLE_MASS_LENGTH * (theta_dot * theta_dot) * sin) / TOTAL_MASS;
        let theta_acc = (GRAVITY * sin - cos * temp) / (LENGTH * (4.0 / 3.0 - MASS_POLE * (cos * cos) / TOTAL_MASS));
        let x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS;
        self.state = [
            x + TAU * x_dot,
            x_dot + TAU * x_acc,
            theta + TAU * theta_dot,
            theta_dot + TAU * theta_acc,
        ];
        let [x, _, theta, _] = self.state;
        let terminated =
            !(-X_THRESHOLD..=X_THRESHOLD).contains(&x) || !(-THETA_THRESHOLD..=THETA_THRESHOLD).contains(&theta);
        let truncated = self.core.episode.finish(terminated);
        Ok(Step {
            observation: observation(&self.state),
            reward: 1.0,
            terminated,
            truncated,
        })
    }

    fn render(&mut self) -> Result<crate::render::RgbFrame> {
        Ok(crate::render::cartpole_frame(self.state, LENGTH, X_THRESHOLD))
    }

    fn state(&self) -> Option<Vec<f64>> {
        Some(self.state.to_vec())
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let bounds = self.core.observation_bounds();
        self.state = self.core.set(state, "x, x_dot, theta, theta_dot", bounds)?;
        Ok(())
    }
}
