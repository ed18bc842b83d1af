//! `NStepBuffer`: per-environment buffers that turn single steps into n-step transitions
//! (`R = r_t + gamma r_{t+1} + ... + gamma^{n-1} r_{t+n-1}`, next state `s_{t+n}`), as
//! Ape-X and n-step DQN need; with n = 1 transitions pass straight through.

use std::collections::VecDeque;

use crate::agent::Transition;

/// Pending steps per environment copy.
#[derive(Clone, Debug)]
pub struct NStepBuffer {
    n: usize,
    discount: f64,
    pending: Vec<VecDeque<Transition>>,
}

impl NStepBuffer {
    /// Buffers for n-step returns with discount `discount`.
    pub fn new(n: usize, discount: f64) -> Self {
        NStepBuffer {
            n: n.max(1),
            discount,
            pending: vec![],
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
