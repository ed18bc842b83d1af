//! The comparison family on candle: `U8` masks, and selection after broadcasting all three operands.

use candle_core::Tensor;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{CmpOp, Result};

use crate::{broadcast_shape, err, Candle};

impl CompareOps for Candle {
    fn cmp(op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        match op {
            CmpOp::Eq => a.broadcast_eq(b),
            CmpOp::Gt => a.broadcast_gt(b),
            CmpOp::Ge => a.broadcast_ge(b),
            CmpOp::Lt => a.broadcast_lt(b),
            CmpOp::Le => a.broadcast_le(b),
        }
        .map_err(err(op.name()))
    }
    fn where_cond(mask: &Tensor, on_true: &Tensor, on_false: &Tensor) -> Result<Tensor> {
        let s = broadcast_shape("where_cond", mask.dims(), on_true.dims())?;
        let s = broadcast_shape("where_cond", &s, on_false.dims())?;
        let m = mask.broadcast_as(s.clone()).map_err(err("where_cond"))?;
        let t = on_true.broadcast_as(s.clone()).map_err(err("where_cond"))?;
        let f = on_false.broadcast_as(s).map_err(err("where_cond"))?;
        m.where_cond(&t, &f).map_err(err("where_cond"))
    }
}
