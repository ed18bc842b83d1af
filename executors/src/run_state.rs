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

use crate::meta_reader::MetaReader;
use crate::run_tally::RunTally;

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
    /// The run's counts, episode returns and evaluation rounds (every call, every leg).
    pub(crate) tally: RunTally,
    /// Steps (or episodes) since the last update round: the update the run owes.
    pub(crate) since_update: u64,
    /// Each copy's exact position, taken when the state is saved.
    pub(crate) envs: Vec<EnvSnapshot>,
}

impl RunState {
    /// A run that has not started, over `copies` copies of `env_id`.
    pub(crate) fn new(env_id: &str, state_space: &Space, copies: usize) -> Self {
        RunState {
            env_id: env_id.into(),
            state_space: state_space.with_batch_rank(false),
            states: vec![],
            returns: vec![0.0; copies],
            tally: RunTally::default(),
            since_update: 0,
            envs: vec![],
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
        let read = MetaReader { meta: m, bad: &bad };
        let returns = read.finite_numbers("returns")?;
        if returns.len() != copies {
            return Err(bad(format!(
                "saved with {} environment copies, this run has {copies}; resume with the same --num-envs",
                returns.len()
            )));
        }
        let states = read
            .list("states")?
            .iter()
            .enumerate()
            .map(|(i, j)| {
                self.state_space
                    .value_from_json(j)
                    .map_err(|e| bad(format!("states[{i}]: {e}")))
            })
            .collect::<Result<Vec<Value>>>()?;
        let envs = read
            .list("envs")?
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
        Ok(RunState {
            env_id: self.env_id.clone(),
            state_space: self.state_space.clone(),
            states,
            returns,
            tally: RunTally::from_meta(m, &bad)?,
            since_update: read.count("since_update")?,
            envs,
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
            meta: {
                let mut meta = self.tally.to_meta();
                meta.insert("env_id".into(), self.env_id.clone().into());
                meta.insert("states".into(), states.into());
                meta.insert("returns".into(), json!(self.returns));
                meta.insert("since_update".into(), self.since_update.into());
                meta.insert("envs".into(), envs.into());
                meta.into()
            },
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
