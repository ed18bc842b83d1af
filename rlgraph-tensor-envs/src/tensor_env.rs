//! The `TensorEnv` trait: N copies of an environment stepped as one tensor program.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Device, HostTensor, Result};

/// What one step of all copies returns; every tensor lives on the environment's device.
pub struct TensorStep<B: Backend> {
    /// The observation after the step, `[N, ...]`. A copy that finished in this step shows
    /// the first observation of its next episode (it was reset inside the step).
    pub observation: B::Tensor,
    /// The reward of each copy, F32 `[N]`.
    pub reward: B::Tensor,
    /// 1 where the copy reached a terminal state, U8 `[N]`.
    pub terminated: B::Tensor,
    /// 1 where the copy hit its time limit without terminating, U8 `[N]`.
    pub truncated: B::Tensor,
}

/// Where every copy stands, copied to the host: enough to continue the copies exactly, as
/// checkpoints need (the start-state pool is not in it: it is drawn again from the seed).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorEnvSnapshot {
    /// Every copy's physical state, `[N, width]`.
    pub state: HostTensor,
    /// Steps since each copy's episode began.
    pub elapsed: Vec<usize>,
    /// Each copy's next row in the start-state pool.
    pub cursors: Vec<usize>,
}

/// N copies of an environment that live on a device and step together: observations, rewards
/// and flags never leave the device, and finished copies restart inside `step`.
///
/// Actions are not range-checked per step (that would read them back to the host); integer
/// actions are clamped into the action space, torques into their bounds. Shapes and dtypes
/// are checked, and a mismatch is an error naming the environment.
pub trait TensorEnv<B: Backend>: Send {
    /// The environment's id, as the host version's.
    fn id(&self) -> &str;
    /// How many copies step together.
    fn num_envs(&self) -> usize;
    /// Where the copies live.
    fn device(&self) -> Device;
    /// The space of one copy's observation (no batch rank).
    fn state_space(&self) -> &Space;
    /// The space of one copy's action (no batch rank).
    fn action_space(&self) -> &Space;
    /// Starts a new episode in every copy; returns the observations `[N, ...]`.
    fn reset(&mut self) -> Result<B::Tensor>;
    /// Applies one action per copy (`[N]` for discrete actions, `[N, d]` or `[N]` for
    /// continuous ones).
    fn step(&mut self, actions: &B::Tensor) -> Result<TensorStep<B>>;
    /// The observations the last `step` reached before finished copies restarted, `[N, ...]`:
    /// a finished copy's row is where its episode ended (what bootstrapping a cut-off episode
    /// needs), every other row equals `step`'s observation. Computed only when asked for;
    /// before any step, the current observations. An error where the step does not keep them.
    fn final_observation(&mut self) -> Result<B::Tensor>;
    /// Sets every copy's physical state (`[N, width]`, the host version's `set_state` per
    /// row) and step count; returns the observations. A testing aid, as `set_state` is.
    fn set_state(&mut self, state: &HostTensor, elapsed: &[usize]) -> Result<B::Tensor>;
    /// Where every copy stands now, on the host.
    fn snapshot(&mut self) -> Result<TensorEnvSnapshot>;
    /// Puts every copy back where `snapshot` (taken from copies made with the same id, count
    /// and seed) says it stood; returns the observations. A snapshot of another shape or
    /// with a cursor outside the pool is refused and changes nothing.
    fn restore(&mut self, snapshot: &TensorEnvSnapshot) -> Result<B::Tensor>;
    /// The tensors a step reads and replaces (the state, step counts and restart cursors of
    /// copies stepped as tensor ops), which a recording of steps writes its last values back
    /// into; `None` where steps cannot be recorded so (a host pass, a kernel of its own).
    fn moving_parts(&self) -> Option<Vec<B::Tensor>> {
        None
    }
    /// Puts back tensors [`TensorEnv::moving_parts`] gave, in its order.
    fn set_moving_parts(&mut self, _parts: Vec<B::Tensor>) -> Result<()> {
        Err(rlgraph_core::CoreError::Config {
            at: format!("tensor env {}: set_moving_parts", self.id()),
            reason: "this environment's steps are not recorded from their moving parts".into(),
        })
    }
    /// Steps as one host pass where the environment has one (its default on the CPU), or as
    /// tensor ops where `on` is false; both give the same numbers. Returns whether the host
    /// pass runs now.
    fn use_host_pass(&mut self, on: bool) -> Result<bool> {
        let _ = on;
        Ok(false)
    }
}
