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
    /// An algorithm registered with [`crate::register_algorithm`].
    Registered,
}

/// The built-in algorithms' kinds, with the family each picks.
const BUILT_IN: [(&AgentKind, AgentFamily); 5] = [
    (&dqn::config::KIND, AgentFamily::Dqn),
    (&pg::config::KIND, AgentFamily::PolicyGradient),
    (&sac::config::KIND, AgentFamily::Sac),
    (&impala::config::KIND, AgentFamily::Impala),
    (&random_agent::KIND, AgentFamily::Random),
];

/// The built-in algorithm that answers to normalized type `key`, if one does.
pub(crate) fn built_in_kind(key: &str) -> Option<&'static AgentKind> {
    BUILT_IN.iter().find(|(k, _)| k.names.contains(&key)).map(|(k, _)| *k)
}

/// The types a config may have, for messages: the built-in ones in RLgraph's spelling, then
/// the registered ones.
pub fn agent_types() -> String {
    let mut types: Vec<String> = AGENT_TYPES.iter().map(|t| t.to_string()).collect();
    types.extend(crate::algorithm_registry::registered_algorithms());
    types.join(", ")
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
                format!("expected a string, one of {}; got {other}", agent_types()),
            ))
        }
    };
    if let Some((_, family)) = BUILT_IN.iter().find(|(k, _)| k.names.contains(&kind.as_str())) {
        return Ok(*family);
    }
    Ok(if crate::algorithm_registry::is_registered(&kind) {
        AgentFamily::Registered
    } else if kind.is_empty() && object.contains_key("learner") && object.contains_key("actor") {
        return Err(config(
            "config",
            "a cluster spec (learner and actor addresses), not an agent config; \
             give it to `rlgraph serve --cluster` beside the agent config"
                .into(),
        ));
    } else if kind.is_empty() && object.contains_key("layers") {
        return Err(config(
            "config",
            "a neural-network spec (layers), not an agent config: test it with `rlgraph call` on its input space"
                .into(),
        ));
    } else if kind.is_empty() {
        return Err(config("config.type", format!("missing; one of {}", agent_types())));
    } else {
        return Err(config(
            "config.type",
            format!(
                "{kind:?} is neither a built-in algorithm nor one registered with \
                 agents::register_algorithm; one of {}",
                agent_types()
            ),
        ));
    })
}
