//! TD3 (Fujimoto et al. 2018): its settings, loss, learner (and actor) and builder. It is
//! written on the public interface a user's own algorithm uses: [`register`] adds it with
//! [`crate::register_algorithm`], and nothing outside this folder names it but that call.

pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod learner;
pub(crate) mod loss;

use rlgraph_core::{Backend, Result};

use crate::td3::builder::Td3Agent;
use crate::td3::config::{Td3Config, Td3Settings};

/// Registers TD3 under the type `td3` on backend `B`.
pub(crate) fn register<B: Backend>() -> Result<()> {
    crate::register_algorithm::<B, Td3Settings>("td3", |settings, state_space, action_space, seed| {
        let config = Td3Config::from(settings);
        Ok(Box::new(Td3Agent::<B>::new(config, state_space, action_space, seed)?))
    })
}
