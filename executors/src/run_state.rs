//! `RunState`: what a worker carries across calls and through checkpoints, so that a run
//! resumed from the command line continues exactly where it stopped: every environment copy's
//! exact position, the observations the next actions are taken from, the partial returns,
//! the run's counters and every finished episode's return.

use std::collections::BTreeMap;

use rlgraph_core::rng_state::{rng_from_json, rng_to_json};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{CoreError, HostState, Result, SavedState};
use rlgraph_envs::EnvSnapshot;
use serde_json::{json, Value as Json};

use crate::evaluation::{rounds_from_json, rounds_to_json, Evaluated};

/// A worker's run so far; saved under `worker` in the agent's checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunState {
    /// The environment's id (a checkpoint resumes on the same environment only).
    pub(crate) env_id: String,
    /// The space of observations (to check restored ones).
    pub(crate) state_space: Space,
    /// The observation each copy acts on next (empty before the first reset).
    pub(crate) states: Vec<Value>,
    /// Each copy's return so far in its current episode.
    pub(crate) returns: Vec<f64>,
    /// Environment steps over the whole run (every call, every resumed leg).
    pub(crate) timesteps: u64,
    /// Every finished episode's return over the whole run, in order.
    pub(crate) episode_returns: Vec<f64>,
    /// Updates over the whole run.
    pub(crate) updates: u64,
    /// Steps (or episodes) since the last update round: the update the run owes.
    pub(crate) since_update: u64,
    /// Each copy's exact position, taken when the state is saved.
    pub(crate) envs: Vec<EnvSnapshot>,
    /// Every greedy evaluation round so far, in order.
    pub(crate) evaluations: Vec<Evaluated>,
}

impl RunState {
    /// A run that has not started, over `copies` copies of `env_id`.
    pub(crate) fn new(env_id: &str, state_space: &Space, copies: usize) -> Self {
        RunState {
            env_id: env_id.into(),
            state_space: state_space.with_batch_rank(false),
            states: vec![],
            returns: vec![0.0; copies],
            timesteps: 0,
            episode_returns: vec![],
            updates: 0,
            since_update: 0,
            envs: vec![],
            evaluations: vec![],
        }
    }

    fn error(reason: String) -> CoreError {
        CoreError::Checkpoint {
            path: "(worker)".into(),
            reason,
        }
    }

    /// The state saved in `state`, checked against this run's environment and copies.
    fn parse(&self, state: &SavedState) -> Result<RunState> {
        let m = &state.meta;
        let bad = RunState::error;
        let env_id = m["env_id"].as_str().unwrap_or_default();
        if env_id != self.env_id {
            return Err(bad(format!(
                "saved on environment {env_id:?}, this run is on {:?}",
                self.env_id
            )));
        }
        let copies = self.returns.len();
        let list = |k: &str| {
            m[k].as_array()
                .ok_or_else(|| bad(format!("{k} is missing or not a list")))
        };
        let count = |k: &str| {
            m[k].as_u64()
                .ok_or_else(|| bad(format!("{k} is missing or not a count")))
        };
        let finite_numbers = |k: &str| {
            list(k)?
                .iter()
                .enumerate()
                .map(|(i, j)| {
                    j.as_f64()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| bad(format!("{k}[{i}] is not a finite number")))
                })
                .collect::<Result<Vec<f64>>>()
        };
        let returns = finite_numbers("returns")?;
        if returns.len() != copies {
            return Err(bad(format!(
                "saved with {} environment copies, this run has {copies}; resume with the same --num-envs",
                returns.len()
            )));
        }
        let states = list("states")?
            .iter()
            .enumerate()
            .map(|(i, j)| {
                self.state_space
                    .value_from_json(j)
                    .map_err(|e| bad(format!("states[{i}]: {e}")))
            })
            .collect::<Result<Vec<Value>>>()?;
        let envs = list("envs")?
            .iter()
            .enumerate()
            .map(|(i, j)| snapshot_from_json(j).map_err(|e| bad(format!("envs[{i}]: {e}"))))
            .collect::<Result<Vec<EnvSnapshot>>>()?;
        // A run saved before its first step has neither.
        let started = !(states.is_empty() && envs.is_empty());
        if started && (states.len() != copies || envs.len() != copies) {
            return Err(bad(format!(
                "{} observations and {} environments saved for {copies} copies",
                states.len(),
                envs.len()
            )));
        }
        let episode_returns = finite_numbers("episode_returns")?;
        // Checkpoints written before evaluation existed have none.
        let evaluations = match &m["evaluations"] {
            Json::Null => vec![],
            _ => rounds_from_json(list("evaluations")?, bad)?,
        };
        Ok(RunState {
            env_id: self.env_id.clone(),
            state_space: self.state_space.clone(),
            states,
            returns,
            timesteps: count("timesteps")?,
            episode_returns,
            updates: count("updates")?,
            since_update: count("since_update")?,
            envs,
            evaluations,
        })
    }
}

fn snapshot_to_json(s: &EnvSnapshot) -> Json {
    json!({
        "state": s.state,
        "rng": s.rng.as_ref().map(rng_to_json),
        "episode_steps": s.episode_steps,
        "episode_over": s.episode_over,
    })
}

fn snapshot_from_json(j: &Json) -> std::result::Result<EnvSnapshot, String> {
    let state = j["state"]
        .as_array()
        .and_then(|a| a.iter().map(Json::as_f64).collect::<Option<Vec<f64>>>())
        .ok_or("state is not a list of numbers")?;
    let rng = match &j["rng"] {
        Json::Null => None,
        r => Some(rng_from_json(r)?),
    };
    Ok(EnvSnapshot {
        state,
        rng,
        episode_steps: j["episode_steps"].as_u64().ok_or("episode_steps is not a count")? as usize,
        episode_over: j["episode_over"].as_bool().ok_or("episode_over is not a flag")?,
    })
}

impl HostState for RunState {
    fn save_state(&self) -> Result<SavedState> {
        let states: Vec<Json> = self.states.iter().map(Value::to_json).collect();
        let envs: Vec<Json> = self.envs.iter().map(snapshot_to_json).collect();
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: json!({
                "env_id": self.env_id,
                "states": states,
                "returns": self.returns,
                "timesteps": self.timesteps,
                "episode_returns": self.episode_returns,
                "updates": self.updates,
                "since_update": self.since_update,
                "envs": envs,
                "evaluations": rounds_to_json(&self.evaluations),
            }),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        *self = self.parse(&state)?;
        Ok(())
    }
}
