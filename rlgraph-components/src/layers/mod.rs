//! Neural-network layers.

pub mod dense;

pub use dense::{dense, DenseSpec};
