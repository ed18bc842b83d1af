//! Acting and learning on device-resident batches: what the device worker, whose environment
//! copies live on the device (CuLE's idea), asks of an algorithm. An algorithm that can learn
//! this way says how (its [`TensorAlgorithm`]); the worker never names it.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Device, Result};

use crate::agent::Agent;

/// One on-policy rollout that never left the device: `T` steps of `N` environment copies,
/// one tensor per step, as a device-resident environment produced them.
#[derive(Clone)]
pub struct TensorRollout<B: Backend> {
    /// The states the actions were taken in, `[N, ...]` per step.
    pub states: Vec<B::Tensor>,
    /// The actions, as the actor's `act_tensors` returned them, per step.
    pub actions: Vec<B::Tensor>,
    /// The rewards, F32 `[N]` per step.
    pub rewards: Vec<B::Tensor>,
    /// 1 where a copy's episode terminated at the step, U8 `[N]` per step.
    pub terminated: Vec<B::Tensor>,
    /// 1 where a copy's episode hit its time limit at the step, U8 `[N]` per step.
    pub truncated: Vec<B::Tensor>,
    /// The states after the last step, `[N, ...]` (to bootstrap from).
    pub next_states: B::Tensor,
}

impl<B: Backend> TensorRollout<B> {
    /// The environment copies (the rewards' length).
    pub fn copies(&self) -> usize {
        self.rewards
            .first()
            .and_then(|r| B::shape(r).first().copied())
            .unwrap_or(0)
    }

    /// Environment frames held: steps times copies.
    pub fn frames(&self) -> usize {
        self.rewards.len() * self.copies()
    }
}

/// An agent that acts on device-resident observations and learns from device-resident
/// rollouts, nothing of either leaving the device.
pub trait TensorAgent<B: Backend>: Agent + Send {
    /// Actions for a batch of states `[N, ...]`, on the device.
    fn act_tensors(&mut self, states: &B::Tensor, explore: bool) -> Result<B::Tensor>;
    /// One update from `rollout` at `time_percentage` (0 to 1) of the run; the loss. The
    /// actor takes the new weights.
    fn update_from_tensors(&mut self, rollout: &TensorRollout<B>, time_percentage: f64) -> Result<f64>;
    /// Turns recording of updates on (where the backend records on the device: the default)
    /// or off (every update op by op).
    fn set_recording(&mut self, _on: bool) {}
    /// Whether updates replay a recording; otherwise why not. `None` while undecided (before
    /// the second update) and for an agent that never records.
    fn recording(&self) -> Option<std::result::Result<(), String>> {
        None
    }
}

/// How an algorithm trains on device-resident environments: where its graphs run and its
/// agent. [`crate::tensor_algorithm`] makes one from a config, refusing there (by key) a
/// config the algorithm cannot train this way.
pub trait TensorAlgorithm<B: Backend> {
    /// The device the agent's graphs, and so the environment copies, live on.
    fn device(&self) -> Device;
    /// The agent for these spaces, with every random choice drawn from `seed`.
    fn agent(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn TensorAgent<B>>>;
}
