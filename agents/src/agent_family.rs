//! Which family of agents a config describes, by its `type`, in RLgraph's spellings.

use serde_json::Value as Json;

use rlgraph_core::Result;

use crate::agent_spec::{config, normalized_kind, AgentKind};
use crate::{dqn, impala, pg, random_agent, sac};

/// The agent types `build_agent` knows, in RLgraph's spelling.
pub const AGENT_TYPES: [&str; 7] = ["dqn", "apex", "ppo", "actor_critic", "sac", "single-impala", "random"];

/// The families of agents, as a config's `type` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentFamily {
    /// DQN and Ape-X.
    Dqn,
    /// PPO and actor-critic.
    PolicyGradient,
    /// Soft actor-critic.
    Sac,
    /// IMPALA.
    Impala,
    /// The random agent.
    Random,
}

/// The family of the agent `spec` describes, by its `type` (RLgraph's spellings; case, `-` and
/// `_` ignored). Errors list the known types.
pub fn agent_family(spec: &Json) -> Result<AgentFamily> {
    let Some(object) = spec.as_object() else {
        return Err(config("config", "expected a JSON object".into()));
    };
    let kind = match object.get("type") {
        None | Some(Json::String(_)) => normalized_kind(object.get("type").and_then(Json::as_str), ""),
        Some(other) => {
            return Err(config(
                "config.type",
                format!("expected a string, one of {}; got {other}", AGENT_TYPES.join(", ")),
            ))
        }
    };
    let is = |k: &AgentKind| k.names.contains(&kind.as_str());
    Ok(if is(&dqn::config::KIND) {
        AgentFamily::Dqn
    } else if is(&pg::config::KIND) {
        AgentFamily::PolicyGradient
    } else if is(&sac::config::KIND) {
        AgentFamily::Sac
    } else if is(&impala::config::KIND) {
        AgentFamily::Impala
    } else if is(&random_agent::KIND) {
        AgentFamily::Random
    } else if kind.is_empty() && object.contains_key("learner") && object.contains_key("actor") {
        return Err(config(
            "config",
            "a cluster spec (learner and actor addresses) for distributed execution, not an agent config; \
             distributed execution across processes is not built yet (the gRPC executor)"
                .into(),
        ));
    } else if kind.is_empty() && object.contains_key("layers") {
        return Err(config(
            "config",
            "a neural-network spec (layers), not an agent config: test it with `rlgraph call` on its input space"
                .into(),
        ));
    } else if kind.is_empty() {
        return Err(config(
            "config.type",
            format!("missing; one of {}", AGENT_TYPES.join(", ")),
        ));
    } else {
        return Err(config(
            "config.type",
            format!("{kind:?} is not built yet; one of {}", AGENT_TYPES.join(", ")),
        ));
    })
}
