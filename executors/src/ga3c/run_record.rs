//! What a GA3C checkpoint holds beside the learner: the run's counts, its finished episodes'
//! returns and its evaluation rounds, so a resumed run counts on from where it stopped. (The
//! agents' environments start new episodes: threads decide what each held, so there is no
//! one state to save.)

use std::collections::BTreeMap;

use rlgraph_core::{CoreError, HostState, Result, SavedState};
use serde_json::json;

use crate::evaluation::{rounds_from_json, rounds_to_json, Evaluated};

/// A GA3C run's counts and results.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunRecord {
    /// Environment steps taken.
    pub frames: u64,
    /// Updates done.
    pub trainings: u64,
    /// Frames the updates learned from.
    pub trained_frames: u64,
    /// Finished episodes' returns, in order.
    pub episodes: Vec<f64>,
    /// Evaluation rounds played.
    pub evaluations: Vec<Evaluated>,
}

fn bad(reason: String) -> CoreError {
    CoreError::Checkpoint {
        path: "(ga3c run)".into(),
        reason,
    }
}

impl RunRecord {
    fn parse(state: &SavedState) -> Result<RunRecord> {
        let m = &state.meta;
        let count = |k: &str| {
            m[k].as_u64()
                .ok_or_else(|| bad(format!("{k} is missing or not a count")))
        };
        let list = |k: &str| {
            m[k].as_array()
                .ok_or_else(|| bad(format!("{k} is missing or not a list")))
        };
        let episodes = list("episodes")?
            .iter()
            .enumerate()
            .map(|(i, j)| {
                j.as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| bad(format!("episodes[{i}] is not a finite number")))
            })
            .collect::<Result<Vec<f64>>>()?;
        let evaluations = rounds_from_json(list("evaluations")?, bad)?;
        let record = RunRecord {
            frames: count("frames")?,
            trainings: count("trainings")?,
            trained_frames: count("trained_frames")?,
            episodes,
            evaluations,
        };
        if record.trained_frames > record.frames {
            return Err(bad(format!(
                "{} frames trained of {} taken",
                record.trained_frames, record.frames
            )));
        }
        Ok(record)
    }
}

impl HostState for RunRecord {
    fn save_state(&self) -> Result<SavedState> {
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: json!({
                "frames": self.frames,
                "trainings": self.trainings,
                "trained_frames": self.trained_frames,
                "episodes": self.episodes,
                "evaluations": rounds_to_json(&self.evaluations),
            }),
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

    #[test]
    fn a_record_round_trips_and_nonsense_is_refused_by_key() {
        let record = RunRecord {
            frames: 10,
            trainings: 2,
            trained_frames: 8,
            episodes: vec![9.0, 12.5],
            evaluations: vec![Evaluated {
                timestep: 5,
                mean_return: 20.0,
            }],
        };
        let saved = record.save_state().unwrap();
        let mut back = RunRecord::default();
        back.load_state(saved.clone()).unwrap();
        assert_eq!(back, record);
        for (key, value, said) in [
            ("frames", json!(-1), "frames"),
            ("episodes", json!([1.0, "x"]), "episodes[1]"),
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
