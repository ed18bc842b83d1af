//! `normalize_spec`: SB3's `VecNormalize` on the acting side. Observations are standardized
//! by running estimates over every state acted on while training, and rewards are divided by
//! the running standard deviation of each copy's discounted return; both are clipped. The
//! agent learns from what it acted on, as SB3's buffers hold normalized observations.

use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{CoreError, HostData, HostState, HostTensor, Result, SavedState};
use serde::Deserialize;
use serde_json::json;

use crate::agent::Transition;
use crate::agent_spec::config;

/// The name of the normalizer's state in a checkpoint.
pub(crate) const STATE_NAME: &str = "normalizer";

/// `normalize_spec` as written: each key is optional, with SB3's defaults.
#[derive(Deserialize, Clone, Debug, Default, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NormalizeSpec {
    /// Standardize observations (default true).
    pub observations: Option<bool>,
    /// Scale rewards by the discounted return's running deviation (default true).
    pub rewards: Option<bool>,
    /// Standardized observations are clipped to plus or minus this (default 10).
    pub clip_observations: Option<f64>,
    /// Scaled rewards are clipped to plus or minus this (default 10).
    pub clip_rewards: Option<f64>,
    /// Added to variances before the square root (default 1e-8).
    pub epsilon: Option<f64>,
}

/// Running mean and variance of a stream of vectors, merged batch by batch (Chan, Golub and
/// LeVeque's parallel update), as SB3's `RunningMeanStd`; it starts at mean 0, variance 1 and
/// a count of 1e-4.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunningMeanStd {
    pub(crate) mean: Vec<f64>,
    pub(crate) var: Vec<f64>,
    pub(crate) count: f64,
}

impl RunningMeanStd {
    fn new(width: usize) -> Self {
        RunningMeanStd {
            mean: vec![0.0; width],
            var: vec![1.0; width],
            count: 1e-4,
        }
    }

    /// Merges `rows` (each of the estimates' width) into the estimates.
    pub(crate) fn update(&mut self, rows: &[Vec<f64>]) {
        let n = rows.len() as f64;
        if rows.is_empty() {
            return;
        }
        let total = self.count + n;
        for j in 0..self.mean.len() {
            let batch_mean = rows.iter().map(|r| r[j]).sum::<f64>() / n;
            let batch_var = rows.iter().map(|r| (r[j] - batch_mean).powi(2)).sum::<f64>() / n;
            let delta = batch_mean - self.mean[j];
            let m2 = self.var[j] * self.count + batch_var * n + delta * delta * self.count * n / total;
            self.mean[j] += delta * n / total;
            self.var[j] = m2 / total;
        }
        self.count = total;
    }
}

/// The normalizer of one agent: its settings, the running estimates, and each copy's
/// discounted return.
#[derive(Clone, Debug, PartialEq)]
pub struct Normalizer {
    observations: bool,
    rewards: bool,
    clip_observations: f64,
    clip_rewards: f64,
    epsilon: f64,
    gamma: f64,
    pub(crate) obs: RunningMeanStd,
    pub(crate) ret: RunningMeanStd,
    /// Each copy's discounted return so far in its episode.
    pub(crate) returns: Vec<f64>,
}

impl Normalizer {
    /// The normalizer `spec` describes for states of `state_space` (one FloatBox when
    /// observations are standardized) and rewards discounted by `gamma`.
    pub fn new(spec: &NormalizeSpec, state_space: &Space, gamma: f64) -> Result<Self> {
        let at = |key: &str| format!("config.normalize_spec.{key}");
        let positive = |value: Option<f64>, default: f64, key: &str| match value.unwrap_or(default) {
            x if x > 0.0 && x.is_finite() => Ok(x),
            x => Err(config(&at(key), format!("{x}: expected a finite number above 0"))),
        };
        let observations = spec.observations.unwrap_or(true);
        let width = match (observations, state_space) {
            (false, _) => 0,
            (true, Space::Float(_)) => state_space.flat_dim(),
            (true, other) => {
                return Err(config(
                    &at("observations"),
                    format!("standardizing needs FloatBox states, not {other}; set it to false"),
                ))
            }
        };
        Ok(Normalizer {
            observations,
            rewards: spec.rewards.unwrap_or(true),
            clip_observations: positive(spec.clip_observations, 10.0, "clip_observations")?,
            clip_rewards: positive(spec.clip_rewards, 10.0, "clip_rewards")?,
            epsilon: positive(spec.epsilon, 1e-8, "epsilon")?,
            gamma,
            obs: RunningMeanStd::new(width),
            ret: RunningMeanStd::new(1),
            returns: vec![],
        })
    }

