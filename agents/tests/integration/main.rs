//! Every integration test of this crate, as one test binary: one link instead of one per
//! file, and generic code compiled once, which took minutes off CI. Each module was once
//! its own file under `tests/` and still reads as one.

mod action_masks;
mod common;
mod config_mutations;
mod configs;
mod dqn_agent;
mod frame_storage;
mod impala_agent;
mod pg_agent;
mod recurrent_policies;
mod rlgraph_reference_configs;
mod roles;
mod sac_agent;
mod td3_agent;
mod worker_preprocessing;
