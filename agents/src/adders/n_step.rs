//! `NStepBuffer`: per-environment buffers that turn single steps into n-step transitions
//! (`R = r_t + gamma r_{t+1} + ... + gamma^{n-1} r_{t+n-1}`, next state `s_{t+n}`), as
//! Ape-X and n-step DQN need; with n = 1 transitions pass straight through.

use std::collections::{BTreeMap, VecDeque};

use rlgraph_core::spaces::Space;
use rlgraph_core::{HostState, Result, SavedState};
use serde_json::{json, Value as Json};

use crate::agent::Transition;
use crate::transition_json::{steps_to_json, Reader};

/// Pending steps per environment copy.
#[derive(Clone, Debug)]
pub struct NStepBuffer {
    n: usize,
    discount: f64,
    pending: Vec<VecDeque<Transition>>,
    /// The spaces pending steps are checked against when restored from a checkpoint.
    state_space: Space,
    action_space: Space,
}

impl NStepBuffer {
    /// Buffers for n-step returns with discount `discount`, over steps of these spaces.
    pub fn new(n: usize, discount: f64, state_space: &Space, action_space: &Space) -> Self {
        NStepBuffer {
            n: n.max(1),
            discount,
            pending: vec![],
            state_space: state_space.with_batch_rank(false),
            action_space: action_space.with_batch_rank(false),
        }
    }

    /// Drops every pending step (between episodes, or on an agent reset).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// Copy `env_id`'s environment restarted without a terminal step (a resumed run whose
    /// environments could not be restored): its pending steps are dropped, as a truncation
    /// drops them, so no n-step return reaches across the restart.
    pub fn cut(&mut self, env_id: usize) {
        if let Some(queue) = self.pending.get_mut(env_id) {
            queue.clear();
        }
    }

    /// Adds a step of copy `env_id`; returns the transitions it completes.
    ///
    /// A terminal flushes every pending step with its shorter return (the bootstrap is masked
    /// anyway). A truncation drops the pending steps that lack `n` rewards, rather than
    /// bootstrap them with the wrong power of gamma.
    pub fn push(&mut self, env_id: usize, t: Transition) -> Vec<Transition> {
        if self.pending.len() <= env_id {
            self.pending.resize_with(env_id + 1, VecDeque::new);
        }
        let (terminated, truncated) = (t.terminated, t.truncated);
        let queue = &mut self.pending[env_id];
        queue.push_back(t);
        let mut out = vec![];
        if queue.len() == self.n {
            out.push(combine(queue, self.discount));
            queue.pop_front();
        }
        if terminated {
            while !queue.is_empty() {
                out.push(combine(queue, self.discount));
                queue.pop_front();
            }
        } else if truncated {
            queue.clear();
        }
        out
    }
}

/// Pending steps ride in agent checkpoints (states as tensors), so that a resumed run completes the same
/// n-step transitions as the uninterrupted one.
impl HostState for NStepBuffer {
    fn save_state(&self) -> Result<SavedState> {
        let mut tensors = BTreeMap::new();
        let mut pending = Vec::with_capacity(self.pending.len());
        for (e, queue) in self.pending.iter().enumerate() {
            let steps: Vec<Json> = steps_to_json(queue, &format!("pending[{e}]"), &mut tensors)
                .into_iter()
                .map(Json::Object)
                .collect();
            pending.push(Json::Array(steps));
        }
        Ok(SavedState {
            tensors,
            meta: json!({ "pending": pending }),
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        self.parse(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        self.pending = self.parse(&state)?;
        Ok(())
    }
}

impl NStepBuffer {
    fn parse(&self, state: &SavedState) -> Result<Vec<VecDeque<Transition>>> {
        let r = Reader {
            label: "(n-step buffer)",
            state_space: &self.state_space,
            action_space: &self.action_space,
            tensors: &state.tensors,
        };
        let per_env = r.per_env(&state.meta, "pending", |j, at| r.transition(j, at))?;
        // A full queue is completed on the push that fills it, so none holds n steps.
        if let Some(e) = per_env.iter().position(|q| q.len() >= self.n) {
            return Err(r.error(format!(
                "pending[{e}] holds {} steps; at most {} can be pending",
                per_env[e].len(),
                self.n - 1
            )));
        }
        Ok(per_env.into_iter().map(VecDeque::from).collect())
    }
}

/// The n-step transition starting at the front of `queue`.
fn combine(queue: &VecDeque<Transition>, discount: f64) -> Transition {
    let mut reward = 0.0;
    let mut scale = 1.0;
    for t in queue {
        reward += scale * t.reward;
        scale *= discount;
    }
    let (first, last) = (&queue[0], &queue[queue.len() - 1]);
    Transition {
        state: first.state.clone(),
        action: first.action.clone(),
        reward,
        terminated: last.terminated,
        truncated: last.truncated,
        next_state: last.next_state.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_steps::{spaces, step};
    use rlgraph_core::spaces::Value;

    #[test]
    fn a_cut_drops_the_pending_steps_so_no_return_reaches_across_a_restart() {
        let (floats, ints) = spaces();
        let mut buffer = NStepBuffer::new(3, 0.5, &floats, &ints);
        assert!(buffer.push(0, step(0)).is_empty());
        assert!(buffer.push(0, step(1)).is_empty());
        buffer.cut(0);
        buffer.cut(7);
        assert!(buffer.push(0, step(10)).is_empty());
        assert!(buffer.push(0, step(11)).is_empty());
        let out = buffer.push(0, step(12));
        // The first 3-step transition starts after the restart: 1 + 0.5 + 0.25.
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].state.clone(), out[0].reward), (Value::f32(10.0), 1.75));
        assert_eq!(out[0].next_state, Value::f32(13.0));
    }
}
