//! TD3 (Fujimoto et al. 2018): its settings, loss, learner (and actor) and builder. Its
//! settings are one serde type, read and described as a user's registered algorithm's are;
//! the algorithm table's list is the one place outside this folder that names it. It runs
//! across processes too, through the off-policy roles SAC's shards and actors use.

pub(crate) mod builder;
pub(crate) mod config;
pub(crate) mod learner;
pub(crate) mod loss;

use rlgraph_core::Backend;

use crate::algorithm_registry::{settings, Description, Parts, SchemaSource};
use crate::off_policy;
use crate::td3::builder::Td3Roles;
use crate::td3::config::Td3Settings;

/// TD3, as the algorithm table holds it.
pub(crate) const DESCRIPTION: Description = Description {
    types: &["td3"],
    names: &["td3"],
    schema: SchemaSource::Settings(<Td3Settings as schemars::JsonSchema>::json_schema),
    check: |spec| settings::<Td3Settings>(spec).map(drop),
    plan: None,
    wrapped: true,
    stacks_frames: false,
};

/// TD3's parts on backend `B`: its agent and its distributed roles.
pub(crate) fn parts<B: Backend>() -> Parts<B> {
    off_policy::parts::<Td3Roles, B>(&DESCRIPTION)
}
