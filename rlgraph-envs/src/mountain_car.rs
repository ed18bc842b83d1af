//! `MountainCar-v0`, with Gymnasium's dynamics and 200-step limit.

use rand::Rng;
use rlgraph_spaces::{Space, Value};

use crate::env::{
    core_accessors, core_snapshots, discrete, discrete_action, float_box, observation, Core, Env, Result, Step,
};

/// Leftmost position.
pub const MIN_POSITION: f64 = -1.2;
/// Rightmost position.
pub const MAX_POSITION: f64 = 0.6;
/// Speed limit either way.
pub const MAX_SPEED: f64 = 0.07;
/// The position that ends an episode.
pub const GOAL_POSITION: f64 = 0.5;
/// The push of the left and right actions.
pub const FORCE: f64 = 0.001;
/// The slope's pull.
pub const GRAVITY: f64 = 0.0025;

/// An underpowered car in a valley: push left (0), nothing (1) or right (2); -1 per step
/// until the car reaches position 0.5.
pub struct MountainCar {
    state: [f64; 2],
    core: Core,
}

impl MountainCar {
    /// A new MountainCar-v0.
    pub fn new(seed: u64) -> Self {
        let state_space = float_box(vec![MIN_POSITION, -MAX_SPEED], vec![MAX_POSITION, MAX_SPEED]);
        MountainCar {
            state: [0.0; 2],
            core: Core::new("MountainCar-v0", Some(200), seed, state_space, discrete(3)),
        }
    }
}

impl MountainCar {
    /// A start state as `reset` draws it: position uniform in [-0.6, -0.4), velocity 0.
    pub fn start_state(rng: &mut impl Rng) -> [f64; 2] {
        let (low, high) = Self::START_BOX;
        [rng.random_range(low[0]..high[0]), 0.0]
    }

    /// The box a start state is drawn uniformly from, `(low, high)`: a position in
    /// `[-0.6, -0.4)` and no velocity, as Gymnasium's.
    pub const START_BOX: ([f64; 2], [f64; 2]) = ([-0.6, 0.0], [-0.4, 0.0]);
}

impl Env for MountainCar {
    core_accessors!();
    core_snapshots!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.state = Self::start_state(self.core.begin(seed));
        Ok(observation(&self.state))
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = discrete_action(self.id(), &self.core.action_space, action, 3)?;
        self.core.episode.tick()?;
        let [mut position, mut velocity] = self.state;
        velocity += (a as f64 - 1.0) * FORCE + (3.0 * position).cos() * (-GRAVITY);
        velocity = velocity.clamp(-MAX_SPEED, MAX_SPEED);
        position += velocity;
        position = position.clamp(MIN_POSITION, MAX_POSITION);
        if position == MIN_POSITION && velocity < 0.0 {
            velocity = 0.0;
        }
        self.state = [position, velocity];
        let terminated = position >= GOAL_POSITION && velocity >= 0.0;
        let truncated = self.core.episode.finish(terminated);
        Ok(Step {
            observation: observation(&self.state),
            reward: -1.0,
            terminated,
            truncated,
        })
    }

    fn state(&self) -> Option<Vec<f64>> {
        Some(self.state.to_vec())
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let bounds = self.core.observation_bounds();
        self.state = self.core.set(state, "position, velocity", bounds)?;
        Ok(())
    }
}
