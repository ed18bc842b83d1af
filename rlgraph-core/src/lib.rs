//! The core of rlgraph-rs: the `Backend` trait, the component model, the backend-free meta
//! graph, the three-phase builder, execution plans, the graph executor and `ComponentTest`.
//!
//! Status: not built yet. It arrives with the core issue; until then this crate exports
//! nothing, so nothing can mistake it for working code. Spaces are ready in
//! [`rlgraph_spaces`], which this crate re-exports.

pub use rlgraph_spaces as spaces;
