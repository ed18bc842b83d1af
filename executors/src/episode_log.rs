//! `EpisodeLog`: a run's finished episodes, each with the step it ended at, as every layout
//! counts them, its checkpoints keep them and `episodes.csv` lists them.

use rlgraph_core::{CoreError, Result};
use serde_json::{json, Map, Value as Json};

use crate::meta_reader::MetaReader;

/// Every finished episode of a run, in order: its return, and the run's step count (over all
/// copies and legs) when its end was counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EpisodeLog {
    returns: Vec<f64>,
    // `None` for episodes a checkpoint from before this column existed holds: unknown, and
    // left blank rather than guessed.
    ends: Vec<Option<u64>>,
}

impl EpisodeLog {
    /// Every episode's return, in order.
    pub fn returns(&self) -> &[f64] {
        &self.returns
    }

    /// The step each episode ended at, where known, in order.
    pub fn ends(&self) -> &[Option<u64>] {
        &self.ends
    }

    /// Episodes finished.
    pub fn len(&self) -> usize {
        self.returns.len()
    }

    /// Whether no episode has finished.
    pub fn is_empty(&self) -> bool {
        self.returns.is_empty()
    }

    /// Adds an episode that ended with return `ret` when the run had taken `at` steps.
    pub fn push(&mut self, ret: f64, at: u64) {
        self.returns.push(ret);
        self.ends.push(Some(at));
    }

    /// Adds episodes that ended with these returns, all counted when the run had taken `at`
    /// steps.
    pub fn extend(&mut self, returns: &[f64], at: u64) {
        for r in returns {
            self.push(*r, at);
        }
    }

    /// The episodes as CSV, `episode,timestep,return` (numbered from 1; a blank timestep
    /// where it is unknown), as a run's `--out` keeps them in `episodes.csv`. Nothing in it
    /// depends on the clock, so a resumed run writes the same bytes as a straight one.
    pub fn csv(&self) -> String {
        let mut csv = String::from("episode,timestep,return\n");
        for (i, (r, at)) in self.returns.iter().zip(&self.ends).enumerate() {
            let at = at.map(|t| t.to_string()).unwrap_or_default();
            csv.push_str(&format!("{},{at},{r}\n", i + 1));
        }
        csv
    }

    /// Writes the log into checkpoint metadata, under `episode_returns` and `episode_timesteps`.
    pub(crate) fn to_meta(&self, meta: &mut Map<String, Json>) {
        meta.insert("episode_returns".into(), json!(self.returns));
        meta.insert("episode_timesteps".into(), json!(self.ends));
    }

    /// The log [`EpisodeLog::to_meta`] wrote into `meta`. A checkpoint from before the steps
    /// were kept has returns only; their steps stay unknown.
    pub(crate) fn from_meta(meta: &Json, bad: &impl Fn(String) -> CoreError) -> Result<EpisodeLog> {
        let read = MetaReader { meta, bad };
        let returns = read.finite_numbers("episode_returns")?;
        let ends = match &meta["episode_timesteps"] {
            Json::Null => vec![None; returns.len()],
            _ => read
                .list("episode_timesteps")?
                .iter()
                .enumerate()
                .map(|(i, j)| match j {
                    Json::Null => Ok(None),
                    _ => j
                        .as_u64()
                        .map(Some)
                        .ok_or_else(|| bad(format!("episode_timesteps[{i}] is not a count"))),
                })
                .collect::<Result<Vec<_>>>()?,
        };
        if ends.len() != returns.len() {
            return Err(bad(format!(
                "episode_timesteps has length {} but episode_returns {}",
                ends.len(),
                returns.len()
            )));
        }
        Ok(EpisodeLog { returns, ends })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(reason: String) -> CoreError {
        CoreError::Config {
            at: "meta".into(),
            reason,
        }
    }

    #[test]
    fn the_csv_lists_each_episode_with_its_step() {
        let mut log = EpisodeLog::default();
        log.push(21.0, 21);
        log.extend(&[9.5, -0.25], 40);
        assert_eq!(log.csv(), "episode,timestep,return\n1,21,21\n2,40,9.5\n3,40,-0.25\n");
        assert_eq!(log.returns(), [21.0, 9.5, -0.25]);
    }

    #[test]
    fn a_checkpoint_keeps_the_steps_and_an_older_one_leaves_them_blank() {
        let mut log = EpisodeLog::default();
        log.extend(&[1.0, 2.0], 7);
        let mut meta = Map::new();
        log.to_meta(&mut meta);
        assert_eq!(EpisodeLog::from_meta(&Json::Object(meta), &bad).unwrap(), log);
        let older = json!({"episode_returns": [3.0, 4.0]});
        let read = EpisodeLog::from_meta(&older, &bad).unwrap();
        assert_eq!(read.csv(), "episode,timestep,return\n1,,3\n2,,4\n");
    }

    #[test]
    fn steps_that_do_not_match_the_returns_are_refused_by_key() {
        for (meta, says) in [
            (
                json!({"episode_returns": [1.0], "episode_timesteps": [1, 2]}),
                "length 2 but episode_returns 1",
            ),
            (
                json!({"episode_returns": [1.0], "episode_timesteps": [-3]}),
                "episode_timesteps[0]",
            ),
            (
                json!({"episode_returns": [1.0], "episode_timesteps": "x"}),
                "episode_timesteps is",
            ),
        ] {
            let e = EpisodeLog::from_meta(&meta, &bad).unwrap_err().to_string();
            assert!(e.contains(says), "{meta}: {e}");
        }
    }
}
