//! RL agents built from RLgraph-format JSON configs, with the agent API of DESIGN section 9:
//! `get_actions`, `observe` (buffered per environment), `update`, weights, checkpoints.
//!
//! Built so far: DQN with its double, dueling, n-step and prioritized-replay variants, and
//! Ape-X in its single-process form ([`DqnAgent`]); PPO and actor-critic ([`PgAgent`]); soft
//! actor-critic for bounded continuous actions ([`SacAgent`]); IMPALA in its single-process
//! form ([`ImpalaAgent`]); and the [`RandomAgent`]. [`build_agent`] picks one by the config's `type`. An agent is a
//! root component (networks, loss, optimizer, ...) run by a `GraphExecutor`, plus host-side
//! parts: memories or rollouts, per-environment buffers and schedules.

mod actor_critic_networks;
mod agent;
mod agent_graph;
mod batch;
mod config_reader;
mod counters;
mod dqn;
mod dqn_config;
mod from_config;
mod impala_agent;
mod impala_config;
mod observe_buffer;
mod pg_agent;
mod pg_config;
mod preprocessing;
mod random_agent;
mod rollout;
mod sac_agent;
mod sac_config;
mod transition_json;

pub use agent::{Agent, Transition, UpdateMode, UpdateSpec};
pub use batch::{stack, unstack};
pub use dqn::DqnAgent;
pub use dqn_config::{DqnConfig, MemoryKind};
pub use from_config::{build_agent, AGENT_TYPES};
pub use impala_agent::ImpalaAgent;
pub use impala_config::ImpalaConfig;
pub use observe_buffer::NStepBuffer;
pub use pg_agent::{PgAgent, TensorRollout};
pub use pg_config::{PgAlgorithm, PgConfig};
pub use random_agent::RandomAgent;
pub use rollout::{Rollout, RolloutBatch};
pub use sac_agent::SacAgent;
pub use sac_config::SacConfig;
