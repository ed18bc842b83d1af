//! Environment failures as the executors report them.

use rlgraph_core::CoreError;

/// An environment failure as the worker reports it.
pub(crate) fn env_error(e: rlgraph_envs::EnvError) -> CoreError {
    CoreError::Config {
        at: "environment".into(),
        reason: e.to_string(),
    }
}
