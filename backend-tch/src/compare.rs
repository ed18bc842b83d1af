//! The comparison family on libtorch: masks as `Uint8`, selection through a `Bool` copy.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::{CmpOp, Result};
use tch::Kind;

use crate::{mask, ok, Tch, TchTensor};

impl CompareOps for Tch {
    fn cmp(op: CmpOp, a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        let (a, b) = (&a.0, &b.0);
        let out = match op {
            CmpOp::Eq => a.f_eq_tensor(b),
            CmpOp::Gt => a.f_gt_tensor(b),
            CmpOp::Ge => a.f_ge_tensor(b),
            CmpOp::Lt => a.f_lt_tensor(b),
            CmpOp::Le => a.f_le_tensor(b),
        };
        mask(out, op.name())
    }
    fn where_cond(m: &TchTensor, on_true: &TchTensor, on_false: &TchTensor) -> Result<TchTensor> {
        ok(
            m.0.f_to_kind(Kind::Bool)
                .and_then(|b| on_true.0.f_where_self(&b, &on_false.0)),
            "where_cond",
        )
    }
}
