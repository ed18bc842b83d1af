//! `VectorEnv`: many copies of an environment stepped together, sequentially or on a thread
//! pool, resetting each copy as its episode ends.

use rayon::prelude::*;
use rlgraph_spaces::{Space, Value};

use crate::env::{Env, EnvError, EnvSnapshot, Result};
use crate::env_group::{EnvGroup, VectorStep};

/// How a vector environment steps its copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stepping {
    /// One after another on the caller's thread.
    Sequential,
    /// In parallel on a thread pool of the vector's own, one thread per core.
    Threaded,
}

/// Copies of an environment stepped together with auto-reset, in groups: a group is one
/// environment, or many copies behind one call (the Gymnasium bridge's [`crate::gym::GymBatch`]).
pub struct VectorEnv {
    groups: Vec<Box<dyn EnvGroup>>,
    /// The index of each group's first copy.
    starts: Vec<usize>,
    /// The number of copies over all groups.
    copies: usize,
    /// Whether float actions are clipped into the action space's bounds before a step.
    clip_actions: bool,
    stepping: Stepping,
    /// The threaded mode's pool: its own, so that `RAYON_NUM_THREADS=1` (which keeps
    /// candle's small matrix products on one thread, where they are fastest) does not
    /// serialize the environments too.
    pool: Option<rayon::ThreadPool>,
}

impl VectorEnv {
    /// A vector of the given environments (at least one, all with equal spaces).
    pub fn new(envs: Vec<Box<dyn Env>>, stepping: Stepping) -> Result<Self> {
        let groups = envs.into_iter().map(|e| Box::new(e) as Box<dyn EnvGroup>).collect();
        VectorEnv::from_groups(groups, stepping)
    }

    /// A vector of the given groups of copies (at least one copy, all with equal spaces);
    /// threaded stepping runs the groups in parallel.
    pub fn from_groups(groups: Vec<Box<dyn EnvGroup>>, stepping: Stepping) -> Result<Self> {
        let nothing = || EnvError::Unknown {
            id: "VectorEnv".into(),
            reason: "needs at least one environment".into(),
        };
        let first = groups.first().ok_or_else(nothing)?;
        if let Some(other) = groups
            .iter()
            .find(|g| g.state_space() != first.state_space() || g.action_space() != first.action_space())
        {
            return Err(EnvError::Unknown {
                id: "VectorEnv".into(),
                reason: format!("{} and {} have different spaces", first.id(), other.id()),
            });
        }
        let starts: Vec<usize> = groups
            .iter()
            .scan(0, |next, g| {
                let start = *next;
                *next += g.len();
                Some(start)
            })
            .collect();
        let copies = groups.iter().map(|g| g.len()).sum();
        if copies == 0 {
            return Err(nothing());
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
        let clip_actions = first.action_space().has_float_bounds();
        Ok(VectorEnv {
            groups,
            starts,
            copies,
            clip_actions,
            stepping,
            pool,
        })
    }

    /// `copies` copies of the environment `id` ([`crate::make`]'s ids), copy `i` seeded
    /// `seed + i`. In-process environments step one after another on the caller's thread.
    /// Gymnasium's (`gym:` ids) run in `bridge_processes` bridge processes (by default one
    /// per core, never more than one per copy), each stepping its share of the copies with
    /// one message, the processes in parallel.
    pub fn make(id: &str, copies: usize, seed: u64, bridge_processes: Option<usize>) -> Result<Self> {
        let copies = copies.max(1);
        if !id.starts_with(crate::gym::GYM_PREFIX) {
            let envs = (0..copies)
                .map(|i| crate::make(id, seed.wrapping_add(i as u64)))
                .collect::<Result<Vec<_>>>()?;
            return VectorEnv::new(envs, Stepping::Sequential);
        }
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let processes = bridge_processes.unwrap_or(cores).clamp(1, copies);
        let mut groups: Vec<Box<dyn EnvGroup>> = Vec::with_capacity(processes);
        let mut first = 0;
        for p in 0..processes {
            // As even a split as there is: the first `copies % processes` take one more.
            let share = copies / processes + usize::from(p < copies % processes);
            let batch = crate::gym::GymBatch::from_id(id, share, seed.wrapping_add(first as u64))?;
            groups.push(Box::new(batch));
            first += share;
        }
        VectorEnv::from_groups(groups, Stepping::Threaded)
    }

    /// The number of copies.
    pub fn len(&self) -> usize {
        self.copies
    }

    /// Whether there are no copies (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.copies == 0
    }

