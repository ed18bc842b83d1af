//! The on-policy policy-gradient agents, PPO and advantage actor-critic: their config,
//! actor, learner and builder.

pub(crate) mod actor;
pub(crate) mod builder;
pub(crate) mod config;
mod device_update;
pub(crate) mod learner;
mod recorded_update;
mod segments;
pub(crate) mod tensor;

use rlgraph_core::Backend;

use crate::algorithm_registry::{Description, Parts};
use crate::pg::builder::PolicyGradient;
use crate::pg::config::PgConfig;

/// PPO, as the algorithm table holds it.
pub(crate) const PPO: Description = Description {
    plan: Some(|spec| Ok(PgConfig::parse(spec)?.acting_plan())),
    ..Description::keys(&["ppo"], &config::PPO_SCHEMA, |spec| PgConfig::parse(spec).map(drop))
};

/// Actor-critic (A2C), as the algorithm table holds it.
pub(crate) const ACTOR_CRITIC: Description = Description {
    plan: PPO.plan,
    ..Description::keys(&["actor_critic"], &config::ACTOR_CRITIC_SCHEMA, PPO.check)
};

/// PPO's parts on backend `B`: its agent, GA3C's segments and the device worker.
pub(crate) fn ppo_parts<B: Backend>() -> Parts<B> {
    Parts {
        description: &PPO,
        tensors: Some(|spec| Ok(Box::new(tensor::tensor_config(spec)?))),
        ..actor_critic_parts()
    }
}

/// Actor-critic's parts on backend `B`: its agent and GA3C's segments.
pub(crate) fn actor_critic_parts<B: Backend>() -> Parts<B> {
    Parts {
        segments: Some(|spec| Ok(Box::new(PgConfig::parse(spec)?))),
        ..Parts::composed::<PolicyGradient>(&ACTOR_CRITIC)
    }
}
