//! `build_agent`: any agent from its RLgraph config, chosen by the config's `type`.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};
use serde_json::Value as Json;

use crate::agent::{config, Agent};
use crate::agent_spec::{normalized_kind, AgentKind};
use crate::frame_storage::WorkerLayout;
use crate::worker_preprocessing::PreprocessedAgent;
use crate::{dqn_config, impala_config, pg_config, random_agent, sac_config};
use crate::{DqnAgent, DqnConfig, ImpalaAgent, ImpalaConfig, PgAgent, PgConfig, RandomAgent, SacAgent, SacConfig};

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
    Ok(if is(&dqn_config::KIND) {
        AgentFamily::Dqn
    } else if is(&pg_config::KIND) {
        AgentFamily::PolicyGradient
    } else if is(&sac_config::KIND) {
        AgentFamily::Sac
    } else if is(&impala_config::KIND) {
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

/// Builds the agent `spec` describes (its `type`: see [`AGENT_TYPES`]) for the given
/// spaces, with every random choice drawn from `seed`. A `preprocessing_spec` that keeps
/// state (`sequence`, `moving_standardize`) runs per environment copy on the acting side
/// ([`PreprocessedAgent`]), and the agent learns from preprocessed states: bytes, where the
/// observation is bytes and its preprocessing allows ([`WorkerLayout`]).
pub fn build_agent<B: Backend>(
    spec: &Json,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    let family = agent_family(spec)?;
    if family != AgentFamily::Random {
        if let Some(layout) = WorkerLayout::plan::<B>(spec, state_space, seed)? {
            let inner = layout.inner_spec;
            let agent = PreprocessedAgent::<B>::new(layout.worker_specs, state_space, seed, |preprocessed| {
                build_family::<B>(family, &inner, preprocessed, action_space, seed)
            })?;
            return Ok(Box::new(agent));
        }
    }
    build_family::<B>(family, spec, state_space, action_space, seed)
}

fn build_family<B: Backend>(
    family: AgentFamily,
    spec: &Json,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    Ok(match family {
        AgentFamily::Dqn => Box::new(DqnAgent::<B>::new(
            DqnConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        AgentFamily::PolicyGradient => Box::new(PgAgent::<B>::new(
            PgConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        AgentFamily::Sac => Box::new(SacAgent::<B>::new(
            SacConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        AgentFamily::Impala => Box::new(ImpalaAgent::<B>::new(
            ImpalaConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        AgentFamily::Random => Box::new(RandomAgent::new(spec, action_space, seed)?),
    })
}
