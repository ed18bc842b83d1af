//! Workers that drive agents against vector environments.
//!
//! Built so far: [`SingleThreadedWorker`], RLgraph's worker: it steps a [`VectorEnv`], asks
//! the agent for actions, feeds it transitions, calls `update` on RLgraph's schedule and
//! reports RLgraph's statistics. [`ga3c`] runs GA3C's batched predictors and trainers on
//! threads. [`DeviceWorker`] trains PPO against device-resident
//! environments (`rlgraph-tensor-envs`) without moving observations off the device. The distributed gRPC executors (Ape-X, IMPALA) come with the
//! distributed issue.
//!
//! [`VectorEnv`]: rlgraph_envs::VectorEnv

mod config_file;
mod config_schema;
mod device_rollout;
mod device_run;
mod device_worker;
pub mod distributed;
mod divergence;
mod driver;
mod env_error;
mod episode_log;
mod evaluation;
pub mod ga3c;
mod greedy_rounds;
pub mod input_log;
mod meta_reader;
mod run_state;
mod run_tally;
mod single_threaded_worker;
pub mod tensorboard;
mod worker;
mod worker_stats;

pub use config_file::{read_config_file, ConfigFile};
pub use config_schema::{check_config, config_schema};
pub use device_worker::DeviceWorker;
pub use divergence::{first_non_finite, OnDivergence};
pub use driver::{drive, DriveOptions, Driven, RunProgress};
pub use episode_log::EpisodeLog;
pub use evaluation::{Evaluated, Evaluation, EVAL_SEED_OFFSET, MAX_EVAL_STEPS};
pub use run_tally::RunTally;
pub use single_threaded_worker::{SingleThreadedWorker, StepHook};
pub use tensorboard::EventWriter;
pub use worker::Worker;
pub use worker_stats::{Progress, RunLength, WorkerStats};
