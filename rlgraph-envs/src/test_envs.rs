//! `RandomEnv` and `DeterministicEnv`, RLgraph's environments for testing agents and workers.

use rand::Rng;
use rlgraph_spaces::{FloatBox, Space, Value};

use crate::env::{bad_action, core_accessors, core_snapshots, discrete, observation, Core, Env, Result, Step};

/// Random observations from a state space, random rewards in `[0, 1)`, and a terminal with
/// probability `terminal_prob` at each step; any action in the action space.
pub struct RandomEnv {
    terminal_prob: f64,
    core: Core,
}

impl RandomEnv {
    /// A random environment over the given spaces.
    pub fn new(state_space: Space, action_space: Space, terminal_prob: f64, seed: u64) -> Self {
        RandomEnv {
            terminal_prob,
            core: Core::new("RandomEnv", None, seed, state_space, action_space),
        }
    }
}

impl Env for RandomEnv {
    core_accessors!();
    core_snapshots!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.core.begin(seed);
        Ok(self.core.state_space.sample(None, &mut self.core.rng))
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        if !self.core.action_space.contains(action) {
            return Err(bad_action(self.id(), &self.core.action_space, action));
        }
        self.core.episode.tick()?;
        let terminated = self.core.rng.random::<f64>() < self.terminal_prob;
        self.core.episode.finish(terminated);
        Ok(Step {
            observation: self.core.state_space.sample(None, &mut self.core.rng),
            reward: self.core.rng.random::<f64>(),
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
    core: Core,
}

impl DeterministicEnv {
    /// RLgraph's defaults are `(0.0, -100.0, 10)`.
    pub fn new(state_start: f64, reward_start: f64, steps_to_terminal: usize) -> Self {
        DeterministicEnv {
            state_start,
            reward_start,
            steps_to_terminal,
            core: Core::new(
                "DeterministicEnv",
                None,
                0,
                Space::from(FloatBox::new([1])),
                discrete(2),
            ),
        }
    }
}

impl Env for DeterministicEnv {
    core_accessors!();
    core_snapshots!();

    fn reset(&mut self, _seed: Option<u64>) -> Result<Value> {
        self.core.episode.start();
        Ok(observation(&[self.state_start]))
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        if !self.core.action_space.contains(action) {
            return Err(bad_action(self.id(), &self.core.action_space, action));
        }
        self.core.episode.tick()?;
        let t = self.core.episode.steps as f64;
        let terminated = self.core.episode.steps >= self.steps_to_terminal;
        self.core.episode.finish(terminated);
        Ok(Step {
            observation: observation(&[self.state_start + t]),
            reward: self.reward_start + t,
            terminated,
            truncated: false,
        })
    }
}
