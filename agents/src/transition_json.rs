//! Transitions held outside the graph (rollouts, IMPALA's partial rollouts) in agent
//! checkpoints: the small fields as JSON, the states as tensors beside it (an Atari stack as
//! JSON numbers is some 300 KB, and a few hundred held steps overflowed the file's header);
//! values survive the trip exactly, and a bad entry is named by its place
//! (`per_env[0][3].reward`).

use std::collections::BTreeMap;

use rlgraph_core::convert::{host_to_value, value_to_host};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{CoreError, HostTensor, Result};
use serde_json::{json, Map, Value as Json};

use crate::agent::Transition;
use crate::carried_memory::StepMemory;

/// Reads the JSON of one checkpoint participant, naming it (`path`) in every error.
pub(crate) struct Reader<'a> {
    /// The participant's label, as checkpoint errors show it (`(rollout)`).
    pub label: &'a str,
    /// The space of states.
    pub state_space: &'a Space,
    /// The space of actions.
    pub action_space: &'a Space,
    /// The participant's saved tensors, where [`value_to_saved`] put values.
    pub tensors: &'a BTreeMap<String, HostTensor>,
}

/// `value` for a checkpoint: each leaf a tensor in `tensors` named `name` and its flat key,
/// and in the JSON only `{"tensors": name}`. A value with a text leaf stays JSON.
pub(crate) fn value_to_saved(value: &Value, name: &str, tensors: &mut BTreeMap<String, HostTensor>) -> Json {
    let leaves: Result<Vec<(String, HostTensor)>> = value
        .flatten()
        .into_iter()
        .map(|(key, leaf)| Ok((format!("{name}{key}"), value_to_host(leaf)?)))
        .collect();
    match leaves {
        Ok(leaves) => {
            tensors.extend(leaves);
            json!({ "tensors": name })
        }
        Err(_) => value.to_json(),
    }
}

