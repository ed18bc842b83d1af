//! Neural-network layers.

pub mod conv2d;
pub mod dense;
pub mod reshape;

pub use conv2d::{conv2d, max_pool2d, Conv2dSpec, Padding};
pub use dense::{dense, DenseSpec};
pub use reshape::{reshape, reshape_with_categories};
