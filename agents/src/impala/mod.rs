//! IMPALA (Espeholt et al. 2018) with V-trace: its config, actor, learner and builder.

pub(crate) mod actor;
pub(crate) mod builder;
pub(crate) mod config;
mod distributed;
pub(crate) mod learner;
mod segments;
