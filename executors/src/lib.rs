//! Workers that drive agents against (vector) environments, and the distributed gRPC executors
//! for Ape-X and IMPALA.
//!
//! Status: not built yet. Workers arrive with the agents issue and the gRPC executors with the
//! distributed issue; this crate exports nothing until then.
