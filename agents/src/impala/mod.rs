//! IMPALA (Espeholt et al. 2018) with V-trace: its config, actor, learner and builder.

pub(crate) mod actor;
pub(crate) mod builder;
pub(crate) mod config;
mod distributed;
pub(crate) mod learner;
mod segments;

use rlgraph_core::Backend;

use crate::algorithm_registry::{Description, Parts};
use crate::impala::builder::Impala;
use crate::impala::config::ImpalaConfig;

/// IMPALA, as the algorithm table holds it.
pub(crate) const DESCRIPTION: Description = Description {
    plan: Some(|spec| Ok(ImpalaConfig::parse(spec)?.acting_plan())),
    ..Description::keys(&["single-impala"], &config::SCHEMA, |spec| {
        ImpalaConfig::parse(spec).map(drop)
    })
};

/// IMPALA's parts on backend `B`: its agent, GA3C's segments and its distributed roles.
pub(crate) fn parts<B: Backend>() -> Parts<B> {
    Parts {
        segments: Some(|spec| Ok(Box::new(ImpalaConfig::parse(spec)?))),
        distributed: Some(|spec| Ok(Box::new(ImpalaConfig::parse(spec)?))),
        ..Parts::composed::<Impala>(&DESCRIPTION)
    }
}