    /// The environment's id.
    pub fn id(&self) -> &str {
        self.groups[0].id()
    }

    /// The space of observations.
    pub fn state_space(&self) -> &Space {
        self.groups[0].state_space()
    }

    /// The space of actions.
    pub fn action_space(&self) -> &Space {
        self.groups[0].action_space()
    }

    /// Whether every copy can give its exact position for a checkpoint.
    pub fn can_snapshot(&self) -> bool {
        self.groups.iter().all(|g| g.snapshots().is_some())
    }

    /// Resets every copy; copy `i` is seeded with `seed + i`.
    pub fn reset_all(&mut self, seed: Option<u64>) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.copies);
        for (group, &start) in self.groups.iter_mut().zip(&self.starts) {
            out.extend(group.reset_all(seed.map(|s| s.wrapping_add(start as u64)))?);
        }
        Ok(out)
    }

    /// Every copy's exact position, for a checkpoint; an error names the first copy that
    /// cannot give one.
    pub fn snapshots(&self) -> Result<Vec<EnvSnapshot>> {
        let mut out = Vec::with_capacity(self.copies);
        for group in &self.groups {
            out.extend(group.snapshots().ok_or_else(|| EnvError::BadState {
                env: group.id().to_string(),
                reason: "this environment cannot be checkpointed, so a run on it cannot resume exactly".into(),
            })?);
        }
        Ok(out)
    }

    /// Puts every copy back where `snapshots` found it; all or nothing: on error, the copies
    /// already restored are put back as they were.
    pub fn restore_snapshots(&mut self, snapshots: &[EnvSnapshot]) -> Result<()> {
        if snapshots.len() != self.copies {
            return Err(EnvError::BadState {
                env: "VectorEnv".into(),
                reason: format!("{} snapshots for {} copies", snapshots.len(), self.copies),
            });
        }
        let before = self.snapshots()?;
        for i in 0..self.groups.len() {
            let range = self.starts[i]..self.starts[i] + self.groups[i].len();
            if let Err(e) = self.groups[i].restore_snapshots(&snapshots[range]) {
                for (group, &start) in self.groups.iter_mut().zip(&self.starts).take(i) {
                    // Each was taken from this very group, so it restores.
                    let _ = group.restore_snapshots(&before[start..start + group.len()]);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Steps copy `i` with `actions[i]`; a copy whose episode ends is reset at once. Float
    /// actions are first clipped into the action space's bounds (Gymnasium's `ClipAction`):
    /// a Normal policy's samples may leave them, and the agent keeps what it sampled.
    pub fn step(&mut self, actions: &[Value]) -> Result<Vec<VectorStep>> {
        if actions.len() != self.copies {
            return Err(EnvError::BadAction {
                env: "VectorEnv".into(),
                action: format!("{} actions", actions.len()),
                expected: format!("one action for each of {} environments", self.copies),
            });
        }
        let clipped: Vec<Value>;
        let actions = match self.clip_actions {
            true => {
                let space = self.groups[0].action_space();
                clipped = actions.iter().map(|a| space.clip(a)).collect();
                &clipped[..]
            }
            false => actions,
        };
        // Each group's share of the actions, in order.
        let share = |group: &dyn EnvGroup, start: usize| &actions[start..start + group.len()];
        match (self.stepping, &self.pool) {
            (Stepping::Threaded, Some(pool)) if self.groups.len() > 1 => {
                let (groups, starts) = (&mut self.groups, &self.starts);
                let parts: Vec<Result<Vec<VectorStep>>> = pool.install(|| {
                    groups
                        .par_iter_mut()
                        .zip(starts.par_iter())
                        .map(|(group, &start)| {
                            let mut out = Vec::with_capacity(group.len());
                            group.step_into(share(group.as_ref(), start), &mut out).map(|()| out)
                        })
                        .collect()
                });
                let mut out = Vec::with_capacity(self.copies);
                for part in parts {
                    out.extend(part?);
                }
                Ok(out)
            }
            // An explicit loop into a vector of the right size: collecting into a
            // `Result<Vec<_>>` cannot know the length and regrows the vector 8 times at 256
            // copies.
            _ => {
                let mut out = Vec::with_capacity(self.copies);
                for (group, &start) in self.groups.iter_mut().zip(&self.starts) {
                    group.step_into(share(group.as_ref(), start), &mut out)?;
                }
                Ok(out)
            }
        }
    }
}
