//! `VectorEnv`: many copies of an environment stepped together, sequentially or on a thread
//! pool, resetting each copy as its episode ends.

use rayon::prelude::*;
use rlgraph_spaces::Value;

use crate::env::{Env, EnvError, EnvSnapshot, Result, Step};

/// One environment's transition in a vector step.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorStep {
    /// The transition. When the episode ended, `step.observation` is its last observation.
    pub step: Step,
    /// The first observation of the next episode, when this one ended (auto-reset); the
    /// next action is taken from it.
    pub reset_observation: Option<Value>,
}

impl VectorStep {
    /// The observation the next action is taken from.
    pub fn next_observation(&self) -> &Value {
        self.reset_observation.as_ref().unwrap_or(&self.step.observation)
    }
}

/// How a vector environment steps its copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stepping {
    /// One after another on the caller's thread.
    Sequential,
    /// In parallel on a thread pool of the vector's own, one thread per core.
    Threaded,
}

/// Copies of an environment stepped together with auto-reset.
pub struct VectorEnv {
    envs: Vec<Box<dyn Env>>,
    stepping: Stepping,
    /// The threaded mode's pool: its own, so that `RAYON_NUM_THREADS=1` (which keeps
    /// candle's small matrix products on one thread, where they are fastest) does not
    /// serialize the environments too.
    pool: Option<rayon::ThreadPool>,
}

impl VectorEnv {
    /// A vector of the given environments (at least one, all with equal spaces).
    pub fn new(envs: Vec<Box<dyn Env>>, stepping: Stepping) -> Result<Self> {
        let first = envs.first().ok_or_else(|| EnvError::Unknown {
            id: "VectorEnv".into(),
            reason: "needs at least one environment".into(),
        })?;
        if let Some(other) = envs
            .iter()
            .find(|e| e.state_space() != first.state_space() || e.action_space() != first.action_space())
        {
            return Err(EnvError::Unknown {
                id: "VectorEnv".into(),
                reason: format!("{} and {} have different spaces", first.id(), other.id()),
            });
        }
        let pool = match stepping {
            Stepping::Sequential => None,
            Stepping::Threaded => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(std::thread::available_parallelism().map_or(1, usize::from))
                    .build()
                    .map_err(|e| EnvError::Unknown {
                        id: "VectorEnv".into(),
                        reason: format!("cannot start the stepping threads: {e}"),
                    })?,
            ),
        };
        Ok(VectorEnv { envs, stepping, pool })
    }

    /// The number of copies.
    pub fn len(&self) -> usize {
        self.envs.len()
    }

    /// Whether there are no copies (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.envs.is_empty()
    }

    /// The first copy (for its spaces and id).
    pub fn first(&self) -> &dyn Env {
        self.envs[0].as_ref()
    }

    /// Resets every copy; copy `i` is seeded with `seed + i`.
    pub fn reset_all(&mut self, seed: Option<u64>) -> Result<Vec<Value>> {
        self.envs
            .iter_mut()
            .enumerate()
            .map(|(i, e)| e.reset(seed.map(|s| s.wrapping_add(i as u64))))
            .collect()
    }

    /// Every copy's exact position, for a checkpoint; an error names the first copy that
    /// cannot give one.
    pub fn snapshots(&self) -> Result<Vec<EnvSnapshot>> {
        self.envs
            .iter()
            .map(|e| {
                e.snapshot().ok_or_else(|| EnvError::BadState {
                    env: e.id().to_string(),
                    reason: "this environment cannot be checkpointed, so a run on it cannot resume exactly".into(),
                })
            })
            .collect()
    }

    /// Puts every copy back where `snapshots` found it; all or nothing: on error, the copies
    /// already restored are put back as they were.
    pub fn restore_snapshots(&mut self, snapshots: &[EnvSnapshot]) -> Result<()> {
        if snapshots.len() != self.envs.len() {
            return Err(EnvError::BadState {
                env: "VectorEnv".into(),
                reason: format!("{} snapshots for {} copies", snapshots.len(), self.envs.len()),
            });
        }
        let before = self.snapshots()?;
        for (i, snapshot) in snapshots.iter().enumerate() {
            if let Err(e) = self.envs[i].restore_snapshot(snapshot) {
                for (env, old) in self.envs.iter_mut().zip(&before).take(i) {
                    // Each was taken from this very environment, so it restores.
                    let _ = env.restore_snapshot(old);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Steps copy `i` with `actions[i]`; a copy whose episode ends is reset at once.
    pub fn step(&mut self, actions: &[Value]) -> Result<Vec<VectorStep>> {
        if actions.len() != self.envs.len() {
            return Err(EnvError::BadAction {
                env: "VectorEnv".into(),
                action: format!("{} actions", actions.len()),
                expected: format!("one action for each of {} environments", self.envs.len()),
            });
        }
        let one = |(env, action): (&mut Box<dyn Env>, &Value)| -> Result<VectorStep> {
            let step = env.step(action)?;
            let reset_observation = match step.terminated || step.truncated {
                true => Some(env.reset(None)?),
                false => None,
            };
            Ok(VectorStep {
                step,
                reset_observation,
            })
        };
        match self.stepping {
            Stepping::Sequential => {
                // An explicit loop into a vector of the right size: collecting into a
                // `Result<Vec<_>>` cannot know the length and regrows the vector 8 times
                // at 256 copies.
                let mut out = Vec::with_capacity(self.envs.len());
                for pair in self.envs.iter_mut().zip(actions) {
                    out.push(one(pair)?);
                }
                Ok(out)
            }
            Stepping::Threaded => {
                let envs = &mut self.envs;
                match &self.pool {
                    Some(pool) => pool.install(|| envs.par_iter_mut().zip(actions.par_iter()).map(one).collect()),
                    None => envs.par_iter_mut().zip(actions.par_iter()).map(one).collect(),
                }
            }
        }
    }
}
