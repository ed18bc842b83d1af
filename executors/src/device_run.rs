//! `DeviceRun`: what the device worker carries across calls and through checkpoints, so that a
//! run resumed from the command line continues exactly where it stopped: where every
//! device-resident copy stands, each copy's partial return, and the run's tally.

use std::collections::BTreeMap;

use rlgraph_core::{CoreError, HostState, Result, SavedState};
use rlgraph_tensor_envs::TensorEnvSnapshot;

use crate::meta_reader::MetaReader;
use crate::run_tally::RunTally;

/// A device worker's run so far; saved under `device_worker` in the agent's checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DeviceRun {
    /// The environment's id (a checkpoint resumes on the same environment only).
    pub(crate) env_id: String,
    /// How many copies step together.
    pub(crate) copies: usize,
    /// The run's counts, episode returns and evaluation rounds.
    pub(crate) tally: RunTally,
    /// Where every copy stood when the state was saved (none before the first step).
    pub(crate) position: Option<TensorEnvSnapshot>,
    /// Each copy's return so far in its current episode, when the state was saved.
    pub(crate) returns: Vec<f64>,
}

/// The name of the copies' physical state among the saved tensors.
const STATE: &str = "state";

fn bad(reason: String) -> CoreError {
    CoreError::Checkpoint {
        path: "(device worker)".into(),
        reason,
    }
}

impl DeviceRun {
    /// A run that has not started, over `copies` copies of `env_id`.
    pub(crate) fn new(env_id: &str, copies: usize) -> Self {
        DeviceRun {
            env_id: env_id.into(),
            copies,
            tally: RunTally::default(),
            position: None,
            returns: vec![0.0; copies],
        }
    }

    /// The state saved in `state`, checked against this run's environment and copies.
    fn parse(&self, state: &SavedState) -> Result<DeviceRun> {
        let m = &state.meta;
        let env_id = m["env_id"].as_str().unwrap_or_default();
        if env_id != self.env_id {
            return Err(bad(format!(
                "saved on environment {env_id:?}, this run is on {:?}",
                self.env_id
            )));
        }
        let read = MetaReader { meta: m, bad: &bad };
        let returns = read.finite_numbers("returns")?;
        if returns.len() != self.copies {
            return Err(bad(format!(
                "saved with {} device-resident copies, this run has {}; resume with the same --tensor-envs",
                returns.len(),
                self.copies
            )));
        }
        let position = match state.tensors.get(STATE) {
            None => None,
            Some(state) => {
                let (elapsed, cursors) = (read.counts("elapsed")?, read.counts("cursors")?);
                let rows = state.shape.first().copied().unwrap_or(0);
                if rows != self.copies || elapsed.len() != self.copies || cursors.len() != self.copies {
                    return Err(bad(format!(
                        "a state of {rows} rows, {} step counts and {} cursors for {} copies",
                        elapsed.len(),
                        cursors.len(),
                        self.copies
                    )));
                }
                Some(TensorEnvSnapshot {
                    state: state.clone(),
                    elapsed,
                    cursors,
                })
            }
        };
        Ok(DeviceRun {
            env_id: self.env_id.clone(),
            copies: self.copies,
            tally: RunTally::from_meta(m, &bad)?,
            position,
            returns,
        })
    }
}

impl HostState for DeviceRun {
    fn save_state(&self) -> Result<SavedState> {
        let mut meta = self.tally.to_meta();
        meta.insert("env_id".into(), self.env_id.clone().into());
        meta.insert("returns".into(), self.returns.clone().into());
        let mut tensors = BTreeMap::new();
        if let Some(position) = &self.position {
            meta.insert("elapsed".into(), position.elapsed.clone().into());
            meta.insert("cursors".into(), position.cursors.clone().into());
            tensors.insert(STATE.to_string(), position.state.clone());
        }
        Ok(SavedState {
            tensors,
            meta: meta.into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use rlgraph_core::HostTensor;

    #[test]
    fn a_run_round_trips_and_another_environment_or_copy_count_is_refused() {
        let mut run = DeviceRun::new("CartPole-v1", 2);
        run.tally.timesteps = 64;
        run.tally.episodes.push(12.0, 64);
        run.returns = vec![3.0, 5.0];
        run.position = Some(TensorEnvSnapshot {
            state: HostTensor::f32([2, 4], vec![0.5; 8]).unwrap(),
            elapsed: vec![3, 5],
            cursors: vec![2, 5],
        });
        let saved = run.save_state().unwrap();
        let mut back = DeviceRun::new("CartPole-v1", 2);
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back, run);
        let e = DeviceRun::new("Acrobot-v1", 2)
            .check_state(&saved)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"CartPole-v1\"") && e.contains("Acrobot-v1"), "{e}");
        let e = DeviceRun::new("CartPole-v1", 3)
            .check_state(&saved)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--tensor-envs"), "{e}");
        let mut short = saved.clone();
        short.meta["cursors"] = serde_json::json!([2]);
        let e = back.check_state(&short).unwrap_err().to_string();
        assert!(e.contains("1 cursors for 2 copies"), "{e}");
        // Nothing was loaded from the refused states.
        assert_eq!(back, run);
    }
}
