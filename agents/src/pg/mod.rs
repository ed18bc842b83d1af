//! The on-policy policy-gradient agents, PPO and advantage actor-critic: their config,
//! actor, learner and builder.

pub(crate) mod actor;
pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod learner;
mod segments;
pub(crate) mod tensor;
