//! The libtorch backend for rlgraph-rs, through `tch` 0.26 (libtorch 2.13.0), on CPU and CUDA.
//!
//! libtorch comes from the `torch==2.13.0` wheel on PyPI: `scripts/install-libtorch.sh` puts a
//! CPU build of it in `.libtorch/` and `.cargo/config.toml` points `LIBTORCH` there. With a
//! CUDA libtorch (`LIBTORCH` pointing at a full install), `Device::Cuda(n)` works too: the
//! backend loads `libtorch_cuda.so` itself before the first GPU query.
//!
//! ```
//! use backend_tch::Tch;
//! use rlgraph_core::{Backend, Device, HostTensor};
//!
//! let a = Tch::from_host(&HostTensor::f32([2], vec![1.0, 2.0])?, Device::Cpu)?;
//! let b = Tch::affine(&a, 2.0, 1.0)?;
//! assert_eq!(Tch::to_host(&b)?, HostTensor::f32([2], vec![3.0, 5.0])?);
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```

use rlgraph_core::profiler::Category;
use rlgraph_core::{Backend, CoreError, DType, Device, HostData, HostTensor, Result};
use tch::{Kind, Tensor};

mod cuda_graph;
mod cuda_kernel;
mod cuda_runtime;
mod cuda_shim;
mod inplace_adam;
mod threads;

pub use cuda_graph::CudaGraph;
pub use cuda_kernel::CudaKernel;
pub use tch;
pub use threads::intra_op_threads;

/// The libtorch backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tch;

/// A libtorch tensor handle; cloning shares the storage (`shallow_clone`), as tensors are
/// treated as immutable values everywhere except in `Backend::var_set`.
#[derive(Debug)]
pub struct TchTensor(pub Tensor);

impl Clone for TchTensor {
    fn clone(&self) -> Self {
        TchTensor(self.0.shallow_clone())
    }
}

fn err(op: &'static str) -> impl FnOnce(tch::TchError) -> CoreError {
    move |e| backend_error(op, e)
}

// Out of line and cold: every inlined op wrapper carries only a call to it.
#[cold]
#[inline(never)]
fn backend_error(op: &'static str, e: tch::TchError) -> CoreError {
    CoreError::Backend {
        backend: Tch::NAME,
        op,
        message: e.to_string(),
    }
}

fn ok(t: std::result::Result<Tensor, tch::TchError>, op: &'static str) -> Result<TchTensor> {
    t.map(TchTensor).map_err(err(op))
}

fn to_tdevice(device: Device) -> Result<tch::Device> {
    match device {
        Device::Cpu => Ok(tch::Device::Cpu),
        Device::Cuda(i) => match cuda_runtime::cuda_status() {
            Ok(()) if (i as i64) < tch::Cuda::device_count() => Ok(tch::Device::Cuda(i)),
            Ok(()) => Err(CoreError::Device(format!(
                "cuda:{i} is not available to libtorch ({} CUDA devices); use cpu or a lower ordinal",
                tch::Cuda::device_count()
            ))),
            Err(why) => Err(CoreError::Device(format!(
                "cuda:{i} is not available to libtorch ({why}); use cpu, or a CUDA libtorch on a GPU machine"
            ))),
        },
    }
}

fn to_kind(dtype: DType) -> Kind {
    match dtype {
        DType::F32 => Kind::Float,
        DType::F64 => Kind::Double,
        DType::I64 => Kind::Int64,
        DType::U8 => Kind::Uint8,
    }
}

/// `t`'s elements, row-major, on the host (`T` must be `t`'s element type).
fn download<T: tch::kind::Element>(t: &Tensor) -> Result<Vec<T>> {
    let n = t.numel();
    let mut v = vec![T::ZERO; n];
    t.f_copy_data(&mut v, n).map_err(err("to_host"))?;
    Ok(v)
}

/// `t` as `kind`.
fn converted(t: &Tensor, kind: Kind) -> Result<Tensor> {
    t.f_to_kind(kind).map_err(err("to_host"))
}

fn dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

fn mask(t: std::result::Result<Tensor, tch::TchError>, op: &'static str) -> Result<TchTensor> {
    ok(t.and_then(|m| m.f_to_kind(Kind::Uint8)), op)
}

impl Backend for Tch {
    type Tensor = TchTensor;
    type Var = TchTensor;

    const NAME: &'static str = "tch";

    fn device_available(device: Device) -> bool {
        to_tdevice(device).is_ok()
    }

    fn from_host(host: &HostTensor, device: Device) -> Result<TchTensor> {
        threads::sync();
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "upload");
        let dev = to_tdevice(device)?;
        let (bytes, kind, len): (&[u8], Kind, usize) = match &host.data {
            HostData::F32(v) => (bytemuck::cast_slice(v), Kind::Float, v.len()),
            HostData::F64(v) => (bytemuck::cast_slice(v), Kind::Double, v.len()),
            HostData::I64(v) => (bytemuck::cast_slice(v), Kind::Int64, v.len()),
            HostData::U8(v) => (v, Kind::Uint8, v.len()),
        };
        // libtorch copies as many elements as the shape holds: a shape that does not match
        // the data would read past it.
        if host.shape.iter().product::<usize>() != len {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "from_host",
                message: format!("shape {:?} does not hold {len} elements", host.shape),
            });
        }
        let size = dims(&host.shape);
        if dev != tch::Device::Cpu {
            // Straight from the host data to the device, without first copying it into a CPU
            // tensor: on a GPU an Atari batch's extra host copy cost as much as the network.
            let mut strides = vec![1i64; size.len()];
            for i in (0..size.len().saturating_sub(1)).rev() {
                strides[i] = strides[i + 1] * size[i + 1];
            }
            // SAFETY: `bytes` holds exactly the elements of `size` in row-major order (checked
            // above) and outlives `view`. `view` only borrows it for the copy to the device,
            // which libtorch makes synchronously from pageable host memory (non_blocking is
            // false), so nothing reads `bytes` after `f_to_device` returns and `view` drops.
            let view = unsafe { Tensor::f_from_blob(bytes.as_ptr(), &size, &strides, kind, tch::Device::Cpu) }
                .map_err(err("from_host"))?;
            return ok(view.f_to_device(dev), "from_host");
        }
        // Made at its shape in one step: a reshape would cost a dispatch per upload.
        let t = Tensor::f_from_data_size(bytes, &size, kind).map_err(err("from_host"))?;
        Ok(TchTensor(t))
    }

    fn to_host(t: &TchTensor) -> Result<HostTensor> {
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "download");
        let shape: Vec<usize> = t.0.size().iter().map(|&d| d as usize).collect();
        // libtorch's copy moves the data off the device and makes it contiguous itself;
        // only element types without a host type of their own are converted first.
        let data = match t.0.kind() {
            Kind::Double => HostData::F64(download(&t.0)?),
            Kind::Int64 => HostData::I64(download(&t.0)?),
            Kind::Int | Kind::Int16 | Kind::Int8 => HostData::I64(download(&converted(&t.0, Kind::Int64)?)?),
            Kind::Uint8 => HostData::U8(download(&t.0)?),
            Kind::Bool => HostData::U8(download(&converted(&t.0, Kind::Uint8)?)?),
            Kind::Float => HostData::F32(download(&t.0)?),
            _ => HostData::F32(download(&converted(&t.0, Kind::Float)?)?),
        };
        HostTensor::new(shape, data)
    }

    fn full(shape: &[usize], value: f64, dtype: DType, device: Device) -> Result<TchTensor> {
        threads::sync();
        ok(
            Tensor::f_full(dims(shape), value, (to_kind(dtype), to_tdevice(device)?)),
            "full",
        )
    }

    fn arange(n: usize, device: Device) -> Result<TchTensor> {
        threads::sync();
        ok(Tensor::f_arange(n as i64, (Kind::Int64, to_tdevice(device)?)), "arange")
    }

    fn shape(t: &TchTensor) -> Vec<usize> {
        t.0.size().iter().map(|&d| d as usize).collect()
    }

    fn dtype(t: &TchTensor) -> DType {
        match t.0.kind() {
            Kind::Double => DType::F64,
            Kind::Int64 | Kind::Int | Kind::Int16 | Kind::Int8 => DType::I64,
            Kind::Uint8 | Kind::Bool => DType::U8,
            _ => DType::F32,
        }
    }

    fn device(t: &TchTensor) -> Device {
        match t.0.device() {
            tch::Device::Cuda(i) => Device::Cuda(i),
            _ => Device::Cpu,
        }
    }

    fn to_device(t: &TchTensor, device: Device) -> Result<TchTensor> {
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "device_move");
        ok(t.0.f_to_device(to_tdevice(device)?), "to_device")
    }

    fn sync(device: Device) -> Result<()> {
        if let Device::Cuda(i) = device {
            to_tdevice(device)?;
            tch::Cuda::synchronize(i as i64);
        }
        Ok(())
    }

    fn cast(t: &TchTensor, dtype: DType) -> Result<TchTensor> {
        ok(t.0.f_to_kind(to_kind(dtype)), "cast")
    }

    #[inline]
    fn add(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_add(&b.0), "add")
    }
    #[inline]
    fn sub(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_sub(&b.0), "sub")
    }
    #[inline]
    fn mul(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_mul(&b.0), "mul")
    }
    #[inline]
    fn div(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        // Integer division truncates toward zero, as candle's does.
        if a.0.is_floating_point() {
            ok(a.0.f_div(&b.0), "div")
        } else {
            ok(a.0.f_div_tensor_mode(&b.0, "trunc"), "div")
        }
    }
    fn maximum(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_maximum(&b.0), "maximum")
    }
    fn minimum(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_minimum(&b.0), "minimum")
    }
    fn pow(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_pow(&b.0), "pow")
    }
    fn affine(t: &TchTensor, mul: f64, add: f64) -> Result<TchTensor> {
        let kind = t.0.kind();
        ok(
            t.0.f_mul_scalar(mul)
                .and_then(|x| x.f_add_scalar(add))
                .and_then(|x| x.f_to_kind(kind)),
            "affine",
        )
    }

    fn neg(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_neg(), "neg")
    }
    fn exp(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_exp(), "exp")
    }
    fn log(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_log(), "log")
    }
    fn sqrt(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_sqrt(), "sqrt")
    }
    fn square(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_square(), "square")
    }
    fn abs(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_abs(), "abs")
    }
    fn tanh(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_tanh(), "tanh")
    }
    fn sin(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_sin(), "sin")
    }
    fn cos(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_cos(), "cos")
    }
    fn floor(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_floor(), "floor")
    }
    fn sigmoid(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_sigmoid(), "sigmoid")
    }
    #[inline]
    fn relu(t: &TchTensor) -> Result<TchTensor> {
        ok(t.0.f_relu(), "relu")
    }
    fn clamp(t: &TchTensor, min: f64, max: f64) -> Result<TchTensor> {
        ok(t.0.f_clamp(min, max), "clamp")
    }

    fn eq(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        mask(a.0.f_eq_tensor(&b.0), "eq")
    }
    fn gt(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        mask(a.0.f_gt_tensor(&b.0), "gt")
    }
    fn ge(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        mask(a.0.f_ge_tensor(&b.0), "ge")
    }
    fn lt(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        mask(a.0.f_lt_tensor(&b.0), "lt")
    }
    fn le(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        mask(a.0.f_le_tensor(&b.0), "le")
    }
    fn where_cond(m: &TchTensor, on_true: &TchTensor, on_false: &TchTensor) -> Result<TchTensor> {
        ok(
            m.0.f_to_kind(Kind::Bool)
                .and_then(|b| on_true.0.f_where_self(&b, &on_false.0)),
            "where_cond",
        )
    }

    fn sum(t: &TchTensor, d: &[usize], keepdim: bool) -> Result<TchTensor> {
        let kind = t.0.kind();
        ok(t.0.f_sum_dim_intlist(dims(d).as_slice(), keepdim, kind), "sum")
    }
    fn mean(t: &TchTensor, d: &[usize], keepdim: bool) -> Result<TchTensor> {
        let kind = t.0.kind();
        ok(t.0.f_mean_dim(dims(d).as_slice(), keepdim, kind), "mean")
    }
    fn max(t: &TchTensor, dim: usize, keepdim: bool) -> Result<TchTensor> {
        ok(t.0.f_amax([dim as i64], keepdim), "max")
    }
    fn min(t: &TchTensor, dim: usize, keepdim: bool) -> Result<TchTensor> {
        ok(t.0.f_amin([dim as i64], keepdim), "min")
    }
    fn argmax(t: &TchTensor, dim: usize, keepdim: bool) -> Result<TchTensor> {
        ok(t.0.f_argmax(dim as i64, keepdim), "argmax")
    }

    fn reshape(t: &TchTensor, shape: &[usize]) -> Result<TchTensor> {
        // Reshaping to the same shape (a policy's logits at a flat action) would cost a
        // dispatch for a view of the same tensor.
        let dims = dims(shape);
        if t.0.size() == dims {
            return Ok(t.clone());
        }
        ok(t.0.f_reshape(dims), "reshape")
    }
    fn transpose(t: &TchTensor, d0: usize, d1: usize) -> Result<TchTensor> {
        ok(
            t.0.f_transpose(d0 as i64, d1 as i64).and_then(|x| x.f_contiguous()),
            "transpose",
        )
    }
    fn permute(t: &TchTensor, dims: &[usize]) -> Result<TchTensor> {
        let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        // A view, not a copy: libtorch's kernels take strided inputs, and an NHWC image seen
        // as NCHW is its channels-last layout, which its convolutions run on directly (a
        // conv layer's permutes there and back then move no data).
        ok(t.0.f_permute(&dims), "permute")
    }
    fn concat(ts: &[TchTensor], dim: usize) -> Result<TchTensor> {
        let inner: Vec<&Tensor> = ts.iter().map(|t| &t.0).collect();
        ok(Tensor::f_cat(&inner, dim as i64), "concat")
    }
    fn narrow(t: &TchTensor, dim: usize, start: usize, len: usize) -> Result<TchTensor> {
        ok(t.0.f_narrow(dim as i64, start as i64, len as i64), "narrow")
    }
    fn broadcast_to(t: &TchTensor, shape: &[usize]) -> Result<TchTensor> {
        ok(t.0.f_broadcast_to(dims(shape)), "broadcast_to")
    }
    fn unsqueeze(t: &TchTensor, dim: usize) -> Result<TchTensor> {
        ok(t.0.f_unsqueeze(dim as i64), "unsqueeze")
    }
    fn squeeze(t: &TchTensor, dim: usize) -> Result<TchTensor> {
        let shape = Self::shape(t);
        if shape.get(dim) != Some(&1) {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "squeeze",
                message: format!("dimension {dim} of shape {shape:?} is not of size 1"),
            });
        }
        ok(t.0.f_squeeze_dim(dim as i64), "squeeze")
    }
    fn pad_zeros(t: &TchTensor, dim: usize, before: usize, after: usize) -> Result<TchTensor> {
        // constant_pad_nd lists (before, after) pairs from the last dimension backwards.
        let rank = t.0.dim();
        let mut pad = vec![0i64; 2 * (rank - dim)];
        let at = 2 * (rank - 1 - dim);
        pad[at] = before as i64;
        pad[at + 1] = after as i64;
        ok(t.0.f_constant_pad_nd(pad.as_slice()), "pad_zeros")
    }

    #[inline]
    fn matmul(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_matmul(&b.0), "matmul")
    }
    fn linear(x: &TchTensor, w: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(b.0.f_addmm(&x.0, &w.0), "linear")
    }
    fn conv2d(x: &TchTensor, w: &TchTensor, stride: usize, padding: usize) -> Result<TchTensor> {
        let (s, p) = (stride as i64, padding as i64);
        ok(x.0.f_conv2d(&w.0, None::<&Tensor>, [s, s], [p, p], [1, 1], 1), "conv2d")
    }
    fn max_pool2d(x: &TchTensor, kernel: usize, stride: usize) -> Result<TchTensor> {
        let (k, s) = (kernel as i64, stride as i64);
        ok(x.0.f_max_pool2d([k, k], [s, s], [0, 0], [1, 1], false), "max_pool2d")
    }

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
