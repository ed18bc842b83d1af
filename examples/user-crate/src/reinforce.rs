//! REINFORCE with a learned baseline (Williams, 1992; Sutton and Barto, section 13.4), a user's
//! own algorithm: a linear softmax policy and a linear state value on the observation's
//! numbers, learned on the host from each finished episode. Registered as `"reinforce"`, so
//! `rlgraph train`, `evaluate` and `build_agent` run it from a config as they run the
//! built-in algorithms.

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph::agents::{save_host_checkpoint, Agent, HostCheckpoint, Transition, UpdateSpec};
use rlgraph::core::{CoreError, ErasedExecutor, HostState, Result};
use rlgraph::prelude::*;
use serde::{Deserialize, Serialize};

/// The settings a `{"type": "reinforce", ...}` config gives (every one has a default).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReinforceSettings {
    /// The policy's step size.
    #[serde(default = "default_learning_rate")]
    pub learning_rate: f64,
    /// The baseline's step size.
    #[serde(default = "default_baseline_learning_rate")]
    pub baseline_learning_rate: f64,
    /// The discount of the returns.
    #[serde(default = "default_discount")]
    pub discount: f64,
}

fn default_learning_rate() -> f64 {
    0.005
}

fn default_baseline_learning_rate() -> f64 {
    0.05
}

fn default_discount() -> f64 {
    0.99
}

/// One step of an episode still being played: its features, action and reward.
#[derive(Clone, Serialize, Deserialize)]
struct Step {
    features: Vec<f64>,
    action: usize,
    reward: f64,
}

/// What a checkpoint holds of the agent: everything learned and drawn, and the episodes in
/// play, so a resumed run goes on exactly.
#[derive(Serialize, Deserialize)]
struct Learned {
    /// `policy[a]`: the weights of action `a`'s logit (the last one is the bias).
    policy: Vec<Vec<f64>>,
    /// The baseline's weights (the last one is the bias).
    baseline: Vec<f64>,
    /// The random generator's state (SplitMix64).
    rng: u64,
    /// The steps of each environment copy's episode in play.
    episodes: BTreeMap<usize, Vec<Step>>,
    /// Finished episodes not yet learned from.
    finished: Vec<(Vec<Step>, f64)>,
}

/// The agent: a linear softmax policy over a discrete action space, on a flat float state.
pub struct Reinforce {
    settings: ReinforceSettings,
    learned: Learned,
    update: UpdateSpec,
}

/// The checkpoint's format, so another file is refused by name.
const FORMAT: &str = "own-rl reinforce 1";

/// Builds the agent for `states` (a float box) and `actions` (one integer box), drawing from
/// `seed`; other spaces are refused by name.
pub fn reinforce(
    settings: ReinforceSettings,
    states: &Space,
    actions: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    let refuse = |at: &str, reason: String| CoreError::Config { at: at.into(), reason };
    let (Space::Float(_), Space::Int(a)) = (states, actions) else {
        return Err(refuse(
            "config.type",
            format!("reinforce takes a float box of states and one integer action; got {states} and {actions}"),
        ));
    };
    let features = states.shape().unwrap_or(&[]).iter().product::<usize>() + 1;
    let num_actions = a.num_categories().ok_or_else(|| {
        refuse(
            "config.type",
            format!("reinforce takes one bounded integer action; got {actions}"),
        )
    })? as usize;
    if !(0.0..=1.0).contains(&settings.discount) {
        return Err(refuse(
            "config.discount",
            format!("expected a number in [0, 1], got {}", settings.discount),
        ));
    }
    Ok(Box::new(Reinforce {
        settings,
        learned: Learned {
            policy: vec![vec![0.0; features]; num_actions],
            baseline: vec![0.0; features],
            rng: seed,
            episodes: BTreeMap::new(),
            finished: vec![],
        },
        // One learning round per step at most: each learns from the episodes that ended.
        update: UpdateSpec {
            update_interval: 1,
            steps_before_update: 0,
            ..UpdateSpec::default()
        },
    }))
}

