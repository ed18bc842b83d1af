//! `MountainCar-v0`, with Gymnasium's dynamics and 200-step limit.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{FloatBox, IntBox, Space, Value};

use crate::env::{discrete_action, observation, seeded, Env, EnvError, Episode, Result, Step};

const MIN_POSITION: f64 = -1.2;
const MAX_POSITION: f64 = 0.6;
const MAX_SPEED: f64 = 0.07;
const GOAL_POSITION: f64 = 0.5;
const FORCE: f64 = 0.001;
const GRAVITY: f64 = 0.0025;

/// An underpowered car in a valley: push left (0), nothing (1) or right (2); -1 per step
/// until the car reaches position 0.5.
pub struct MountainCar {
    state: [f64; 2],
    rng: ChaCha8Rng,
    episode: Episode,
    state_space: Space,
    action_space: Space,
}

impl MountainCar {
    /// A new MountainCar-v0.
    pub fn new(seed: u64) -> Self {
        MountainCar {
            state: [0.0; 2],
            rng: seeded(seed),
            episode: Episode::new("MountainCar-v0", Some(200)),
            state_space: FloatBox::per_element([2], vec![MIN_POSITION, -MAX_SPEED], vec![MAX_POSITION, MAX_SPEED])
                .map(Space::from)
                .unwrap_or_else(|_| Space::from(FloatBox::new([2]))),
            action_space: Space::from(IntBox::new(3).unwrap_or_else(|_| IntBox::unbounded())),
        }
    }
}

impl Env for MountainCar {
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
        self.state = [self.rng.random_range(-0.6..-0.4), 0.0];
        self.episode.start();
        observation(&self.state)
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = discrete_action(self.id(), &self.action_space, action, 3)?;
        self.episode.tick()?;
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
        let truncated = self.episode.finish(terminated);
        Ok(Step {
            observation: observation(&self.state),
            reward: -1.0,
            terminated,
            truncated,
        })
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        self.state = state.try_into().map_err(|_| EnvError::BadState {
            env: self.id().into(),
            reason: format!("expected 2 values (position, velocity), got {}", state.len()),
        })?;
        self.episode.start();
        Ok(())
    }
}
