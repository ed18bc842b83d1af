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

/// The number of actions of [`MaskedChoiceEnv`].
const CHOICES: usize = 4;
/// The steps of one [`MaskedChoiceEnv`] episode.
const CHOICE_STEPS: usize = 8;

/// An environment with action masks in Gymnasium's convention, for testing masked agents: a
/// Dict observation of `observation` (the mask as floats) and `action_mask` (a uint8 vector,
/// 1 where the action is valid). At each step each of 4 actions is valid with probability one
/// half (at least one always is); a valid action `a` earns `(a + 1) / 4` and an invalid one is
/// refused with an error, as many masked environments do. Episodes last 8 steps, so the best
/// policy (the highest valid action) earns `8 * 49 / 60` on average.
pub struct MaskedChoiceEnv {
    mask: [bool; CHOICES],
    core: Core,
}

impl MaskedChoiceEnv {
    /// The id `make` knows it by.
    pub const ID: &'static str = "MaskedChoice-v0";

    /// A masked-choice environment drawing its masks from `seed`.
    pub fn new(seed: u64) -> Self {
        let state_space = Space::from_json_str(&format!(
            r#"{{"observation": {{"type": "float-box", "shape": [{CHOICES}], "low": 0, "high": 1}},
                "action_mask": {{"type": "int-box", "shape": [{CHOICES}], "low": 0, "high": 2, "dtype": "uint8"}}}}"#
        ))
        .unwrap_or_else(|_| unreachable!("a valid space literal"));
        MaskedChoiceEnv {
            mask: [true; CHOICES],
            core: Core::new(Self::ID, None, seed, state_space, discrete(CHOICES as i64)),
        }
    }

    /// Draws the next mask and gives the observation that shows it.
    fn next_observation(&mut self) -> Value {
        loop {
            let rng = &mut self.core.rng;
            self.mask = std::array::from_fn(|_| rng.random::<bool>());
            if self.mask.contains(&true) {
                break;
            }
        }
        let floats: Vec<f64> = self.mask.iter().map(|&m| f64::from(u8::from(m))).collect();
        let mask = self.mask.iter().map(|&m| u8::from(m)).collect();
        Value::Dict(std::collections::BTreeMap::from([
            ("observation".to_string(), observation(&floats)),
            (
                "action_mask".to_string(),
                Value::Uint8(
                    rlgraph_spaces::Array::new([CHOICES], mask)
                        .unwrap_or_else(|_| unreachable!("shape matches the data")),
                ),
            ),
        ]))
    }
}

impl Env for MaskedChoiceEnv {
    core_accessors!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.core.begin(seed);
        Ok(self.next_observation())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = crate::env::discrete_action(self.id(), &self.core.action_space, action, CHOICES as i64)?;
        if !self.mask[a] {
            return Err(crate::EnvError::BadAction {
                env: self.id().into(),
                action: a.to_string(),
                expected: format!("one of the valid actions {:?} (the action mask)", self.mask),
            });
        }
        self.core.episode.tick()?;
        let terminated = self.core.episode.steps >= CHOICE_STEPS;
        self.core.episode.finish(terminated);
        Ok(Step {
            observation: self.next_observation(),
            reward: (a + 1) as f64 / CHOICES as f64,
            terminated,
            truncated: false,
        })
    }
}
