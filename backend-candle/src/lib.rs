//! The candle backend for rlgraph-rs: pure Rust, no system libraries, the embedded default.
//!
//! [`Candle`] implements [`rlgraph_core::Backend`] on candle's CPU device (and CUDA when
//! candle is built with its `cuda` feature, which this workspace does not turn on).
//!
//! ```
//! use backend_candle::Candle;
//! use rlgraph_core::{Backend, Device, HostTensor};
//!
//! let a = Candle::from_host(&HostTensor::f32([2], vec![1.0, 2.0])?, Device::Cpu)?;
//! let b = Candle::affine(&a, 2.0, 1.0)?;
//! assert_eq!(Candle::to_host(&b)?, HostTensor::f32([2], vec![3.0, 5.0])?);
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```
//!
//! Threads need no call: matrix products and convolutions run on this crate's kernels with
//! the process's count (`rlgraph_core::threads`, one by default), and candle's elementwise
//! pool is sized to it at first use ([`init_threads`] changes both).

mod bias_add;
mod conv2d;
mod fast_tanh;
mod fused_adam;
mod gemm_call;
mod matmul;
#[cfg(test)]
mod test_values;
mod threads;

pub use threads::init_threads;

use candle_core::{DType as CDType, Device as CDevice, Tensor, Var};
use rlgraph_core::profiler::Category;
use rlgraph_core::{AdamStep, Backend, CoreError, DType, Device, HostData, HostTensor, Result};

pub use candle_core;

/// The candle backend (CPU; CUDA where candle's `cuda` feature is built).
#[derive(Clone, Copy, Debug, Default)]
pub struct Candle;

fn err(op: &'static str) -> impl FnOnce(candle_core::Error) -> CoreError {
    move |e| backend_error(op, e)
}

// Out of line and cold: every inlined op wrapper carries only a call to it.
#[cold]
#[inline(never)]
fn backend_error(op: &'static str, e: candle_core::Error) -> CoreError {
    CoreError::Backend {
        backend: Candle::NAME,
        op,
        message: e.to_string(),
    }
}

fn to_cdevice(device: Device) -> Result<CDevice> {
    match device {
        Device::Cpu => Ok(CDevice::Cpu),
        Device::Cuda(i) => CDevice::new_cuda(i).map_err(err("to_device")),
    }
}

fn to_cdtype(dtype: DType) -> CDType {
    match dtype {
        DType::F32 => CDType::F32,
        DType::F64 => CDType::F64,
        DType::I64 => CDType::I64,
        DType::U8 => CDType::U8,
    }
}

/// The numpy broadcast of two shapes, or an error naming both.
fn broadcast_shape(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    (0..n)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(CoreError::Backend {
                backend: Candle::NAME,
                op,
                message: format!("shapes {a:?} and {b:?} do not broadcast"),
            }),
        })
        .collect()
}

fn full_like(t: &Tensor, value: f64) -> Result<Tensor> {
    Candle::full(&[], value, Candle::dtype(t), Candle::device(t))
}

impl Backend for Candle {
    type Tensor = Tensor;
    type Var = Var;

    const NAME: &'static str = "candle";

    fn device_available(device: Device) -> bool {
        to_cdevice(device).is_ok()
    }

    fn from_host(host: &HostTensor, device: Device) -> Result<Tensor> {
        threads::first_use();
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "upload");
        let dev = to_cdevice(device)?;
        let shape = host.shape.clone();
        match &host.data {
            HostData::F32(v) => Tensor::from_slice(v, shape, &dev),
            HostData::F64(v) => Tensor::from_slice(v, shape, &dev),
            HostData::I64(v) => Tensor::from_slice(v, shape, &dev),
            HostData::U8(v) => Tensor::from_slice(v, shape, &dev),
        }
        .map_err(err("from_host"))
    }

    fn to_host(t: &Tensor) -> Result<HostTensor> {
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "download");
        let flat = t.flatten_all().map_err(err("to_host"))?;
        let data = match t.dtype() {
            CDType::F32 => HostData::F32(flat.to_vec1().map_err(err("to_host"))?),
            CDType::F64 => HostData::F64(flat.to_vec1().map_err(err("to_host"))?),
            CDType::I64 => HostData::I64(flat.to_vec1().map_err(err("to_host"))?),
            CDType::U8 => HostData::U8(flat.to_vec1().map_err(err("to_host"))?),
            other => {
                let f = flat.to_dtype(CDType::F32).map_err(err("to_host"))?;
                let _ = other;
                HostData::F32(f.to_vec1().map_err(err("to_host"))?)
            }
        };
        HostTensor::new(t.dims().to_vec(), data)
    }

    fn full(shape: &[usize], value: f64, dtype: DType, device: Device) -> Result<Tensor> {
        threads::first_use();
        let n: usize = shape.iter().product();
        Self::from_host(
            &HostTensor::new(shape, HostData::from_f64(&vec![value; n], dtype))?,
            device,
        )
    }

    fn arange(n: usize, device: Device) -> Result<Tensor> {
        threads::first_use();
        Tensor::arange(0i64, n as i64, &to_cdevice(device)?).map_err(err("arange"))
    }

    fn shape(t: &Tensor) -> Vec<usize> {
        t.dims().to_vec()
    }

    fn dtype(t: &Tensor) -> DType {
        match t.dtype() {
            CDType::F64 => DType::F64,
            CDType::I64 | CDType::U32 | CDType::I32 | CDType::I16 => DType::I64,
            CDType::U8 => DType::U8,
            _ => DType::F32,
        }
    }

    fn device(t: &Tensor) -> Device {
        match t.device().location() {
            candle_core::DeviceLocation::Cuda { gpu_id } => Device::Cuda(gpu_id),
            _ => Device::Cpu,
        }
    }

    fn to_device(t: &Tensor, device: Device) -> Result<Tensor> {
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "device_move");
        t.to_device(&to_cdevice(device)?).map_err(err("to_device"))
    }

    fn sync(device: Device) -> Result<()> {
        to_cdevice(device)?.synchronize().map_err(err("sync"))
    }

    fn cast(t: &Tensor, dtype: DType) -> Result<Tensor> {
        t.to_dtype(to_cdtype(dtype)).map_err(err("cast"))
    }

    fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
        let y = Self::matmul(x, w)?;
        match bias_add::apply(&y, b) {
            Some(y) => y.map_err(err("linear")),
            None => Self::add(&y, b),
        }
    }
    #[inline]
    fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_add(b).map_err(err("add"))
    }
    #[inline]
    fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_sub(b).map_err(err("sub"))
    }
    #[inline]
    fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_mul(b).map_err(err("mul"))
    }
    #[inline]
    fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_div(b).map_err(err("div"))
    }
    fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_maximum(b).map_err(err("maximum"))
    }
    fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_minimum(b).map_err(err("minimum"))
    }
    fn pow(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_pow(b).map_err(err("pow"))
    }
    fn affine(t: &Tensor, mul: f64, add: f64) -> Result<Tensor> {
        t.affine(mul, add).map_err(err("affine"))
    }

    fn neg(t: &Tensor) -> Result<Tensor> {
        t.neg().map_err(err("neg"))
    }
    fn exp(t: &Tensor) -> Result<Tensor> {
        t.exp().map_err(err("exp"))
    }
    fn log(t: &Tensor) -> Result<Tensor> {
        t.log().map_err(err("log"))
    }
    fn sqrt(t: &Tensor) -> Result<Tensor> {
        t.sqrt().map_err(err("sqrt"))
    }
    fn square(t: &Tensor) -> Result<Tensor> {
        t.sqr().map_err(err("square"))
    }
    fn abs(t: &Tensor) -> Result<Tensor> {
        t.abs().map_err(err("abs"))
    }
    fn tanh(t: &Tensor) -> Result<Tensor> {
        fast_tanh::apply(t).map_err(err("tanh"))
    }
    fn sin(t: &Tensor) -> Result<Tensor> {
        t.sin().map_err(err("sin"))
    }
    fn cos(t: &Tensor) -> Result<Tensor> {
        t.cos().map_err(err("cos"))
    }
    fn floor(t: &Tensor) -> Result<Tensor> {
        t.floor().map_err(err("floor"))
    }
    fn sigmoid(t: &Tensor) -> Result<Tensor> {
        // 1 / (1 + e^-t): e^-t overflowing to inf still gives the right limit 0.
        t.neg()
            .and_then(|x| x.exp())
            .and_then(|x| x.affine(1.0, 1.0))
            .and_then(|x| x.recip())
            .map_err(err("sigmoid"))
    }
    #[inline]
    fn relu(t: &Tensor) -> Result<Tensor> {
        t.relu().map_err(err("relu"))
    }
    fn clamp(t: &Tensor, min: f64, max: f64) -> Result<Tensor> {
        let lo = full_like(t, min)?;
        let hi = full_like(t, max)?;
        t.broadcast_maximum(&lo)
            .and_then(|x| x.broadcast_minimum(&hi))
            .map_err(err("clamp"))
    }

    fn eq(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_eq(b).map_err(err("eq"))
    }
    fn gt(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_gt(b).map_err(err("gt"))
    }
    fn ge(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_ge(b).map_err(err("ge"))
    }
    fn lt(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_lt(b).map_err(err("lt"))
    }
    fn le(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        a.broadcast_le(b).map_err(err("le"))
    }
    fn where_cond(mask: &Tensor, on_true: &Tensor, on_false: &Tensor) -> Result<Tensor> {
        let s = broadcast_shape("where_cond", mask.dims(), on_true.dims())?;
        let s = broadcast_shape("where_cond", &s, on_false.dims())?;
        let m = mask.broadcast_as(s.clone()).map_err(err("where_cond"))?;
        let t = on_true.broadcast_as(s.clone()).map_err(err("where_cond"))?;
        let f = on_false.broadcast_as(s).map_err(err("where_cond"))?;
        m.where_cond(&t, &f).map_err(err("where_cond"))
    }

    fn sum(t: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
        if keepdim { t.sum_keepdim(dims) } else { t.sum(dims) }.map_err(err("sum"))
    }
    fn mean(t: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
        if keepdim { t.mean_keepdim(dims) } else { t.mean(dims) }.map_err(err("mean"))
    }
    fn max(t: &Tensor, dim: usize, keepdim: bool) -> Result<Tensor> {
        if keepdim { t.max_keepdim(dim) } else { t.max(dim) }.map_err(err("max"))
    }
    fn min(t: &Tensor, dim: usize, keepdim: bool) -> Result<Tensor> {
        if keepdim { t.min_keepdim(dim) } else { t.min(dim) }.map_err(err("min"))
    }
    fn argmax(t: &Tensor, dim: usize, keepdim: bool) -> Result<Tensor> {
        // candle returns u32 indices; the Backend contract is I64.
        if keepdim { t.argmax_keepdim(dim) } else { t.argmax(dim) }
            .and_then(|i| i.to_dtype(CDType::I64))
            .map_err(err("argmax"))
    }

    fn reshape(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
        t.reshape(shape).map_err(err("reshape"))
    }
    fn transpose(t: &Tensor, d0: usize, d1: usize) -> Result<Tensor> {
        t.transpose(d0, d1)
            .and_then(|x| x.contiguous())
            .map_err(err("transpose"))
    }
    fn permute(t: &Tensor, dims: &[usize]) -> Result<Tensor> {
        // A view: candle's ops take strided inputs, and a conv layer's permutes there and
        // back compose into the original order without moving data.
        t.permute(dims).map_err(err("permute"))
    }
    fn concat(ts: &[Tensor], dim: usize) -> Result<Tensor> {
        Tensor::cat(ts, dim).map_err(err("concat"))
    }
    fn narrow(t: &Tensor, dim: usize, start: usize, len: usize) -> Result<Tensor> {
        t.narrow(dim, start, len).map_err(err("narrow"))
    }
    fn broadcast_to(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
        t.broadcast_as(shape).map_err(err("broadcast_to"))
    }
    fn unsqueeze(t: &Tensor, dim: usize) -> Result<Tensor> {
        t.unsqueeze(dim).map_err(err("unsqueeze"))
    }
    fn squeeze(t: &Tensor, dim: usize) -> Result<Tensor> {
        if t.dims().get(dim) != Some(&1) {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "squeeze",
                message: format!("dimension {dim} of shape {:?} is not of size 1", t.dims()),
            });
        }
        t.squeeze(dim).map_err(err("squeeze"))
    }
    fn pad_zeros(t: &Tensor, dim: usize, before: usize, after: usize) -> Result<Tensor> {
        t.pad_with_zeros(dim, before, after).map_err(err("pad_zeros"))
    }

    #[inline]
    fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        if let Some(product) = matmul::apply(a, b) {
            return product.map_err(err("matmul"));
        }
        // candle's matmul refuses some strided layouts (transposed operands, say); only then
        // copy the operands, so the common contiguous case pays no copy and no checks twice.
        if let Ok(product) = a.matmul(b) {
            return Ok(product);
        }
        a.contiguous()
            .and_then(|a| a.matmul(&b.contiguous()?))
            .map_err(err("matmul"))
    }
    fn conv2d(x: &Tensor, w: &Tensor, stride: usize, padding: usize) -> Result<Tensor> {
        if let Some(y) = conv2d::apply(x, w, stride, padding) {
            return y.map_err(err("conv2d"));
        }
        x.conv2d(w, padding, stride, 1, 1).map_err(err("conv2d"))
    }
    fn max_pool2d(x: &Tensor, kernel: usize, stride: usize) -> Result<Tensor> {
        x.max_pool2d_with_stride(kernel, stride).map_err(err("max_pool2d"))
    }

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

    fn var(t: &Tensor) -> Result<Var> {
        threads::first_use();
        Var::from_tensor(t).map_err(err("var"))
    }
    fn adam_step(var: &Var, m: &Var, v: &Var, g: &Tensor, h: &AdamStep) -> Result<()> {
        if fused_adam::step(var, m, v, g, h).map_err(err("adam_step"))? {
            return Ok(());
        }
        rlgraph_core::backend::adam_step_ops::<Self>(var, m, v, g, h)
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
        let store = loss.backward().map_err(err("grads"))?;
        vars.iter()
            .map(|v| match store.get(v.as_tensor()) {
                Some(g) => Ok(g.clone()),
                None => v.as_tensor().zeros_like().map_err(err("grads")),
            })
            .collect()
    }
}
