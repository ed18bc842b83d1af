//! The actor of PPO and actor-critic.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use crate::actor::GraphActor;
use crate::actor_critic_networks::actor_critic_actor;
use crate::agent_parts::AgentParts;
use crate::pg::config::PgConfig;
use crate::pg::learner::root_name;

/// The actor of PPO and actor-critic: `get_action(states)` samples the policy,
/// `get_deterministic_action(states)` takes its mode. Its variables have the learner's
/// paths, so the learner's snapshots load into it.
pub fn pg_actor<B: Backend>(
    config: &PgConfig,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    pg_actor_with(config, &AgentParts::default(), state_space, action_space, seed)
}

/// [`pg_actor`] with the layers and preprocessors of `parts` where given.
pub(crate) fn pg_actor_with<B: Backend>(
    config: &PgConfig,
    parts: &AgentParts<B>,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<GraphActor<B>> {
    actor_critic_actor(
        root_name(config),
        &config.networks(parts),
        state_space,
        &config.sampled_action_space(action_space),
        "get_action",
        &[],
        seed,
    )
}
