//! `RolloutAdder`: IMPALA's adder. It turns each environment copy's stream of acted steps
//! (the transition and the behaviour policy's log-likelihood of its action) into rollouts of
//! a fixed length, time first, bootstrapped from the last next state. A truncated episode
//! counts as terminal inside a rollout (its next state is not kept); rollouts run across
//! episode ends. A recurrent actor's rollout also keeps the memory its first step was acted
//! from and where episodes start, so the learner can unroll it as the actor stepped.

use std::borrow::Borrow;
use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Space, Value};
use rlgraph_core::{CoreError, HostState, Result, SavedState};
use serde_json::{json, Value as Json};

use crate::agent::Transition;
use crate::batch::{flag_column, stack};
use crate::carried_memory::StepMemory;
use crate::transition_json::{insert_step_memory, steps_to_json, Reader};
use rlgraph_components::layers::memory_space;

/// One acted step: the transition, the behaviour policy's log-likelihood of its action and,
/// for a recurrent actor, the memory it acted from.
#[derive(Clone, Debug, PartialEq)]
struct ActedStep {
    transition: Transition,
    log_prob: f64,
    memory: Option<StepMemory>,
}

/// Partial rollouts per environment copy.
pub struct RolloutAdder {
    rollout_length: usize,
    partial: Vec<Vec<ActedStep>>,
    record_space: Space,
    state_space: Space,
    action_space: Space,
    /// A recurrent actor's LSTM units.
    memory_units: Option<usize>,
}

impl RolloutAdder {
    /// An adder of rollouts of `rollout_length` steps over these spaces (unbatched); with
    /// `memory_units`, of a recurrent actor with an LSTM of that many units.
    pub fn new(
        rollout_length: usize,
        state_space: &Space,
        action_space: &Space,
        memory_units: Option<usize>,
    ) -> Result<Self> {
        let (state, action) = (state_space.with_batch_rank(false), action_space.with_batch_rank(false));
        let over_time = |s: &Space| s.with_time_rank(true, false);
        let scalar = |s: Space| over_time(&s);
        let mut fields = vec![
            ("states", over_time(&state)),
            ("actions", over_time(&action)),
            ("behaviour_log_probs", scalar(FloatBox::new(Vec::<usize>::new()).into())),
            ("rewards", scalar(FloatBox::new(Vec::<usize>::new()).into())),
            ("terminals", scalar(BoolBox::new(Vec::<usize>::new()).into())),
            ("bootstrap_state", state.clone()),
        ];
        if let Some(units) = memory_units {
            fields.push(("memory", memory_space(units).with_batch_rank(false)));
            fields.push(("starts", scalar(BoolBox::new(Vec::<usize>::new()).into())));
        }
        Ok(RolloutAdder {
            rollout_length: rollout_length.max(1),
            partial: vec![],
            record_space: Space::dict(fields)?,
            state_space: state,
            action_space: action,
            memory_units,
        })
    }

    /// The space of one rollout record.
    pub fn record_space(&self) -> &Space {
        &self.record_space
    }

    /// Adds a step of copy `env_id` acted with log-likelihood `log_prob` (and, for a recurrent
    /// actor, from `memory`); returns the rollout it completes, if it completes one.
    pub fn push(
        &mut self,
        env_id: usize,
        transition: Transition,
        log_prob: f64,
        memory: Option<StepMemory>,
    ) -> Result<Option<Value>> {
        if memory.is_some() != self.memory_units.is_some() {
            return Err(CoreError::Config {
                at: format!("rollout-adder/push(env_id {env_id})"),
                reason: match memory {
                    Some(_) => "a step with an LSTM memory, for an adder of a memoryless actor".into(),
                    None => "a recurrent actor's step needs the memory it acted from".into(),
                },
            });
        }
        if self.partial.len() <= env_id {
            self.partial.resize_with(env_id + 1, Vec::new);
        }
        self.partial[env_id].push(ActedStep {
            transition,
            log_prob,
            memory,
        });
        if self.partial[env_id].len() < self.rollout_length {
            return Ok(None);
        }
        let steps = std::mem::take(&mut self.partial[env_id]);
        record(&steps).map(Some)
    }

