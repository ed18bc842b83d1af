//! Reusable RL components (layers, networks, preprocessors, distributions, policies, memories,
//! losses, optimizers, explorations), each written once and generic over the core `Backend` trait.
//!
//! Status: not built yet. The components arrive with the component-library issues; this crate
//! exports nothing until then.
