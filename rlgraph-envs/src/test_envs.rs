//! `RandomEnv` and `DeterministicEnv`, RLgraph's environments for testing agents and workers.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{FloatBox, IntBox, Space, Value};

use crate::env::{bad_action, observation, seeded, Env, Episode, Result, Step};

/// Random observations from a state space, random rewards in `[0, 1)`, and a terminal with
/// probability `terminal_prob` at each step; any action in the action space.
pub struct RandomEnv {
    state_space: Space,
    action_space: Space,
    terminal_prob: f64,
    rng: ChaCha8Rng,
    episode: Episode,
}

impl RandomEnv {
    /// A random environment over the given spaces.
    pub fn new(state_space: Space, action_space: Space, terminal_prob: f64, seed: u64) -> Self {
        RandomEnv {
            state_space,
            action_space,
            terminal_prob,
            rng: seeded(seed),
            episode: Episode::new("RandomEnv", None),
        }
    }
}

impl Env for RandomEnv {
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
        self.episode.start();
        self.state_space.sample(None, &mut self.rng)
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        if !self.action_space.contains(action) {
            return Err(bad_action(self.id(), &self.action_space, action));
        }
        self.episode.tick()?;
        let terminated = self.rng.random::<f64>() < self.terminal_prob;
        self.episode.finish(terminated);
        Ok(Step {
            observation: self.state_space.sample(None, &mut self.rng),
            reward: self.rng.random::<f64>(),
            terminated,
            truncated: false,
        })
    }
}

/// A fixed episode for checking bookkeeping: the observation is `[state_start + t]` and the
/// reward `reward_start + t` at step `t = 1, 2, ...`; the episode terminates at step
/// `steps_to_terminal`. Actions (0 or 1) are ignored.
pub struct DeterministicEnv {
    state_start: f64,
    reward_start: f64,
    steps_to_terminal: usize,
    episode: Episode,
    state_space: Space,
    action_space: Space,
}

impl DeterministicEnv {
    /// RLgraph's defaults are `(0.0, -100.0, 10)`.
    pub fn new(state_start: f64, reward_start: f64, steps_to_terminal: usize) -> Self {
        DeterministicEnv {
            state_start,
            reward_start,
            steps_to_terminal,
            episode: Episode::new("DeterministicEnv", None),
            state_space: Space::from(FloatBox::new([1])),
            action_space: Space::from(IntBox::new(2).unwrap_or_else(|_| IntBox::unbounded())),
        }
    }
}

impl Env for DeterministicEnv {
    fn id(&self) -> &str {
        &self.episode.id
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    fn reset(&mut self, _seed: Option<u64>) -> Value {
        self.episode.start();
        observation(&[self.state_start])
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        if !self.action_space.contains(action) {
            return Err(bad_action(self.id(), &self.action_space, action));
        }
        self.episode.tick()?;
        let t = self.episode.steps as f64;
        let terminated = self.episode.steps >= self.steps_to_terminal;
        self.episode.finish(terminated);
        Ok(Step {
            observation: observation(&[self.state_start + t]),
            reward: self.reward_start + t,
            terminated,
            truncated: false,
        })
    }
}
