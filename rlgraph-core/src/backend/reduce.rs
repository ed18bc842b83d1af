//! `ReduceOps`: sums, means, maxima and minima over dimensions, and argmax.

use super::{BackendCore, ShapeOps};
use crate::error::Result;

/// A reduction over one or more dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The mean.
    Mean,
    /// The largest value.
    Max,
    /// The smallest value.
    Min,
}

impl ReduceOp {
    /// The op's name, as in error messages (`sum`, `max`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Mean => "mean",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// Reductions. The named ones are provided through `reduce`; `sum_all` and `mean_all` need
/// a reshape too, so they come with [`ShapeOps`].
pub trait ReduceOps: BackendCore {
    /// `op` over `dims` (non-empty, distinct), kept as size-1 dimensions when `keepdim`.
    fn reduce(op: ReduceOp, t: &Self::Tensor, dims: &[usize], keepdim: bool) -> Result<Self::Tensor>;
    /// Index (I64) of the largest value along `dim`; ties go to the first.
    fn argmax(t: &Self::Tensor, dim: usize, keepdim: bool) -> Result<Self::Tensor>;

    /// Sum over `dims` (non-empty).
    fn sum(t: &Self::Tensor, dims: &[usize], keepdim: bool) -> Result<Self::Tensor> {
        Self::reduce(ReduceOp::Sum, t, dims, keepdim)
    }
    /// Mean over `dims` (non-empty).
    fn mean(t: &Self::Tensor, dims: &[usize], keepdim: bool) -> Result<Self::Tensor> {
        Self::reduce(ReduceOp::Mean, t, dims, keepdim)
    }
    /// Largest value along `dim`.
    fn max(t: &Self::Tensor, dim: usize, keepdim: bool) -> Result<Self::Tensor> {
        Self::reduce(ReduceOp::Max, t, &[dim], keepdim)
    }
    /// Smallest value along `dim`.
    fn min(t: &Self::Tensor, dim: usize, keepdim: bool) -> Result<Self::Tensor> {
        Self::reduce(ReduceOp::Min, t, &[dim], keepdim)
    }
    /// Sum of all elements, as a scalar.
    fn sum_all(t: &Self::Tensor) -> Result<Self::Tensor>
    where
        Self: ShapeOps,
    {
        let n: usize = Self::shape(t).iter().product();
        Self::sum(&Self::reshape(t, &[n])?, &[0], false)
    }
    /// Mean of all elements, as a scalar.
    fn mean_all(t: &Self::Tensor) -> Result<Self::Tensor>
    where
        Self: ShapeOps,
    {
        let n: usize = Self::shape(t).iter().product();
        Self::mean(&Self::reshape(t, &[n])?, &[0], false)
    }
}
