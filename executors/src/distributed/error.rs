//! What can go wrong between roles, with the place named: the message's key, the peer and
//! the call.

use rlgraph_core::CoreError;

/// An error of the distributed executors.
#[derive(Debug)]
pub enum DistributedError {
    /// A message that does not fit what the receiver expects.
    Wire {
        /// The flat key or scope path of the offending tensor.
        at: String,
        /// What was expected against what came.
        reason: String,
    },
    /// A call to a peer failed (refused, timed out, unreachable).
    #[cfg(feature = "distributed")]
    Call {
        /// The peer's address.
        peer: String,
        /// The gRPC method.
        method: &'static str,
        /// The gRPC status code.
        code: tonic::Code,
        /// The gRPC status, as text.
        status: String,
    },
    /// A cluster spec, option or address that cannot work.
    Setup(String),
    /// The agent's graph or memory refused something.
    Core(CoreError),
    /// An environment failed.
    Env(rlgraph_envs::EnvError),
}

impl DistributedError {
    /// A message that does not fit, at `at`.
    pub fn wire(at: &str, reason: impl Into<String>) -> Self {
        DistributedError::Wire {
            at: at.to_string(),
            reason: reason.into(),
        }
    }

    #[cfg(feature = "distributed")]
    /// Whether a peer refused this role's token: a setting, not an outage, so retrying
    /// cannot help and the role stops with this error.
    pub fn is_token_refusal(&self) -> bool {
        matches!(
            self,
            DistributedError::Call {
                code: tonic::Code::Unauthenticated,
                ..
            }
        )
    }

    #[cfg(feature = "distributed")]
    /// Whether a peer refused the message itself (not a transport failure): another try or
    /// another peer would refuse it too.
    pub fn is_message_refusal(&self) -> bool {
        matches!(
            self,
            DistributedError::Call {
                code: tonic::Code::InvalidArgument,
                ..
            }
        )
    }
}

impl std::fmt::Display for DistributedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DistributedError::Wire { at, reason } => write!(f, "message refused at '{at}': {reason}"),
            #[cfg(feature = "distributed")]
            DistributedError::Call {
                peer, method, status, ..
            } => write!(f, "call {method} to {peer} failed: {status}"),
            DistributedError::Setup(reason) => write!(f, "{reason}"),
            DistributedError::Core(e) => write!(f, "{e}"),
            DistributedError::Env(e) => write!(f, "environment: {e}"),
        }
    }
}

impl std::error::Error for DistributedError {}

impl From<CoreError> for DistributedError {
    fn from(e: CoreError) -> Self {
        DistributedError::Core(e)
    }
}

impl From<rlgraph_envs::EnvError> for DistributedError {
    fn from(e: rlgraph_envs::EnvError) -> Self {
        DistributedError::Env(e)
    }
}

#[cfg(feature = "distributed")]
impl From<DistributedError> for tonic::Status {
    fn from(e: DistributedError) -> Self {
        match e {
            DistributedError::Wire { .. } => tonic::Status::invalid_argument(e.to_string()),
            DistributedError::Core(CoreError::Space(_)) => tonic::Status::invalid_argument(e.to_string()),
            DistributedError::Core(CoreError::Config { .. }) => tonic::Status::invalid_argument(e.to_string()),
            _ => tonic::Status::internal(e.to_string()),
        }
    }
}

/// A distributed failure as the library's error: a core error as it is, any other with the
/// learner named.
pub(crate) fn core_error(e: DistributedError) -> CoreError {
    match e {
        DistributedError::Core(e) => e,
        other => CoreError::Config {
            at: "distributed learner".into(),
            reason: other.to_string(),
        },
    }
}