/// `t` as a JSON object whose states are tensors in `tensors`, named from its place `at`;
/// callers add their own fields to it. With `next_state_at`, the next state is not stored
/// but names the tensors of an equal state saved as `next_state_at` (which
/// [`Reader::value`] reads like any other).
fn transition_to_json(
    t: &Transition,
    at: &str,
    next_state_at: Option<&str>,
    tensors: &mut BTreeMap<String, HostTensor>,
) -> Map<String, Json> {
    let state = value_to_saved(&t.state, &format!("{at}.state"), tensors);
    // A state with a text leaf stays JSON, and so would the one referred to.
    let next_state = match next_state_at {
        Some(name) if state.get("tensors").is_some() => json!({ "tensors": name }),
        _ => value_to_saved(&t.next_state, &format!("{at}.next_state"), tensors),
    };
    let j = json!({
        "state": state,
        "action": t.action.to_json(),
        "reward": t.reward,
        "terminated": t.terminated,
        "truncated": t.truncated,
        "next_state": next_state,
    });
    match j {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

/// One copy's held steps, in order, as JSON objects named `{at}[i]` (see
/// [`transition_to_json`]). A next state equal to the following step's state (every step's
/// but an episode's last) refers to that state's tensors instead of storing them again,
/// which halves an Atari rollout in a checkpoint; it reads back as an equal value.
pub(crate) fn steps_to_json<'t>(
    steps: impl IntoIterator<Item = &'t Transition>,
    at: &str,
    tensors: &mut BTreeMap<String, HostTensor>,
) -> Vec<Map<String, Json>> {
    let steps: Vec<&Transition> = steps.into_iter().collect();
    (0..steps.len())
        .map(|i| {
            let following = steps.get(i + 1).filter(|f| f.state == steps[i].next_state);
            let following_at = following.map(|_| format!("{at}[{}].state", i + 1));
            transition_to_json(steps[i], &format!("{at}[{i}]"), following_at.as_deref(), tensors)
        })
        .collect()
}

/// Adds what a recurrent actor acted from (`memory`, `start`) to a step's JSON object.
pub(crate) fn insert_step_memory(j: &mut Map<String, Json>, m: &StepMemory) {
    j.insert("memory".into(), json!(m.memory));
    j.insert("start".into(), m.start.into());
}

impl Reader<'_> {
    /// What a recurrent actor acted from at the step `j` (written by [`insert_step_memory`]),
    /// or `None` where the step has no memory; `at` prefixes the fields' names.
    pub fn step_memory(&self, j: &Json, at: &str) -> Result<Option<StepMemory>> {
        let Some(m) = j.get("memory") else {
            return Ok(None);
        };
        Ok(Some(StepMemory {
            memory: serde_json::from_value(m.clone()).map_err(|e| self.error(format!("{at}.memory: {e}")))?,
            start: j["start"]
                .as_bool()
                .ok_or_else(|| self.error(format!("{at}.start is not a bool")))?,
        }))
    }

    /// A checkpoint error of this participant.
    pub fn error(&self, reason: String) -> CoreError {
        CoreError::Checkpoint {
            path: self.label.into(),
            reason,
        }
    }

    /// The number at `j`, named `at` in the error.
    pub fn number(&self, j: &Json, at: &str) -> Result<f64> {
        j.as_f64().ok_or_else(|| self.error(format!("{at} is not a number")))
    }

    /// The list at `j`, named `at` in the error.
    pub fn list<'j>(&self, j: &'j Json, at: &str) -> Result<&'j Vec<Json>> {
        j.as_array()
            .ok_or_else(|| self.error(format!("{at} is missing or not a list")))
    }

    /// A value of `space` at `j` (JSON, or the marker [`value_to_saved`] wrote), named `at`
    /// in the error.
    pub fn value(&self, space: &Space, j: &Json, at: &str) -> Result<Value> {
        let Some(name) = j.get("tensors").and_then(Json::as_str) else {
            return space.value_from_json(j).map_err(|e| self.error(format!("{at}: {e}")));
        };
        let leaves = space
            .flatten()
            .into_iter()
            .map(|(key, leaf)| {
                let tensor = self
                    .tensors
                    .get(&format!("{name}{key}"))
                    .ok_or_else(|| self.error(format!("{at}: no tensor {name}{key} in the checkpoint")))?;
                let value =
                    host_to_value(tensor.clone(), leaf.dtype()).map_err(|e| self.error(format!("{at}: {e}")))?;
                Ok((key, value))
            })
            .collect::<Result<Vec<_>>>()?;
        let value = Value::unflatten(leaves).map_err(|e| self.error(format!("{at}: {e}")))?;
        // The check a JSON value gets: a tensor of the wrong shape or range is refused.
        space.check(&value).map_err(|e| self.error(format!("{at}: {e}")))?;
        Ok(value)
    }

    /// A transition written by [`transition_to_json`]; `at` prefixes the fields' names.
    pub fn transition(&self, j: &Json, at: &str) -> Result<Transition> {
        let flag = |k: &str| {
            j[k].as_bool()
                .ok_or_else(|| self.error(format!("{at}.{k} is not a flag")))
        };
        Ok(Transition {
            state: self.value(self.state_space, &j["state"], &format!("{at}.state"))?,
            action: self.value(self.action_space, &j["action"], &format!("{at}.action"))?,
            reward: self.number(&j["reward"], &format!("{at}.reward"))?,
            terminated: flag("terminated")?,
            truncated: flag("truncated")?,
            next_state: self.value(self.state_space, &j["next_state"], &format!("{at}.next_state"))?,
        })
    }

    /// `meta[key]`, a list per environment copy of entries, each read by `entry` (given the
    /// entry and its place, `key[e][i]`).
    pub fn per_env<T>(
        &self,
        meta: &Json,
        key: &str,
        mut entry: impl FnMut(&Json, &str) -> Result<T>,
    ) -> Result<Vec<Vec<T>>> {
        self.list(&meta[key], key)?
            .iter()
            .enumerate()
            .map(|(e, steps)| {
                self.list(steps, &format!("{key}[{e}]"))?
                    .iter()
                    .enumerate()
                    .map(|(i, j)| entry(j, &format!("{key}[{e}][{i}]")))
                    .collect()
            })
            .collect()
    }
}
