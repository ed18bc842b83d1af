//! Variables and gradients on candle's `Var` and backprop, the fused Adam step, and host-drawn random tensors.

use candle_core::{Tensor, Var};
use rlgraph_core::backend::prelude::*;
use rlgraph_core::backend::{RmsPropSlots, RmsPropStep};
use rlgraph_core::{AdamStep, CoreError, Result};

use crate::{err, fused_adam, fused_rmsprop, threads, Candle};

impl AutodiffOps for Candle {
    type Var = Var;

    fn var(t: &Tensor) -> Result<Var> {
        threads::first_use();
        Var::from_tensor(t).map_err(err("var"))
    }
    fn var_tensor(v: &Var) -> &Tensor {
        v.as_tensor()
    }
    fn var_set(v: &Var, t: &Tensor) -> Result<()> {
        if v.dims() != t.dims() || v.dtype() != t.dtype() {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "var_set",
                message: format!(
                    "variable is {:?} {:?}, value is {:?} {:?}",
                    v.dtype(),
                    v.dims(),
                    t.dtype(),
                    t.dims()
                ),
            });
        }
        v.set(t).map_err(err("var_set"))
    }
    fn detach(t: &Tensor) -> Tensor {
        t.detach()
    }
    fn grads(loss: &Tensor, vars: &[&Var]) -> Result<Vec<Tensor>> {
        let (store, sunk) = crate::grad_sink::collecting(|| loss.backward());
        let store = store.map_err(err("grads"))?;
        vars.iter()
            .map(|v| match (sunk.get(&v.id()), store.get(v.as_tensor())) {
                (Some(a), Some(b)) => a.add(b).map_err(err("grads")),
                (Some(g), None) | (None, Some(g)) => Ok(g.clone()),
                (None, None) => v.as_tensor().zeros_like().map_err(err("grads")),
            })
            .collect()
    }
}

impl OptimizerOps for Candle {
    fn adam_step(var: &Var, m: &Var, v: &Var, g: &Tensor, h: &AdamStep) -> Result<()> {
        if fused_adam::step(var, m, v, g, h).map_err(err("adam_step"))? {
            return Ok(());
        }
        rlgraph_core::backend::adam_step_ops::<Self>(var, m, v, g, h)
    }

    fn rmsprop_step(var: &Var, slots: RmsPropSlots<'_, Var>, g: &Tensor, h: &RmsPropStep) -> Result<()> {
        if fused_rmsprop::step(var, slots, g, h).map_err(err("rmsprop_step"))? {
            return Ok(());
        }
        rlgraph_core::backend::rmsprop_step_ops::<Self>(var, slots, g, h)
    }
}

/// Random tensors are drawn on the host (the default), so a seed gives the same numbers as on libtorch.
impl RandomOps for Candle {}

/// Candle records no kernel graphs: every method keeps its refusing default.
impl rlgraph_core::GraphCapture for Candle {}
