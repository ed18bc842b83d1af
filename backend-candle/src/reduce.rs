//! The reduction family on candle, whose maxima and minima take one dimension at a time.

use candle_core::Tensor;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{ReduceOp, Result};

use crate::{err, Candle};
use candle_core::DType as CDType;

impl ReduceOps for Candle {
    fn reduce(op: ReduceOp, t: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
        let out = match op {
            ReduceOp::Sum if keepdim => t.sum_keepdim(dims),
            ReduceOp::Sum => t.sum(dims),
            ReduceOp::Mean if keepdim => t.mean_keepdim(dims),
            ReduceOp::Mean => t.mean(dims),
            ReduceOp::Max | ReduceOp::Min => extremum(op == ReduceOp::Max, t, dims, keepdim),
        };
        out.map_err(err(op.name()))
    }
    fn argmax(t: &Tensor, dim: usize, keepdim: bool) -> Result<Tensor> {
        // candle returns u32 indices; the Backend contract is I64.
        if keepdim { t.argmax_keepdim(dim) } else { t.argmax(dim) }
            .and_then(|i| i.to_dtype(CDType::I64))
            .map_err(err("argmax"))
    }
}

/// The largest (or smallest) value over `dims`: candle reduces one dimension at a time, so
/// each is kept while the others go, then the kept ones are dropped from the last back.
fn extremum(largest: bool, t: &Tensor, dims: &[usize], keepdim: bool) -> candle_core::Result<Tensor> {
    let mut sorted = dims.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        candle_core::bail!("dimension listed twice in {dims:?}");
    }
    let mut out = t.clone();
    for &d in &sorted {
        out = if largest {
            out.max_keepdim(d)?
        } else {
            out.min_keepdim(d)?
        };
    }
    if !keepdim {
        for &d in sorted.iter().rev() {
            out = out.squeeze(d)?;
        }
    }
    Ok(out)
}
