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
pub use lstm::{lstm, lstm_unroll, memory_space, sequence_length_space, LstmSpec};
pub use reshape::{reshape, reshape_flattening, reshape_with_categories, FlattenCategories, NewShape};
pub use time_rank::{fold_time_rank, unfold_time_rank};

/// Refuses float64 inputs to a layer whose weights are float32 (`who`), saying how to convert
/// them: otherwise the first step would fail inside the backend's matrix product.
pub(crate) fn float32_inputs(spaces: &rlgraph_core::InputSpaces, who: &str) -> rlgraph_core::Result<()> {
    match spaces.try_get("inputs").and_then(rlgraph_core::spaces::Space::dtype) {
        Some(rlgraph_core::spaces::Dtype::Float64) => Err(spaces.mismatch(
            "inputs",
            format!(
                "float32 inputs, as {who}'s weights are float32, not float64: convert them first, with a \
                 preprocessor {{\"type\": \"convert_type\", \"to_dtype\": \"float32\"}} (the Gymnasium bridge sends \
                 float64 observations as float32 unless `force_float32=false`)"
            ),
        )),
        _ => Ok(()),
    }
}
