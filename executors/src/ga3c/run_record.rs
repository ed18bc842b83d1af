//! What a GA3C checkpoint holds beside the learner: the run's counts, its finished episodes'
//! returns and its evaluation rounds, so a resumed run counts on from where it stopped. (The
//! agents' environments start new episodes: threads decide what each held, so there is no
//! one state to save.)

use std::collections::BTreeMap;

use rlgraph_core::{CoreError, HostState, Result, SavedState};

use crate::meta_reader::MetaReader;
use crate::run_tally::RunTally;

/// A GA3C run's counts and results.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunRecord {
    /// Environment steps, updates, finished episodes' returns and evaluation rounds.
    pub tally: RunTally,
    /// Frames the updates learned from.
    pub trained_frames: u64,
}

fn bad(reason: String) -> CoreError {
    CoreError::Checkpoint {
        path: "(ga3c run)".into(),
        reason,
    }
}

impl RunRecord {
    fn parse(state: &SavedState) -> Result<RunRecord> {
        let record = RunRecord {
            tally: RunTally::from_meta(&state.meta, &bad)?,
            trained_frames: MetaReader {
                meta: &state.meta,
                bad: &bad,
            }
            .count("trained_frames")?,
        };
        if record.trained_frames > record.tally.timesteps {
            return Err(bad(format!(
                "{} frames trained of {} taken",
                record.trained_frames, record.tally.timesteps
            )));
        }
        Ok(record)
    }
}

impl HostState for RunRecord {
    fn save_state(&self) -> Result<SavedState> {
        let mut meta = self.tally.to_meta();
        meta.insert("trained_frames".into(), self.trained_frames.into());
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: meta.into(),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        RunRecord::parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        *self = RunRecord::parse(&state)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation::Evaluated;
    use serde_json::json;

    #[test]
    fn a_record_round_trips_and_nonsense_is_refused_by_key() {
        let mut episodes = crate::EpisodeLog::default();
        episodes.extend(&[9.0, 12.5], 6);
        let record = RunRecord {
            tally: RunTally {
                timesteps: 10,
                updates: 2,
                episodes,
                evaluations: vec![Evaluated {
                    timestep: 5,
                    mean_return: 20.0,
                }],
            },
            trained_frames: 8,
        };
        let saved = record.save_state().unwrap();
        let mut back = RunRecord::default();
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back, record);
        for (key, value, said) in [
            ("timesteps", json!(-1), "timesteps"),
            ("episode_returns", json!([1.0, "x"]), "episode_returns[1]"),
            ("episode_timesteps", json!([6]), "length 1 but episode_returns 2"),
            ("evaluations", json!([[1, null]]), "evaluations[0]"),
            ("trained_frames", json!(11), "11 frames trained of 10"),
        ] {
            let mut bad = saved.clone();
            bad.meta[key] = value;
            let e = back.check_state(&bad).unwrap_err().to_string();
            assert!(e.contains(said), "{key}: {e}");
        }
    }
}
