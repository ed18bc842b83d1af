//! `GymBatch`: many copies of a Gymnasium environment in one Python process, stepped by one
//! message, as an [`EnvGroup`].

use rlgraph_spaces::{Space, Value};
use serde_json::{json, Map, Value as Json};

use crate::env::{bad_action, EnvError, EnvSnapshot, Result, Step};
use crate::env_group::EnvGroup;
use crate::env_group::VectorStep;
use crate::gym::gym_env::{decode, observation_bytes, parse_id, Started};
use crate::gym::process::{Process, Reply};

/// Copies of a Gymnasium environment in one bridge process: a vector step is one request
/// and one reply for all of them (as SB3's `DummyVecEnv` steps its copies in one process),
/// where [`crate::gym::GymEnv`] pays a round trip per copy and step.
///
/// Copy `j` of a batch made with seed `s` is seeded `s + j` on its first reset, as
/// `make(id, s + j)` would be; every later episode continues the copy's own generator.
pub struct GymBatch {
    id: String,
    state_space: Space,
    action_space: Space,
    process: Process,
    copies: usize,
    /// The bytes of one observation on the bridge.
    observation_bytes: usize,
    /// The seed of the first reset's copy 0, when that reset brings none.
    pending_seed: Option<u64>,
    /// Whether the copies have been reset (a step before that is refused).
    started: bool,
}

impl GymBatch {
    /// Parses `gym:ID?key=value&...` as [`crate::gym::GymEnv::from_id`] does and starts
    /// `copies` copies in one process of the Python [`crate::gym::python`] names.
    pub fn from_id(id: &str, copies: usize, seed: u64) -> Result<Self> {
        GymBatch::from_id_with_python(&crate::gym::python(), id, copies, seed)
    }

    /// [`GymBatch::from_id`] with the Python interpreter `python`.
    pub fn from_id_with_python(python: &str, id: &str, copies: usize, seed: u64) -> Result<Self> {
        if copies == 0 {
            return Err(EnvError::Unknown {
                id: id.into(),
                reason: "a batch needs at least one copy".into(),
            });
        }
        let (gym_id, kwargs): (String, Map<String, Json>) = parse_id(id)?;
        let started = Started::new(python, &gym_id, kwargs, copies)?;
        let observation_bytes = observation_bytes(&started.state_space).map_err(|reason| EnvError::Unknown {
            id: started.id.clone(),
            reason,
        })?;
        Ok(GymBatch {
            id: started.id,
            state_space: started.state_space,
            action_space: started.action_space,
            process: started.process,
            copies,
            observation_bytes,
            pending_seed: Some(seed),
            started: false,
        })
    }

    fn failed(&self, what: &str, reason: String) -> EnvError {
        EnvError::Bridge {
            env: self.id.clone(),
            what: what.into(),
            reason,
        }
    }

    fn call(&mut self, what: &str, request: &Json) -> Result<Reply> {
        let reply = self.process.call(request);
        reply.map_err(|reason| self.failed(what, reason))
    }

    /// The `n` observations back to back in `bytes`, which must hold exactly that many.
    fn observations(&self, what: &str, bytes: &[u8], n: usize) -> Result<Vec<Value>> {
        if bytes.len() != n * self.observation_bytes {
            return Err(self.failed(
                what,
                format!(
                    "a reply of {} bytes where {n} observations of {} bytes were due",
                    bytes.len(),
                    self.observation_bytes
                ),
            ));
        }
        // A space of no bytes (an empty Tuple) still has one observation per copy.
        let chunks: Vec<&[u8]> = match self.observation_bytes {
            0 => vec![&[][..]; n],
            size => bytes.chunks(size).collect(),
        };
        chunks
            .into_iter()
            .map(|chunk| decode(&self.state_space, chunk).map_err(|reason| self.failed(what, reason)))
            .collect()
    }
}

/// The `key` list of a step reply, one entry per copy, each read by `read`.
fn per_copy<T>(header: &Json, key: &str, copies: usize, read: fn(&Json) -> Option<T>) -> Option<Vec<T>> {
    let list = header.get(key)?.as_array()?;
    (list.len() == copies).then_some(())?;
    list.iter().map(read).collect()
}

impl EnvGroup for GymBatch {
    fn len(&self) -> usize {
        self.copies
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    fn reset_all(&mut self, seed: Option<u64>) -> Result<Vec<Value>> {
        let seed = seed.or(self.pending_seed.take());
        let seeds: Option<Vec<u64>> = seed.map(|s| (0..self.copies as u64).map(|j| s.wrapping_add(j)).collect());
        let reply = self.call("reset", &json!({"op": "reset_many", "seeds": seeds}))?;
        let observations = self.observations("reset", &reply.payload, self.copies)?;
        self.started = true;
        Ok(observations)
    }

    fn step_into(&mut self, actions: &[Value], out: &mut Vec<VectorStep>) -> Result<()> {
        if !self.started {
            return Err(EnvError::EpisodeOver { env: self.id.clone() });
        }
        if actions.len() != self.copies {
            return Err(EnvError::BadAction {
                env: self.id.clone(),
                action: format!("{} actions", actions.len()),
                expected: format!("one action for each of {} copies", self.copies),
            });
        }
        if let Some(bad) = actions.iter().find(|a| !self.action_space.contains(a)) {
            return Err(bad_action(&self.id, &self.action_space, bad));
        }
        let actions: Vec<Json> = actions.iter().map(Value::to_json).collect();
        let reply = self.call("step", &json!({"op": "step_many", "actions": actions}))?;
        let header = &reply.header;
        let (Some(rewards), Some(terminated), Some(truncated)) = (
            per_copy(header, "rewards", self.copies, Json::as_f64),
            per_copy(header, "terminated", self.copies, Json::as_bool),
            per_copy(header, "truncated", self.copies, Json::as_bool),
        ) else {
            return Err(self.failed(
                "step",
                format!(
                    "a step reply without a reward and flags for each of {} copies",
                    self.copies
                ),
            ));
        };
        let ended = terminated.iter().zip(&truncated).filter(|(t, u)| **t || **u).count();
        let split = self.copies * self.observation_bytes;
        let (after, restarts) = reply.payload.split_at(split.min(reply.payload.len()));
        let mut after = self.observations("step", after, self.copies)?.into_iter();
        let mut restarts = self.observations("step", restarts, ended)?.into_iter();
        for j in 0..self.copies {
            let done = terminated[j] || truncated[j];
            let (Some(observation), reset_observation) = (after.next(), done.then(|| restarts.next()).flatten()) else {
                return Err(self.failed("step", "fewer observations than copies".into()));
            };
            out.push(VectorStep {
                step: Step {
                    observation,
                    reward: rewards[j],
                    terminated: terminated[j],
                    truncated: truncated[j],
                },
                reset_observation,
            });
        }
        Ok(())
    }

    fn snapshots(&self) -> Option<Vec<EnvSnapshot>> {
        None
    }

    fn restore_snapshots(&mut self, _snapshots: &[EnvSnapshot]) -> Result<()> {
        Err(EnvError::BadState {
            env: self.id.clone(),
            reason: "environments in the Gymnasium bridge cannot be restored from a checkpoint".into(),
        })
    }
}
