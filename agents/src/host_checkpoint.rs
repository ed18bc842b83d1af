//! The checkpoint of an agent without tensors (the random agent, an algorithm of one's own
//! that learns on the host): one JSON file `{"format", "agent", "host"}` holding the agent's
//! own state and the executor's extra states, written atomically and restored all or nothing.

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph_core::host_state::{check_each, load_checked};
use rlgraph_core::{CoreError, HostState, Result, SavedState};
use serde_json::{json, Value as Json};

/// Writes `agent` (the agent's own state, as JSON) and the extra states' JSON to `path` as a
/// checkpoint of `format` (a name of the agent's own, so another file is refused). An extra
/// state with tensors is refused by name: this checkpoint holds JSON only.
pub fn save_host_checkpoint(path: &Path, format: &str, agent: Json, extra: &[(&str, &dyn HostState)]) -> Result<()> {
    let mut host = serde_json::Map::new();
    for (name, state) in extra {
        let saved = state.save_state()?;
        if !saved.tensors.is_empty() {
            return Err(failed(
                path,
                format!("host state {name:?} has tensors, which a checkpoint of JSON cannot hold"),
            ));
        }
        host.insert(name.to_string(), saved.meta);
    }
    let text = json!({"format": format, "agent": agent, "host": host});
    rlgraph_core::write_atomically(path, text.to_string().as_bytes()).map_err(|e| failed(path, e.to_string()))
}

/// A checkpoint [`save_host_checkpoint`] wrote, read back.
pub struct HostCheckpoint {
    path: String,
    /// The agent's own state, as it was saved.
    pub agent: Json,
    host: Json,
}

impl HostCheckpoint {
    /// Reads the checkpoint at `path`, refusing a file of another format. `legacy` reads a
    /// file without a format as the agent's state alone (a format before this one).
    pub fn read(path: &Path, format: &str, legacy: bool) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| failed(path, e.to_string()))?;
        let file: Json =
            serde_json::from_str(&text).map_err(|e| failed(path, format!("not a {format} checkpoint: {e}")))?;
        let (agent, host) = match file.get("format") {
            Some(f) if f == format => (file["agent"].clone(), file["host"].clone()),
            Some(f) => return Err(failed(path, format!("format {f}, not {format:?}"))),
            None if legacy => (file, Json::Null),
            None => return Err(failed(path, format!("not a {format} checkpoint (no format)"))),
        };
        Ok(HostCheckpoint {
            path: path.display().to_string(),
            agent,
            host,
        })
    }

    /// Checks every extra state against what the checkpoint holds for it, then loads them
    /// all: a refused state leaves every one as it was. Check the agent's own state before
    /// calling this, and set it after, so the whole restore is all or nothing.
    pub fn load_extra(&self, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let json_state = |meta: Json| SavedState {
            tensors: BTreeMap::new(),
            meta,
        };
        let bad = |reason: String| CoreError::Checkpoint {
            path: self.path.clone(),
            reason,
        };
        let loads = check_each(extra, |name| Some(json_state(self.host.get(name)?.clone())), bad)?;
        load_checked(extra, loads)
    }
}

fn failed(path: &Path, reason: String) -> CoreError {
    CoreError::Checkpoint {
        path: path.display().to_string(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::Counters;

    #[test]
    fn a_checkpoint_round_trips_refuses_other_formats_and_restores_all_or_nothing() {
        let dir = std::env::temp_dir().join(format!("rlgraph-host-checkpoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("checkpoint.json");
        let mut saved = Counters::new(7);
        saved.timesteps = 123;
        save_host_checkpoint(
            &path,
            "test agent 1",
            json!({"weights": [1.5, -2.0]}),
            &[("run", &saved)],
        )
        .unwrap();

        let file = HostCheckpoint::read(&path, "test agent 1", false).unwrap();
        assert_eq!(file.agent, json!({"weights": [1.5, -2.0]}));
        let mut run = Counters::new(0);
        file.load_extra(&mut [("run", &mut run)]).unwrap();
        assert_eq!(run.timesteps, 123);

        let e = HostCheckpoint::read(&path, "other agent 1", false)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("\"test agent 1\"") && e.contains("other agent 1"), "{e}");
        // A state the file lacks refuses the restore, and the state it has is left alone.
        let (mut run, mut other) = (Counters::new(0), Counters::new(0));
        let e = file
            .load_extra(&mut [("run", &mut run), ("evaluation", &mut other)])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("evaluation"), "{e}");
        assert_eq!(run.timesteps, 0);
        // A file without a format is the agent's state alone only where the agent says so.
        std::fs::write(&path, r#"{"timesteps": 1}"#).unwrap();
        assert!(HostCheckpoint::read(&path, "test agent 1", false).is_err());
        assert_eq!(
            HostCheckpoint::read(&path, "test agent 1", true).unwrap().agent["timesteps"],
            1
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