    /// Copy `env_id`'s environment restarted without a terminal step (a resumed run whose
    /// environments could not be restored): the latest step of its partial rollout counts as
    /// truncated, which a rollout treats as terminal.
    pub fn cut(&mut self, env_id: usize) {
        if let Some(last) = self.partial.get_mut(env_id).and_then(|p| p.last_mut()) {
            last.transition.truncated |= !last.transition.terminated;
        }
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
    let memories: Option<Vec<StepMemory>> = steps.iter().map(|s| s.memory.clone()).collect();
    rollout_record(&transitions, &log_probs, memories.as_deref())
}

/// IMPALA's record of one rollout: its steps (time first) with the behaviour policy's
/// log-likelihood of each action, bootstrapped from the last next state. A truncated step
/// counts as terminal. With `memories` (what a recurrent actor acted from at each step), the
/// record also holds the first step's `memory` (the Tuple `(c, h)`) and every step's `starts`.
/// Records stacked batch-first are what `ImpalaLearner` learns from.
pub fn rollout_record<T: Borrow<Transition>>(
    transitions: &[T],
    log_probs: &[f64],
    memories: Option<&[StepMemory]>,
) -> Result<Value> {
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
    let mut record = BTreeMap::from([
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
    ]);
    if let Some(memories) = memories {
        let first = memories
            .first()
            .filter(|_| memories.len() == n)
            .ok_or_else(|| bad(format!("{n} steps but {} memories", memories.len())))?;
        let width = first.memory.len();
        if width == 0 || width % 2 != 0 || memories.iter().any(|m| m.memory.len() != width) {
            return Err(bad(format!(
                "every step's memory must hold c and h of one size, got {:?} floats",
                memories.iter().map(|m| m.memory.len()).collect::<Vec<_>>()
            )));
        }
        // One sequence's memory: the learner's stacking adds the batch rank.
        let (c, h) = first.memory.split_at(first.memory.len() / 2);
        let parts = vec![
            Value::Float32(Array::new([c.len()], c.to_vec())?),
            Value::Float32(Array::new([h.len()], h.to_vec())?),
        ];
        record.insert("memory".into(), Value::Tuple(parts));
        let starts: Vec<bool> = memories.iter().map(|m| m.start).collect();
        record.insert("starts".into(), flag_column(&starts)?);
    }
    Ok(Value::Dict(record))
}

/// Partial rollouts ride in checkpoints (states as tensors, the rest as JSON).
impl HostState for RolloutAdder {
    fn save_state(&self) -> Result<SavedState> {
        let mut tensors = BTreeMap::new();
        let mut partial = Vec::with_capacity(self.partial.len());
        for (e, steps) in self.partial.iter().enumerate() {
            let mut held = Vec::with_capacity(steps.len());
            let saved = steps_to_json(
                steps.iter().map(|s| &s.transition),
                &format!("partial[{e}]"),
                &mut tensors,
            );
            for (mut j, s) in saved.into_iter().zip(steps) {
                j.insert("log_prob".into(), s.log_prob.into());
                if let Some(m) = &s.memory {
                    insert_step_memory(&mut j, m);
                }
                held.push(Json::Object(j));
            }
            partial.push(Json::Array(held));
        }
        Ok(SavedState {
            tensors,
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
            tensors: &state.tensors,
        };
        r.per_env(&state.meta, "partial", |j, at| {
            let memory = r.step_memory(j, at)?;
            if let Some(m) = &memory {
                if Some(m.memory.len()) != self.memory_units.map(|u| 2 * u) {
                    return Err(r.error(format!(
                        "{at}.memory holds {} floats; this actor's LSTM memory holds {:?}",
                        m.memory.len(),
                        self.memory_units.map(|u| 2 * u)
                    )));
                }
            } else if self.memory_units.is_some() {
                return Err(r.error(format!("{at} has no memory; this actor is recurrent")));
            }
            Ok(ActedStep {
                transition: r.transition(j, at)?,
                log_prob: r.number(&j["log_prob"], &format!("{at}.log_prob"))?,
                memory,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_steps::{spaces, step};

    #[test]
    fn a_cut_makes_the_partial_rollouts_latest_step_terminal() {
        let (floats, ints) = spaces();
        let mut adder = RolloutAdder::new(3, &floats, &ints, None).unwrap();
        adder.push(0, step(0), 0.0, None).unwrap();
        adder.push(0, step(1), 0.0, None).unwrap();
        adder.cut(0);
        adder.cut(5);
        let record = adder.push(0, step(2), 0.0, None).unwrap().unwrap();
        let Value::Dict(d) = record else { panic!("{record:?}") };
        assert_eq!(d["terminals"], flag_column(&[false, true, false]).unwrap());
        // A memoryless adder refuses a memory, a recurrent one needs it.
        let memory = StepMemory {
            memory: vec![0.0; 2],
            start: true,
        };
        assert!(adder.push(0, step(3), 0.0, Some(memory)).is_err());
        let mut recurrent = RolloutAdder::new(3, &floats, &ints, Some(1)).unwrap();
        let err = recurrent.push(0, step(0), 0.0, None).unwrap_err().to_string();
        assert!(err.contains("memory"), "{err}");
    }
}
