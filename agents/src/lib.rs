//! RL agents built from RLgraph-format JSON configs, with the agent API of DESIGN section 9:
//! `get_actions`, `observe` (buffered per environment), `update`, weights, checkpoints.
//!
//! Built so far: DQN with its double, dueling, n-step and prioritized-replay variants
//! ([`DqnAgent`]). An agent is a root component (policy, target policy, loss, optimizer,
//! synchronizer) run by a `GraphExecutor`, plus host-side parts: the replay memory, the
//! per-environment observe buffers and the exploration schedule.

mod agent;
mod batch;
mod dqn;
mod dqn_config;
mod observe_buffer;

pub use agent::{Agent, Transition, UpdateSpec};
pub use batch::{stack, unstack};
pub use dqn::DqnAgent;
pub use dqn_config::{DqnConfig, MemoryKind};
pub use observe_buffer::NStepBuffer;
