//! IMPALA's actor.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use crate::actor_critic_networks::actor_critic_actor;
use crate::agent_parts::AgentParts;
use crate::impala::config::ImpalaConfig;
use crate::impala::learner::ROOT;

/// IMPALA's actor: `get_action(states)` gives the sampled actions and their
/// `behaviour_log_probs`, `get_deterministic_action(states)` the greedy ones. Its network
/// variables have the learner's paths, so the learner's snapshots load into it.
pub fn impala_actor<B: Backend>(
    config: &ImpalaConfig,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<crate::GraphActor<B>> {
    impala_actor_with(config, &AgentParts::default(), state_space, action_space, seed)
}

/// [`impala_actor`] with the layers and preprocessors of `parts` where given.
pub(crate) fn impala_actor_with<B: Backend>(
    config: &ImpalaConfig,
    parts: &AgentParts<B>,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<crate::GraphActor<B>> {
    actor_critic_actor(
        ROOT,
        &config.networks(parts),
        state_space,
        action_space,
        "get_action_and_log_likelihood",
        &["behaviour_log_probs"],
        seed,
    )
}
