//! The reduction family on libtorch.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::{ReduceOp, Result};

use crate::{dims, ok, Tch, TchTensor};

impl ReduceOps for Tch {
    fn reduce(op: ReduceOp, t: &TchTensor, d: &[usize], keepdim: bool) -> Result<TchTensor> {
        let (t, d) = (&t.0, dims(d));
        let out = match op {
            // The sum and mean keep the input's element type (libtorch would widen integers).
            ReduceOp::Sum => t.f_sum_dim_intlist(d.as_slice(), keepdim, t.kind()),
            ReduceOp::Mean => t.f_mean_dim(d.as_slice(), keepdim, t.kind()),
            ReduceOp::Max => t.f_amax(d.as_slice(), keepdim),
            ReduceOp::Min => t.f_amin(d.as_slice(), keepdim),
        };
        ok(out, op.name())
    }
    fn argmax(t: &TchTensor, dim: usize, keepdim: bool) -> Result<TchTensor> {
        ok(t.0.f_argmax(dim as i64, keepdim), "argmax")
    }
}
