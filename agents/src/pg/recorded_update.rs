//! What a PPO learner keeps of its recorded device update (see `device_update`): where it
//! stands with recording, and the inputs every replay reads.

use rlgraph_core::{Backend, Replay};

/// Where a learner's device update stands with recording.
pub(crate) enum Recorded<B: Backend> {
    /// No device update yet: the next one runs op by op, which warms the backend up (cuBLAS
    /// makes its handle on first use, which no recording may see).
    NotYet,
    /// Warmed up on inputs of these shapes: the next update of the same shapes records.
    WarmedUp(Vec<Vec<usize>>),
    /// Recorded: the inputs each replay reads, and the loss sum it writes.
    Ready {
        graph: Box<dyn Replay>,
        inputs: UpdateInputs<B::Tensor>,
        loss_sum: B::Tensor,
    },
    /// Updates run op by op: recording is off, the backend cannot record on this device, or
    /// recording failed (why).
    Off(String),
}

/// What one device update reads: the rollout, flattened over time where the update indexes
/// records, time-major where GAE runs along time, and the schedules' values.
pub(crate) struct UpdateInputs<T> {
    /// `[T * N, ...]`.
    pub(super) states: T,
    /// `[T * N, ...]`.
    pub(super) actions: T,
    /// The states after the last step, `[N, ...]`.
    pub(super) next_states: T,
    /// The last step's actions, `[N, ...]` (stand-ins beside `next_states`: only their values are read).
    pub(super) last_actions: T,
    /// F32 `[T, N]`.
    pub(super) rewards: T,
    /// U8 `[T, N]`.
    pub(super) terminated: T,
    /// U8 `[T, N]`.
    pub(super) truncated: T,
    /// F32 `[3]`: the clip ratio, the entropy weight and the time percentage.
    pub(super) knobs: T,
}

impl<T> UpdateInputs<T> {
    /// Every input, in one order.
    pub(super) fn parts(&self) -> [&T; 8] {
        [
            &self.states,
            &self.actions,
            &self.next_states,
            &self.last_actions,
            &self.rewards,
            &self.terminated,
            &self.truncated,
            &self.knobs,
        ]
    }
}
