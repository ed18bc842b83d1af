//! Workers that drive agents against vector environments.
//!
//! Built so far: [`SingleThreadedWorker`], RLgraph's worker: it steps a [`VectorEnv`], asks
//! the agent for actions, feeds it transitions, calls `update` on RLgraph's schedule and
//! reports RLgraph's statistics. The distributed gRPC executors (Ape-X, IMPALA) come with the
//! distributed issue.
//!
//! [`VectorEnv`]: rlgraph_envs::VectorEnv

mod single_threaded_worker;

pub use single_threaded_worker::{Progress, SingleThreadedWorker, WorkerStats};
