//! `ShapeOps`: the same elements seen or laid out in another shape.

use super::BackendCore;
use crate::error::Result;

/// Reshaping, reordering, joining, slicing and broadcasting.
pub trait ShapeOps: BackendCore {
    /// The same elements in a new shape.
    fn reshape(t: &Self::Tensor, shape: &[usize]) -> Result<Self::Tensor>;
    /// Dimensions `d0` and `d1` swapped.
    fn transpose(t: &Self::Tensor, d0: usize, d1: usize) -> Result<Self::Tensor>;
    /// Dimensions reordered: dimension `i` of the result is dimension `dims[i]` of `t`; a
    /// strided view on both backends (no copy: the ops that need ordered data copy then).
    fn permute(t: &Self::Tensor, dims: &[usize]) -> Result<Self::Tensor>;
    /// Tensors joined along `dim`.
    fn concat(ts: &[Self::Tensor], dim: usize) -> Result<Self::Tensor>;
    /// `len` entries of `dim` starting at `start`.
    fn narrow(t: &Self::Tensor, dim: usize, start: usize, len: usize) -> Result<Self::Tensor>;
    /// `t` broadcast to `shape`.
    fn broadcast_to(t: &Self::Tensor, shape: &[usize]) -> Result<Self::Tensor>;
    /// A new dimension of size 1 at `dim`.
    fn unsqueeze(t: &Self::Tensor, dim: usize) -> Result<Self::Tensor>;
    /// Dimension `dim` (of size 1) removed.
    fn squeeze(t: &Self::Tensor, dim: usize) -> Result<Self::Tensor>;
    /// Zeros added before and after dimension `dim`.
    fn pad_zeros(t: &Self::Tensor, dim: usize, before: usize, after: usize) -> Result<Self::Tensor>;
}
