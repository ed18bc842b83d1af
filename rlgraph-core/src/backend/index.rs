//! `IndexOps`: picking and placing entries by integer indices.

use super::{BackendCore, DType};
use crate::error::Result;

/// Selection, gathering and scattering by I64 indices, and one-hot encoding.
pub trait IndexOps: BackendCore {
    /// Entries of `dim` picked by the I64 vector `idx`.
    fn index_select(t: &Self::Tensor, dim: usize, idx: &Self::Tensor) -> Result<Self::Tensor>;
    /// `out[i][j] = t[i][idx[i][j]]` along `dim` (`idx` I64, same rank as `t`).
    fn gather(t: &Self::Tensor, dim: usize, idx: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t` with `src` added at positions `idx` along `dim`.
    fn scatter_add(t: &Self::Tensor, dim: usize, idx: &Self::Tensor, src: &Self::Tensor) -> Result<Self::Tensor>;
    /// One-hot encoding of I64 indices: shape `idx.shape + [depth]`.
    fn one_hot(idx: &Self::Tensor, depth: usize, dtype: DType) -> Result<Self::Tensor>;
}
