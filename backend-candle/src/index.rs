//! The indexing family on candle.

use candle_core::{DType as CDType, Tensor};
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{DType, Result};

use crate::{err, to_cdtype, Candle};

impl IndexOps for Candle {
    fn index_select(t: &Tensor, dim: usize, idx: &Tensor) -> Result<Tensor> {
        t.index_select(idx, dim).map_err(err("index_select"))
    }
    fn gather(t: &Tensor, dim: usize, idx: &Tensor) -> Result<Tensor> {
        t.contiguous()
            .and_then(|t| t.gather(&idx.contiguous()?, dim))
            .map_err(err("gather"))
    }
    fn scatter_add(t: &Tensor, dim: usize, idx: &Tensor, src: &Tensor) -> Result<Tensor> {
        t.scatter_add(idx, src, dim).map_err(err("scatter_add"))
    }
    fn one_hot(idx: &Tensor, depth: usize, dtype: DType) -> Result<Tensor> {
        let classes = Self::arange(depth, Self::device(idx))?;
        let idx = idx
            .to_dtype(CDType::I64)
            .and_then(|i| i.unsqueeze(i.rank()))
            .map_err(err("one_hot"))?;
        idx.broadcast_eq(&classes)
            .and_then(|m| m.to_dtype(to_cdtype(dtype)))
            .map_err(err("one_hot"))
    }
}
