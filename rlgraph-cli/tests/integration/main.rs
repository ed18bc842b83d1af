//! Every integration test of this crate, as one test binary: one link instead of one per
//! file, and generic code compiled once, which took minutes off CI. Each module was once
//! its own file under `tests/` and still reads as one.

mod across_hosts;
mod act_command;
mod bench_command;
mod call_command;
mod chaos_soak;
mod common;
mod config_schema;
mod distributed;
mod env_command;
mod export_command;
mod graph_pictures;
mod gym_bridge;
mod learner_log;
mod profile_command;
mod program_start;
mod recurrent_learning;
mod resume;
mod space_command;
mod train_command;

/// The repository's root, where the shipped configs are.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
