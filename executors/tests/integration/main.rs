//! Every integration test of this crate, as one test binary: one link instead of one per
//! file, and generic code compiled once, which took minutes off CI. Each module was once
//! its own file under `tests/` and still reads as one.

mod device_worker;
mod episodes_csv;
mod evaluation;
mod ga3c;
mod input_log_replay;
mod learning_dqn;
mod learning_pg;
#[cfg(feature = "distributed")]
mod replay_shard_over_grpc;
#[cfg(feature = "distributed")]
mod role_health;
mod roles_over_threads;
mod worker_checkpoints;
