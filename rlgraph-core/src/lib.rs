//! The core of rlgraph-rs.
pub mod backend;
pub mod error;
pub use backend::{Backend, DType, Device, HostData, HostTensor};
pub use error::{CoreError, Result};
pub use rlgraph_spaces as spaces;
