//! `CartPole-v1`, with Gymnasium's dynamics (explicit Euler), termination and 500-step limit.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{FloatBox, IntBox, Space, Value};

use crate::env::{discrete_action, observation, seeded, Env, EnvError, Episode, Result, Step};

const GRAVITY: f64 = 9.8;
const MASS_CART: f64 = 1.0;
const MASS_POLE: f64 = 0.1;
const TOTAL_MASS: f64 = MASS_CART + MASS_POLE;
const LENGTH: f64 = 0.5; // half the pole's length
const POLE_MASS_LENGTH: f64 = MASS_POLE * LENGTH;
const FORCE_MAG: f64 = 10.0;
const TAU: f64 = 0.02;
const X_THRESHOLD: f64 = 2.4;
const THETA_THRESHOLD: f64 = 12.0 * 2.0 * std::f64::consts::PI / 360.0;

/// A pole on a cart: push left (0) or right (1); +1 per step until the pole falls past 12
/// degrees or the cart leaves [-2.4, 2.4].
pub struct CartPole {
    state: [f64; 4],
    rng: ChaCha8Rng,
    episode: Episode,
    state_space: Space,
    action_space: Space,
}

impl CartPole {
    /// A new CartPole-v1, seeded with `seed` until the first `reset` with a seed.
    pub fn new(seed: u64) -> Self {
        let big = f32::MAX as f64;
        let high = vec![X_THRESHOLD * 2.0, big, THETA_THRESHOLD * 2.0, big];
        let low = high.iter().map(|h| -h).collect();
        CartPole {
            state: [0.0; 4],
            rng: seeded(seed),
            episode: Episode::new("CartPole-v1", Some(500)),
            state_space: FloatBox::per_element([4], low, high)
                .map(Space::from)
                .unwrap_or_else(|_| Space::from(FloatBox::new([4]))),
            action_space: Space::from(IntBox::new(2).unwrap_or_else(|_| IntBox::unbounded())),
        }
    }

    /// `(x, x_dot, theta, theta_dot)`.
    pub fn state(&self) -> [f64; 4] {
        self.state
    }
}

impl Env for CartPole {
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
        for s in &mut self.state {
            *s = self.rng.random_range(-0.05..0.05);
        }
        self.episode.start();
        observation(&self.state)
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = discrete_action(self.id(), &self.action_space, action, 2)?;
        self.episode.tick()?;
        let [x, x_dot, theta, theta_dot] = self.state;
        let force = if a == 1 { FORCE_MAG } else { -FORCE_MAG };
        let (sin, cos) = theta.sin_cos();
        let temp = (force + POLE_MASS_LENGTH * theta_dot * theta_dot * sin) / TOTAL_MASS;
        let theta_acc = (GRAVITY * sin - cos * temp) / (LENGTH * (4.0 / 3.0 - MASS_POLE * cos * cos / TOTAL_MASS));
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
        let truncated = self.episode.finish(terminated);
        Ok(Step {
            observation: observation(&self.state),
            reward: 1.0,
            terminated,
            truncated,
        })
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        self.state = state.try_into().map_err(|_| EnvError::BadState {
            env: self.id().into(),
            reason: format!("expected 4 values (x, x_dot, theta, theta_dot), got {}", state.len()),
        })?;
        self.episode.start();
        Ok(())
    }
}
