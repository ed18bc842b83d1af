//! Variables and gradients on libtorch's autograd, Adam in place, and random tensors (host
//! draws, or libtorch's generator on a device where a run asked for it).

use rand::RngCore;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::backend::{
    normal_on_host, sample_indices_on_host, uniform_on_host, DType, Device, RmsPropSlots, RmsPropStep,
};
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

    fn adam_step_scaled(
        var: &TchTensor,
        m: &TchTensor,
        v: &TchTensor,
        g: &TchTensor,
        h: &rlgraph_core::AdamScalars<TchTensor>,
    ) -> Result<()> {
        let same = |t: &TchTensor| t.0.size() == var.0.size() && t.0.kind() == var.0.kind();
        if !(same(m) && same(v) && same(g)) {
            return rlgraph_core::backend::adam_step_scaled_ops::<Self>(var, m, v, g, h);
        }
        if crate::cuda_adam::step(var, m, v, g, h)? {
            return Ok(());
        }
        inplace_adam::step_scaled(&var.0, &m.0, &v.0, &g.0, h).map_err(err("adam_step_scaled"))
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

/// Random tensors are drawn on the host (the default), so a seed gives the same numbers as on
/// candle; on a CUDA device whose draws a run moved there (`GraphCapture::draw_on_device`),
/// libtorch's seeded generator draws them on the device instead.
impl RandomOps for Tch {
    fn uniform(
        shape: &[usize],
        low: f64,
        high: f64,
        dtype: DType,
        device: Device,
        rng: &mut dyn RngCore,
    ) -> Result<TchTensor> {
        match on_device(shape, dtype, device, "uniform")? {
            Some(mut t) => t.f_uniform_(low, high).map(TchTensor).map_err(err("uniform")),
            None => uniform_on_host::<Self>(shape, low, high, dtype, device, rng),
        }
    }

    fn normal(
        shape: &[usize],
        mean: f64,
        std: f64,
        dtype: DType,
        device: Device,
        rng: &mut dyn RngCore,
    ) -> Result<TchTensor> {
        match on_device(shape, dtype, device, "normal")? {
            Some(mut t) => t.f_normal_(mean, std).map(TchTensor).map_err(err("normal")),
            None => normal_on_host::<Self>(shape, mean, std, dtype, device, rng),
        }
    }

    fn sample_indices(total: usize, m: usize, rows: usize, device: Device, rng: &mut dyn RngCore) -> Result<TchTensor> {
        let Some(mut keys) = on_device(&[rows, total], DType::F32, device, "sample_indices")? else {
            return sample_indices_on_host::<Self>(total, m, rows, device, rng);
        };
        // The first m of a uniformly random order: m distinct indices per row.
        let mut drawn = || -> std::result::Result<Tensor, tch::TchError> {
            let order = keys.f_uniform_(0.0, 1.0)?.f_argsort(1, false)?;
            order
                .f_narrow(1, 0, m.min(total) as i64)?
                .f_contiguous()?
                .f_reshape([-1])
        };
        drawn().map(TchTensor).map_err(err("sample_indices"))
    }
}

/// An uninitialized float tensor for a draw on `device`, where its draws are on the device;
/// `None` where they come from the host.
fn on_device(shape: &[usize], dtype: DType, device: Device, op: &'static str) -> Result<Option<Tensor>> {
    if !(crate::cuda_graph::draws_on(device) && matches!(dtype, DType::F32 | DType::F64)) {
        return Ok(None);
    }
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    Tensor::f_empty(dims, (crate::to_kind(dtype), crate::to_tdevice(device)?))
        .map(Some)
        .map_err(err(op))
}