    /// The states to act on: standardized, after the estimates took them in when `explore`
    /// (training; greedy evaluation leaves the estimates alone, as SB3's `training = False`).
    pub fn act_states(&mut self, states: &[Value], explore: bool) -> Result<Vec<Value>> {
        if !self.observations {
            return Ok(states.to_vec());
        }
        let rows = states.iter().map(|s| self.floats(s)).collect::<Result<Vec<_>>>()?;
        if explore {
            self.obs.update(&rows);
        }
        states.iter().zip(&rows).map(|(s, x)| self.standardized(s, x)).collect()
    }

    /// The transition the agent learns from: both states standardized with the estimates it
    /// acted on, and the reward scaled by copy `env_id`'s discounted return so far.
    pub fn observe(&mut self, env_id: usize, transition: Transition) -> Result<Transition> {
        let (state, next_state) = match self.observations {
            true => (
                self.standardize(&transition.state)?,
                self.standardize(&transition.next_state)?,
            ),
            false => (transition.state, transition.next_state),
        };
        let mut reward = transition.reward;
        if self.rewards {
            if self.returns.len() <= env_id {
                self.returns.resize(env_id + 1, 0.0);
            }
            let discounted = self.returns[env_id] * self.gamma + reward;
            self.ret.update(&[vec![discounted]]);
            let scale = (self.ret.var[0] + self.epsilon).sqrt();
            reward = (reward / scale).clamp(-self.clip_rewards, self.clip_rewards);
            self.returns[env_id] = match transition.terminated || transition.truncated {
                true => 0.0,
                false => discounted,
            };
        }
        Ok(Transition {
            state,
            next_state,
            reward,
            ..transition
        })
    }

    /// Forgets each copy's return so far (a new run of episodes); the estimates stay.
    pub fn reset(&mut self) {
        self.returns.clear();
    }

    fn floats(&self, state: &Value) -> Result<Vec<f64>> {
        let data: Vec<f64> = match state {
            Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
            Value::Float64(a) => a.data().to_vec(),
            other => return Err(bad(format!("a float state, got {}", other.kind_name()))),
        };
        match data.len() == self.obs.mean.len() {
            true => Ok(data),
            false => Err(bad(format!(
                "a state of {} elements, got {}",
                self.obs.mean.len(),
                data.len()
            ))),
        }
    }

    fn standardize(&self, state: &Value) -> Result<Value> {
        self.standardized(state, &self.floats(state)?)
    }

    /// `state`, whose elements are `x`, standardized (in its own dtype and shape).
    fn standardized(&self, state: &Value, x: &[f64]) -> Result<Value> {
        let clip = self.clip_observations;
        let z = x
            .iter()
            .enumerate()
            .map(|(j, v)| ((v - self.obs.mean[j]) / (self.obs.var[j] + self.epsilon).sqrt()).clamp(-clip, clip));
        let shape = state.shape().unwrap_or(&[]).to_vec();
        let value = match state {
            Value::Float64(_) => Array::new(shape, z.collect()).map(Value::Float64),
            _ => Array::new(shape, z.map(|v| v as f32).collect()).map(Value::Float32),
        };
        value.map_err(|e| bad(e.to_string()))
    }
}

fn bad(reason: String) -> CoreError {
    CoreError::Component {
        component: "normalize_spec".into(),
        method: None,
        reason,
    }
}

fn tensor(data: &[f64]) -> HostTensor {
    HostTensor {
        shape: vec![data.len()],
        data: HostData::F64(data.to_vec()),
    }
}

