//! `RolloutAdder`: IMPALA's adder. It turns each environment copy's stream of acted steps
//! (the transition and the behaviour policy's log-likelihood of its action) into rollouts of
//! a fixed length, time first, bootstrapped from the last next state. A truncated episode
//! counts as terminal inside a rollout (its next state is not kept); rollouts run across
//! episode ends.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Space, Value};
use rlgraph_core::{CoreError, HostState, Result, SavedState};
use serde_json::{json, Value as Json};

use crate::agent::Transition;
use crate::batch::stack;
use crate::transition_json::{transition_to_json, Reader};

/// One acted step: the transition and the behaviour policy's log-likelihood of its action.
#[derive(Clone, Debug, PartialEq)]
struct ActedStep {
    transition: Transition,
    log_prob: f64,
}

/// Partial rollouts per environment copy.
pub struct RolloutAdder {
    rollout_length: usize,
    partial: Vec<Vec<ActedStep>>,
    record_space: Space,
    state_space: Space,
    action_space: Space,
}

impl RolloutAdder {
    /// An adder of rollouts of `rollout_length` steps over these spaces (unbatched).
    pub fn new(rollout_length: usize, state_space: &Space, action_space: &Space) -> Result<Self> {
        let (state, action) = (state_space.with_batch_rank(false), action_space.with_batch_rank(false));
        let over_time = |s: &Space| s.with_time_rank(true, false);
        let scalar = |s: Space| over_time(&s);
        let record_space = Space::dict([
            ("states", over_time(&state)),
            ("actions", over_time(&action)),
            ("behaviour_log_probs", scalar(FloatBox::new(Vec::<usize>::new()).into())),
            ("rewards", scalar(FloatBox::new(Vec::<usize>::new()).into())),
            ("terminals", scalar(BoolBox::new(Vec::<usize>::new()).into())),
            ("bootstrap_state", state.clone()),
        ])?;
        Ok(RolloutAdder {
            rollout_length: rollout_length.max(1),
            partial: vec![],
            record_space,
            state_space: state,
            action_space: action,
        })
    }

    /// The space of one rollout record.
    pub fn record_space(&self) -> &Space {
        &self.record_space
    }

    /// Adds a step of copy `env_id` acted with log-likelihood `log_prob`; returns the rollout
    /// it completes, if it completes one.
    pub fn push(&mut self, env_id: usize, transition: Transition, log_prob: f64) -> Result<Option<Value>> {
        if self.partial.len() <= env_id {
            self.partial.resize_with(env_id + 1, Vec::new);
        }
        self.partial[env_id].push(ActedStep { transition, log_prob });
        if self.partial[env_id].len() < self.rollout_length {
            return Ok(None);
        }
        let steps = std::mem::take(&mut self.partial[env_id]);
        record(&steps).map(Some)
    }

    /// Drops every partial rollout.
    pub fn clear(&mut self) {
        self.partial.clear();
    }
}

/// The rollout record of `steps` (time first), bootstrapped from the last next state.
fn record(steps: &[ActedStep]) -> Result<Value> {
    let transitions: Vec<&Transition> = steps.iter().map(|s| &s.transition).collect();
    let log_probs: Vec<f64> = steps.iter().map(|s| s.log_prob).collect();
    rollout_record(&transitions, &log_probs)
}

/// IMPALA's record of one rollout: its steps (time first) with the behaviour policy's
/// log-likelihood of each action, bootstrapped from the last next state. A truncated step
/// counts as terminal. Records stacked batch-first are what `ImpalaLearner` learns from.
pub fn rollout_record<T: Borrow<Transition>>(transitions: &[T], log_probs: &[f64]) -> Result<Value> {
    let n = transitions.len();
    let bad = |reason: String| CoreError::Config {
        at: "rollout-record".into(),
        reason,
    };
    if log_probs.len() != n {
        return Err(bad(format!("{n} steps but {} log-likelihoods", log_probs.len())));
    }
    let last = transitions
        .last()
        .ok_or_else(|| bad("an empty rollout".into()))?
        .borrow();
    let steps = || transitions.iter().map(Borrow::borrow);
    let column = |f: fn(&Transition) -> &Value| stack(&steps().map(|t| f(t).clone()).collect::<Vec<_>>());
    let floats = |v: Vec<f32>| -> Result<Value> { Ok(Value::Float32(Array::new([n], v)?)) };
    Ok(Value::Dict(BTreeMap::from([
        ("states".to_string(), column(|t| &t.state)?),
        ("actions".to_string(), column(|t| &t.action)?),
        (
            "behaviour_log_probs".to_string(),
            floats(log_probs.iter().map(|&p| p as f32).collect())?,
        ),
        (
            "rewards".to_string(),
            floats(steps().map(|t| t.reward as f32).collect())?,
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([n], steps().map(|t| t.terminated || t.truncated).collect())?),
        ),
        ("bootstrap_state".to_string(), last.next_state.clone()),
    ])))
}

/// Partial rollouts ride in checkpoints as JSON.
impl HostState for RolloutAdder {
    fn save_state(&self) -> Result<SavedState> {
        let step = |s: &ActedStep| {
            let mut j = transition_to_json(&s.transition);
            j.insert("log_prob".into(), s.log_prob.into());
            Json::Object(j)
        };
        let partial: Vec<Json> = self.partial.iter().map(|p| p.iter().map(step).collect()).collect();
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: json!({ "partial": partial }),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        self.partial = self.parse(&state)?;
        Ok(())
    }
}

impl RolloutAdder {
    fn parse(&self, state: &SavedState) -> Result<Vec<Vec<ActedStep>>> {
        let r = Reader {
            label: "(rollout adder)",
            state_space: &self.state_space,
            action_space: &self.action_space,
        };
        r.per_env(&state.meta, "partial", |j, at| {
            Ok(ActedStep {
                transition: r.transition(j, at)?,
                log_prob: r.number(&j["log_prob"], &format!("{at}.log_prob"))?,
            })
        })
    }
}
