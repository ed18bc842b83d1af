//! TD3 (Fujimoto et al. 2018): its settings, loss, learner (and actor) and builder. It is
//! added as a user's own algorithm is, through `register_algorithm` with [`build`]; the
//! registry's list of shipped algorithms is the one place outside this folder that names it.
//! It runs across processes too ([`distributed`]), as a user's algorithm registered with
//! `register_distributed_algorithm` does.

pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod learner;
pub(crate) mod loss;

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};

use crate::agent::Agent;
use crate::distributed_roles::DistributedAlgorithm;
use crate::off_policy::DistributedOffPolicy;
use crate::td3::builder::{Td3Agent, Td3Roles};
use crate::td3::config::{Td3Config, Td3Settings};

/// The TD3 agent `settings` describe, on backend `B`: what `register_algorithm` is given.
pub(crate) fn build<B: Backend>(
    settings: Td3Settings,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    let config = Td3Config::from(settings);
    Ok(Box::new(Td3Agent::<B>::new(config, state_space, action_space, seed)?))
}

/// TD3 across processes (actors feeding replay shards), as `settings` describe it: what
/// `register_distributed_algorithm` is given.
pub(crate) fn distributed<B: Backend>(settings: Td3Settings) -> Result<Box<dyn DistributedAlgorithm<B>>> {
    Ok(Box::new(DistributedOffPolicy::<Td3Roles, B>::new(Td3Config::from(
        settings,
    ))))
}