impl HostState for Normalizer {
    fn save_state(&self) -> Result<SavedState> {
        let tensors = [
            ("obs_mean", tensor(&self.obs.mean)),
            ("obs_var", tensor(&self.obs.var)),
            ("counts", tensor(&[self.obs.count, self.ret.count])),
            ("ret_mean_var", tensor(&[self.ret.mean[0], self.ret.var[0]])),
            ("returns", tensor(&self.returns)),
        ];
        Ok(SavedState {
            tensors: tensors.into_iter().map(|(k, t)| (k.to_string(), t)).collect(),
            meta: json!({"width": self.obs.mean.len()}),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        let width = self.obs.mean.len();
        for (key, len) in [
            ("obs_mean", Some(width)),
            ("obs_var", Some(width)),
            ("counts", Some(2)),
            ("ret_mean_var", Some(2)),
            ("returns", None),
        ] {
            match state.tensors.get(key) {
                Some(HostTensor {
                    data: HostData::F64(d), ..
                }) if len.is_none_or(|n| d.len() == n) && d.iter().all(|x| x.is_finite()) => {}
                _ => {
                    return Err(bad(format!(
                        "the checkpoint's {STATE_NAME} has no finite f64 {key} of {} elements",
                        len.map_or("any number of".to_string(), |n| n.to_string())
                    )))
                }
            }
        }
        Ok(())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        let get = |key: &str| match state.tensors.get(key) {
            Some(HostTensor {
                data: HostData::F64(d), ..
            }) => d.clone(),
            _ => vec![],
        };
        let (counts, ret) = (get("counts"), get("ret_mean_var"));
        let (Some(&[obs_count, ret_count]), Some(&[ret_mean, ret_var])) = (counts.get(..2), ret.get(..2)) else {
            return Err(bad(format!("the checkpoint's {STATE_NAME} was not checked")));
        };
        self.obs = RunningMeanStd {
            mean: get("obs_mean"),
            var: get("obs_var"),
            count: obs_count,
        };
        self.ret = RunningMeanStd {
            mean: vec![ret_mean],
            var: vec![ret_var],
            count: ret_count,
        };
        self.returns = get("returns");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlgraph_core::spaces::FloatBox;

    /// The prior's and `xs`' mean and population variance, all at once: SB3's estimates start
    /// as 1e-4 of a sample at mean 0 with variance 1.
    fn brute_moments(xs: &[f64]) -> (f64, f64) {
        let (c, n) = (1e-4, xs.len() as f64);
        let mean = xs.iter().sum::<f64>() / (n + c);
        let m2 = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() + c * (1.0 + mean * mean);
        (mean, m2 / (n + c))
    }

    fn floats(x: &[f32]) -> Value {
        Value::Float32(Array::new(vec![x.len()], x.to_vec()).unwrap())
    }

    fn step(state: f32, reward: f64, end: bool) -> Transition {
        Transition {
            state: floats(&[state]),
            action: Value::i32(0),
            reward,
            terminated: end,
            truncated: false,
            next_state: floats(&[state + 1.0]),
        }
    }

    #[test]
    fn rewards_are_scaled_by_the_deviation_of_each_copys_discounted_return() {
        let space = Space::from(FloatBox::new([1]));
        let spec = NormalizeSpec {
            observations: Some(false),
            clip_rewards: Some(3.0),
            ..NormalizeSpec::default()
        };
        let mut n = Normalizer::new(&spec, &space, 0.5).unwrap();
        // Copy 0: rewards 1, 2 (end), 4; copy 1: reward 8 between. Discounted returns in
        // order: 1, 8 (copy 1), 0.5 * 1 + 2 = 2.5, then 4 (copy 0 restarted after its end).
        let (mut seen, mut returns) = (vec![], vec![]);
        for (copy, reward, end, discounted) in [
            (0, 1.0, false, 1.0),
            (1, 8.0, false, 8.0),
            (0, 2.0, true, 2.5),
            (0, 4.0, false, 4.0),
        ] {
            seen.push(discounted);
            let (_, var) = brute_moments(&seen);
            let expected = (reward / (var + 1e-8f64).sqrt()).clamp(-3.0, 3.0);
            let got = n.observe(copy, step(0.0, reward, end)).unwrap();
            approx::assert_relative_eq!(got.reward, expected, max_relative = 1e-9);
            returns.push(got.reward);
        }
        assert!(
            returns.contains(&3.0),
            "the first reward, over a tiny deviation, is clipped: {returns:?}"
        );
    }

    #[test]
    fn observations_are_standardized_by_the_states_acted_on_while_training() {
        let space = Space::from(FloatBox::new([1]));
        let spec = NormalizeSpec {
            rewards: Some(false),
            clip_observations: Some(1.5),
            ..NormalizeSpec::default()
        };
        let mut n = Normalizer::new(&spec, &space, 0.99).unwrap();
        let z = |x: f64, seen: &[f64]| {
            let (mean, var) = brute_moments(seen);
            ((x - mean) / (var + 1e-8).sqrt()).clamp(-1.5, 1.5) as f32
        };
        let acted = n.act_states(&[floats(&[2.0]), floats(&[4.0])], true).unwrap();
        assert_eq!(
            acted,
            vec![floats(&[z(2.0, &[2.0, 4.0])]), floats(&[z(4.0, &[2.0, 4.0])])]
        );
        // Greedy evaluation leaves the estimates alone; 100 is clipped.
        let greedy = n.act_states(&[floats(&[100.0])], false).unwrap();
        assert_eq!(greedy, vec![floats(&[1.5])]);
        let acted = n.act_states(&[floats(&[3.0])], true).unwrap();
        assert_eq!(acted, vec![floats(&[z(3.0, &[2.0, 4.0, 3.0])])]);
        // Transitions are standardized with the same estimates, and change none of them.
        let t = n.observe(0, step(3.0, 1.0, false)).unwrap();
        assert_eq!(
            (t.state, t.next_state, t.reward),
            (
                floats(&[z(3.0, &[2.0, 4.0, 3.0])]),
                floats(&[z(4.0, &[2.0, 4.0, 3.0])]),
                1.0
            )
        );
        let err = n.act_states(&[floats(&[1.0, 2.0])], true).unwrap_err().to_string();
        assert!(err.contains("1 elements, got 2"), "{err}");
        let dict = Space::from_json_str(r#"{"a": {"type": "float-box", "shape": [1]}}"#).unwrap();
        let err = Normalizer::new(&NormalizeSpec::default(), &dict, 0.99)
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.normalize_spec.observations"), "{err}");
        let zero = NormalizeSpec {
            clip_rewards: Some(0.0),
            ..NormalizeSpec::default()
        };
        let err = Normalizer::new(&zero, &space, 0.99).unwrap_err().to_string();
        assert!(err.contains("config.normalize_spec.clip_rewards"), "{err}");
    }

    #[test]
    fn the_running_estimates_equal_the_whole_streams_moments() {
        // Merged in three uneven batches, the estimates equal the mean and the population
        // variance of all rows at once, with SB3's starting count of 1e-4 at mean 0, var 1.
        let rows: Vec<Vec<f64>> = (0..23)
            .map(|i| vec![(i as f64 * 0.37).sin() * 3.0 + 1.0, i as f64])
            .collect();
        let mut rms = RunningMeanStd::new(2);
        for part in [&rows[..1], &rows[1..9], &rows[9..]] {
            rms.update(part);
        }
        let n = rows.len() as f64;
        for j in 0..2 {
            // The prior counts as 1e-4 of a row at 0 with variance 1.
            let total = n + 1e-4;
            let mean = rows.iter().map(|r| r[j]).sum::<f64>() / total;
            let m2 = rows.iter().map(|r| (r[j] - mean).powi(2)).sum::<f64>() + 1e-4 * (1.0 + mean * mean);
            approx::assert_relative_eq!(rms.mean[j], mean, max_relative = 1e-9);
            approx::assert_relative_eq!(rms.var[j], m2 / total, max_relative = 1e-9);
        }
        approx::assert_relative_eq!(rms.count, n + 1e-4);
    }
}
