//! `EnvGroup`: copies of one environment that step together in one call. A lone [`Env`] is
//! a group of one; a [`crate::gym::GymBatch`] is many Gymnasium copies in one Python process,
//! so a vector step costs one message per process instead of one per copy.

use rlgraph_spaces::{Space, Value};

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

/// Copies of an environment stepped together, each resetting as its episode ends.
pub trait EnvGroup: Send {
    /// The number of copies.
    fn len(&self) -> usize;
    /// Whether the group has no copies.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The environment's id.
    fn id(&self) -> &str;
    /// The space of observations.
    fn state_space(&self) -> &Space;
    /// The space of actions.
    fn action_space(&self) -> &Space;
    /// Resets every copy; with a seed, copy `j` is seeded `seed + j`.
    fn reset_all(&mut self, seed: Option<u64>) -> Result<Vec<Value>>;
    /// Steps copy `j` with `actions[j]` (exactly `len()` actions), resetting each copy whose
    /// episode ends, and appends one [`VectorStep`] per copy to `out`.
    fn step_into(&mut self, actions: &[Value], out: &mut Vec<VectorStep>) -> Result<()>;
    /// Every copy's exact position, where the copies can give one.
    fn snapshots(&self) -> Option<Vec<EnvSnapshot>>;
    /// Puts copy `j` back where `snapshots[j]` was; on error every copy is as it was.
    fn restore_snapshots(&mut self, snapshots: &[EnvSnapshot]) -> Result<()>;
}

impl EnvGroup for Box<dyn Env> {
    fn len(&self) -> usize {
        1
    }

    fn id(&self) -> &str {
        self.as_ref().id()
    }

    fn state_space(&self) -> &Space {
        self.as_ref().state_space()
    }

    fn action_space(&self) -> &Space {
        self.as_ref().action_space()
    }

    fn reset_all(&mut self, seed: Option<u64>) -> Result<Vec<Value>> {
        Ok(vec![self.reset(seed)?])
    }

    fn step_into(&mut self, actions: &[Value], out: &mut Vec<VectorStep>) -> Result<()> {
        let [action] = actions else {
            return Err(EnvError::BadAction {
                env: self.as_ref().id().to_string(),
                action: format!("{} actions", actions.len()),
                expected: "one action".into(),
            });
        };
        let step = self.step(action)?;
        let reset_observation = match step.terminated || step.truncated {
            true => Some(self.reset(None)?),
            false => None,
        };
        out.push(VectorStep {
            step,
            reset_observation,
        });
        Ok(())
    }

    fn snapshots(&self) -> Option<Vec<EnvSnapshot>> {
        self.snapshot().map(|s| vec![s])
    }

    fn restore_snapshots(&mut self, snapshots: &[EnvSnapshot]) -> Result<()> {
        match snapshots {
            [one] => self.restore_snapshot(one),
            _ => Err(EnvError::BadState {
                env: self.as_ref().id().to_string(),
                reason: format!("{} snapshots for one copy", snapshots.len()),
            }),
        }
    }
}
