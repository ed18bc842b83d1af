//! Soft actor-critic (Haarnoja et al. 2018): its config, learner (and actor) and builder.

pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod learner;
