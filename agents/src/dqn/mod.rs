//! DQN (Mnih et al. 2015) with double Q, dueling heads, n-step returns and prioritized
//! replay, and Ape-X (Horgan et al. 2018): its config, actor, learner and builder.

pub(crate) mod actor;
pub(crate) mod builder;
pub(crate) mod config;
mod distributed;
pub(crate) mod learner;
pub(crate) mod policy;
