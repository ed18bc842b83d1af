//! The indexing family on libtorch.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::{DType, Result};

use crate::{ok, to_kind, Tch, TchTensor};

impl IndexOps for Tch {
    fn index_select(t: &TchTensor, dim: usize, idx: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_index_select(dim as i64, &idx.0), "index_select")
    }
    fn gather(t: &TchTensor, dim: usize, idx: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_gather(dim as i64, &idx.0, false), "gather")
    }
    fn scatter_add(t: &TchTensor, dim: usize, idx: &TchTensor, src: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_scatter_add(dim as i64, &idx.0, &src.0), "scatter_add")
    }
    fn one_hot(idx: &TchTensor, depth: usize, dtype: DType) -> Result<TchTensor> {
        ok(
            idx.0.f_one_hot(depth as i64).and_then(|x| x.f_to_kind(to_kind(dtype))),
            "one_hot",
        )
    }
}
