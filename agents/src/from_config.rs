//! `build_agent`: any agent from its RLgraph config, chosen by the config's `type`.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};
use serde_json::Value as Json;

use crate::agent::{config, Agent};
use crate::config_reader::Obj;
use crate::{DqnAgent, DqnConfig, ImpalaAgent, ImpalaConfig, PgAgent, PgConfig, RandomAgent, SacAgent, SacConfig};

/// The agent types `build_agent` knows, in RLgraph's spelling.
pub const AGENT_TYPES: [&str; 7] = ["dqn", "apex", "ppo", "actor_critic", "sac", "single-impala", "random"];

/// Builds the agent `spec` describes (its `type`: see [`AGENT_TYPES`]) for the given
/// spaces, with every random choice drawn from `seed`.
pub fn build_agent<B: Backend>(
    spec: &Json,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    let kind = Obj::new(spec, "config")?.kind("");
    Ok(match kind.as_str() {
        "dqn" | "dqnagent" | "apex" | "apexagent" => Box::new(DqnAgent::<B>::new(
            DqnConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        "ppo" | "ppoagent" | "actorcritic" | "actorcriticagent" | "a2c" => Box::new(PgAgent::<B>::new(
            PgConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        "sac" | "sacagent" => Box::new(SacAgent::<B>::new(
            SacConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        "impala" | "singleimpala" | "impalaagent" | "singleimpalaagent" => Box::new(ImpalaAgent::<B>::new(
            ImpalaConfig::parse(spec)?,
            state_space,
            action_space,
            seed,
        )?),
        "random" | "randomagent" => Box::new(RandomAgent::new(spec, action_space, seed)?),
        "" => {
            return Err(config(
                "config.type",
                format!("missing; one of {}", AGENT_TYPES.join(", ")),
            ))
        }
        other => {
            return Err(config(
                "config.type",
                format!("{other:?} is not built yet; one of {}", AGENT_TYPES.join(", ")),
            ))
        }
    })
}
