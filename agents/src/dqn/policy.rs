//! DQN's policy (plain or dueling Q heads) and how its Q-values are read: what the actor and
//! the learner share.

use rlgraph_components::{discrete_actions, dueling_policy, policy_with, PolicyOptions};
use rlgraph_core::spaces::Space;
use rlgraph_core::{ApiCtx, Backend, Component, Op, Result};

use crate::agent_parts::AgentParts;
use crate::dqn::config::DqnConfig;

/// The root component's name; the policy's variables sit under `dqn-agent/policy/`.
pub(crate) const ROOT: &str = "dqn-agent";

/// The DQN policy component (plain or dueling) named `policy`, over the layers of `parts` or
/// `network_spec`, over a bounded IntBox action
/// space or a Dict or Tuple of them (one Q head per action, as RLgraph's container actions);
/// an error for any other.
pub(crate) fn dqn_policy<B: Backend>(
    config: &DqnConfig,
    parts: &AgentParts<B>,
    action_space: &Space,
) -> Result<Component<B>> {
    discrete_actions(&action_space.with_batch_rank(false), "DQN")?;
    let layers = parts.network_layers(&config.network_spec)?;
    let adapter = crate::agent_spec::adapter_spec(config.action_adapter.as_ref());
    Ok(if config.dueling {
        dueling_policy::<B>(
            "policy",
            layers,
            action_space,
            config.units_state_value_stream,
            adapter.as_ref(),
        )?
    } else {
        let options = PolicyOptions {
            action_adapter: adapter,
            ..PolicyOptions::default()
        };
        policy_with::<B>("policy", layers, action_space, options)?
    })
}

/// The Q-values of `policy` for `x`: the third output of a dueling policy's `get_q_values`,
/// or a plain policy's action-adapter outputs (the Categorical logits); both nested like the
/// action space.
pub(crate) fn q_values<B: Backend>(ctx: &mut ApiCtx<'_, B>, policy: &str, dueling: bool, x: Op) -> Result<Op> {
    Ok(if dueling {
        ctx.call(policy, "get_q_values", &[x])?[2]
    } else {
        ctx.call(policy, "get_adapter_outputs", &[x])?[0]
    })
}
