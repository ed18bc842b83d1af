//! `CompareOps`: comparisons giving 0/1 `U8` masks, and selection by a mask.

use super::BackendCore;
use crate::error::Result;

/// An elementwise comparison of two tensors (numpy broadcasting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `a == b`.
    Eq,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
}

impl CmpOp {
    /// The op's name, as in error messages (`eq`, `gt`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
        }
    }
}

/// Comparisons (0/1 `U8` masks, broadcasting) and selection. The named comparisons are
/// provided through `cmp`.
pub trait CompareOps: BackendCore {
    /// `op(a, b)` elementwise as a 0/1 `U8` mask, broadcasting numpy-style.
    fn cmp(op: CmpOp, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `on_true` where `mask` is non-zero, else `on_false` (broadcasting).
    fn where_cond(mask: &Self::Tensor, on_true: &Self::Tensor, on_false: &Self::Tensor) -> Result<Self::Tensor>;

    /// `a == b`.
    fn eq(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::cmp(CmpOp::Eq, a, b)
    }
    /// `a > b`.
    fn gt(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::cmp(CmpOp::Gt, a, b)
    }
    /// `a >= b`.
    fn ge(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::cmp(CmpOp::Ge, a, b)
    }
    /// `a < b`.
    fn lt(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::cmp(CmpOp::Lt, a, b)
    }
    /// `a <= b`.
    fn le(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::cmp(CmpOp::Le, a, b)
    }
}
