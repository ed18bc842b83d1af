//! The candle backend for rlgraph-rs: pure Rust, no system libraries, the embedded default.
//!
//! Status: the `Backend` trait implementation arrives with the core issue. For now this crate
//! re-exports `candle-core` so the workspace pins one candle version, and its smoke test
//! (`tests/smoke.rs`) proves candle tensor ops run on this machine.

pub use candle_core;