/// The observation's numbers and a constant 1 for the bias.
fn features(state: &Value) -> Result<Vec<f64>> {
    let Value::Float32(array) = state else {
        return Err(CoreError::Config {
            at: "states".into(),
            reason: format!("reinforce takes float32 states, got {}", state.kind_name()),
        });
    };
    Ok(array.data().iter().map(|x| f64::from(*x)).chain([1.0]).collect())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Reinforce {
    /// The policy's action probabilities at `x`.
    fn probabilities(&self, x: &[f64]) -> Vec<f64> {
        let logits: Vec<f64> = self.learned.policy.iter().map(|w| dot(w, x)).collect();
        let top = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exp: Vec<f64> = logits.iter().map(|l| (l - top).exp()).collect();
        let total: f64 = exp.iter().sum();
        exp.into_iter().map(|e| e / total).collect()
    }

    /// A uniform draw in [0, 1) from SplitMix64.
    fn uniform(&mut self) -> f64 {
        self.learned.rng = self.learned.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.learned.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One pass over a finished episode: the baseline toward each return, the policy along
    /// the gradient of each action's log-probability scaled by its advantage. `tail` is
    /// the value after the last step (0 where the episode terminated). Returns the mean
    /// squared advantage.
    fn learn(&mut self, episode: &[Step], tail: f64) -> f64 {
        let (alpha, beta, gamma) = (
            self.settings.learning_rate,
            self.settings.baseline_learning_rate,
            self.settings.discount,
        );
        let mut ret = tail;
        let mut squared = 0.0;
        for step in episode.iter().rev() {
            ret = step.reward + gamma * ret;
            let x = &step.features;
            let advantage = ret - dot(&self.learned.baseline, x);
            squared += advantage * advantage;
            // Scaled by the features' count, so the step sizes do not depend on the state's size.
            let scale = 1.0 / x.len() as f64;
            for (w, xi) in self.learned.baseline.iter_mut().zip(x) {
                *w += beta * scale * advantage * xi;
            }
            let pi = self.probabilities(x);
            for (b, weights) in self.learned.policy.iter_mut().enumerate() {
                let grad = if b == step.action { 1.0 } else { 0.0 } - pi[b];
                for (w, xi) in weights.iter_mut().zip(x) {
                    *w += alpha * scale * advantage * grad * xi;
                }
            }
        }
        squared / episode.len().max(1) as f64
    }
}

impl Agent for Reinforce {
    fn get_actions(&mut self, states: &[Value], explore: bool, _time_percentage: f64) -> Result<Vec<Value>> {
        let mut actions = Vec::with_capacity(states.len());
        for state in states {
            let pi = self.probabilities(&features(state)?);
            let action = if explore {
                let u = self.uniform();
                let mut total = 0.0;
                pi.iter()
                    .position(|p| {
                        total += p;
                        u < total
                    })
                    .unwrap_or(pi.len() - 1)
            } else {
                (0..pi.len()).fold(0, |best, a| if pi[a] > pi[best] { a } else { best })
            };
            actions.push(Value::i32(action as i32));
        }
        Ok(actions)
    }

    fn observe(&mut self, env_id: usize, t: Transition) -> Result<()> {
        let Value::Int32(action) = &t.action else {
            return Err(CoreError::Config {
                at: "actions".into(),
                reason: format!("reinforce takes int32 actions, got {}", t.action.kind_name()),
            });
        };
        let step = Step {
            features: features(&t.state)?,
            action: action.data()[0] as usize,
            reward: t.reward,
        };
        let episode = self.learned.episodes.entry(env_id).or_default();
        episode.push(step);
        if t.terminated || t.truncated {
            // A cut episode goes on past its last step: its baseline stands in for the rest.
            let tail = if t.terminated {
                0.0
            } else {
                dot(&self.learned.baseline, &features(&t.next_state)?)
            };
            let episode = std::mem::take(episode);
            self.learned.finished.push((episode, tail));
        }
        Ok(())
    }

    fn begin_episodes(&mut self, _explore: bool, copies: &[usize]) -> Result<()> {
        for copy in copies {
            self.learned.episodes.remove(copy);
        }
        Ok(())
    }

    fn update(&mut self, _time_percentage: f64) -> Result<Option<f64>> {
        if self.learned.finished.is_empty() {
            return Ok(None);
        }
        let finished = std::mem::take(&mut self.learned.finished);
        let losses: Vec<f64> = finished
            .iter()
            .map(|(episode, tail)| self.learn(episode, *tail))
            .collect();
        Ok(Some(losses.iter().sum::<f64>() / losses.len() as f64))
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.update
    }

    /// The checkpoint is JSON: what the agent learned and drew, and the extra states' JSON.
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        let learned = serde_json::to_value(&self.learned).map_err(|e| bad(path, e.to_string()))?;
        save_host_checkpoint(path, FORMAT, learned, extra)
    }

    /// All or nothing: the saved state is checked, then the executor's, before anything loads.
    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let file = HostCheckpoint::read(path, FORMAT, false)?;
        let learned: Learned = serde_json::from_value(file.agent.clone()).map_err(|e| bad(path, e.to_string()))?;
        if learned.policy.len() != self.learned.policy.len() || learned.baseline.len() != self.learned.baseline.len() {
            return Err(bad(path, "saved for other spaces".into()));
        }
        file.load_extra(extra)?;
        self.learned = learned;
        Ok(())
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        None
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        None
    }
}

/// A checkpoint error at `path`.
fn bad(path: &Path, reason: String) -> CoreError {
    CoreError::Checkpoint {
        path: path.display().to_string(),
        reason,
    }
}
