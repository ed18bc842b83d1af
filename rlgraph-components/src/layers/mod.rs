//! Neural-network layers.

pub mod combine;
pub mod conv2d;
pub mod dense;
pub mod embedding;
pub mod local_response_norm;
pub mod lstm;
pub mod reshape;
pub mod time_rank;

pub use combine::{concat, residual, residual_activated};
pub use conv2d::{conv2d, max_pool2d, Conv2dSpec, Padding};
pub use dense::{dense, DenseSpec};
pub use embedding::embedding;
pub use local_response_norm::{local_response_norm, LrnSpec};
pub use lstm::{lstm, sequence_length_space, LstmSpec};
pub use reshape::{reshape, reshape_flattening, reshape_with_categories, FlattenCategories, NewShape};
pub use time_rank::{fold_time_rank, unfold_time_rank};
