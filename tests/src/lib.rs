//! Cross-crate integration tests for rlgraph-rs. The test files live in `tests/tests/`.
//!
//! Status: backend conformance, config and learning tests arrive with the issues that build
//! what they exercise; the spaces have their own tests in `rlgraph-spaces/tests/`.
