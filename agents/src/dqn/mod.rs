//! DQN (Mnih et al. 2015) with double Q, dueling heads, n-step returns and prioritized
//! replay, and Ape-X (Horgan et al. 2018): its config, actor, learner and builder.

pub(crate) mod actor;
pub(crate) mod builder;
pub(crate) mod config;
mod distributed;
pub(crate) mod learner;
pub(crate) mod policy;

use rlgraph_core::Backend;

use crate::algorithm_registry::{Description, Parts};
use crate::dqn::builder::Dqn;
use crate::dqn::config::DqnConfig;

/// DQN and Ape-X, as the algorithm table holds them.
pub(crate) const DESCRIPTION: Description = Description {
    plan: Some(|spec| Ok(DqnConfig::parse(spec)?.acting_plan())),
    stacks_frames: true,
    ..Description::keys(&["dqn", "apex"], &config::SCHEMA, |spec| {
        DqnConfig::parse(spec).map(drop)
    })
};

/// DQN's parts on backend `B`: its agent and its distributed roles.
pub(crate) fn parts<B: Backend>() -> Parts<B> {
    Parts {
        distributed: Some(|spec| Ok(Box::new(DqnConfig::parse(spec)?))),
        ..Parts::composed::<Dqn>(&DESCRIPTION)
    }
}
