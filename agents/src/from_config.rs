//! `build_agent`: any agent from its RLgraph config, chosen by the config's `type`.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};
use serde_json::Value as Json;

use crate::agent::Agent;
use crate::agent_family::{agent_family, AgentFamily};
use crate::frame_storage::WorkerLayout;
use crate::worker_preprocessing::PreprocessedAgent;
use crate::{DqnAgent, DqnConfig, ImpalaAgent, ImpalaConfig, PgAgent, PgConfig, RandomAgent, SacAgent, SacConfig};

/// Builds the agent `spec` describes (its `type`: see [`crate::AGENT_TYPES`]) for the given
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
