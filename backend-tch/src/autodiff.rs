//! Variables and gradients on libtorch's autograd, Adam in place, and host-drawn random tensors.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::backend::{RmsPropSlots, RmsPropStep};
use rlgraph_core::{CoreError, Result};
use tch::Tensor;

use crate::{err, inplace_adam, inplace_rmsprop, threads, Tch, TchTensor};

impl AutodiffOps for Tch {
    type Var = TchTensor;

    fn var(t: &TchTensor) -> Result<TchTensor> {
        threads::sync();
        Ok(TchTensor(t.0.detach().copy().set_requires_grad(true)))
    }
    fn var_tensor(v: &TchTensor) -> &TchTensor {
        v
    }
    fn var_set(v: &TchTensor, t: &TchTensor) -> Result<()> {
        if v.0.size() != t.0.size() || v.0.kind() != t.0.kind() {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "var_set",
                message: format!(
                    "variable is {:?} {:?}, value is {:?} {:?}",
                    v.0.kind(),
                    v.0.size(),
                    t.0.kind(),
                    t.0.size()
                ),
            });
        }
        let mut target = v.0.shallow_clone();
        tch::no_grad(|| target.f_copy_(&t.0)).map_err(err("var_set"))
    }
    fn without_grad<R>(f: impl FnOnce() -> R) -> R {
        tch::no_grad(f)
    }
    fn detach(t: &TchTensor) -> TchTensor {
        TchTensor(t.0.detach())
    }
    fn grads(loss: &TchTensor, vars: &[&TchTensor]) -> Result<Vec<TchTensor>> {
        let inputs: Vec<&Tensor> = vars.iter().map(|v| &v.0).collect();
        // Variables the loss does not use come back undefined; they get zeros, as on candle.
        let gs = Tensor::f_run_backward(&[&loss.0], &inputs, false, false).map_err(err("grads"))?;
        Ok(gs
            .into_iter()
            .zip(vars)
            .map(|(g, v)| {
                if g.defined() {
                    TchTensor(g)
                } else {
                    TchTensor(v.0.zeros_like())
                }
            })
            .collect())
    }
}

impl OptimizerOps for Tch {
    fn adam_step(
        var: &TchTensor,
        m: &TchTensor,
        v: &TchTensor,
        g: &TchTensor,
        h: &rlgraph_core::AdamStep,
    ) -> Result<()> {
        let same = |t: &TchTensor| t.0.size() == var.0.size() && t.0.kind() == var.0.kind();
        if !(same(m) && same(v) && same(g)) {
            return rlgraph_core::backend::adam_step_ops::<Self>(var, m, v, g, h);
        }
        inplace_adam::step_for_device(&var.0, &m.0, &v.0, &g.0, h).map_err(err("adam_step"))
    }

    fn rmsprop_step(var: &TchTensor, slots: RmsPropSlots<'_, TchTensor>, g: &TchTensor, h: &RmsPropStep) -> Result<()> {
        let same = |t: &TchTensor| t.0.size() == var.0.size() && t.0.kind() == var.0.kind();
        let operands = [Some(slots.v), slots.mg, slots.mom, Some(g)];
        if !operands.into_iter().flatten().all(same) {
            return rlgraph_core::backend::rmsprop_step_ops::<Self>(var, slots, g, h);
        }
        inplace_rmsprop::step(&var.0, slots, &g.0, h).map_err(err("rmsprop_step"))
    }
}

/// Random tensors are drawn on the host (the default), so a seed gives the same numbers as on candle.
impl RandomOps for Tch {}
