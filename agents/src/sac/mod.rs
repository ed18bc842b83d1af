//! Soft actor-critic (Haarnoja et al. 2018): its config, learner (and actor) and builder.

pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod learner;

use rlgraph_core::Backend;

use crate::algorithm_registry::{Description, Parts};
use crate::off_policy;
use crate::sac::builder::SacRoles;
use crate::sac::config::SacConfig;

/// SAC, as the algorithm table holds it.
pub(crate) const DESCRIPTION: Description =
    Description::keys(&["sac"], &config::SCHEMA, |spec| SacConfig::parse(spec).map(drop));

/// SAC's parts on backend `B`: its agent and its distributed roles.
pub(crate) fn parts<B: Backend>() -> Parts<B> {
    off_policy::parts::<SacRoles, B>(&DESCRIPTION)
}
