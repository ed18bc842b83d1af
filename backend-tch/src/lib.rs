//! The libtorch backend for rlgraph-rs, through `tch` 0.26 (libtorch 2.13.0), on CPU and CUDA.
//!
//! libtorch comes from the `torch==2.13.0` wheel on PyPI: `scripts/install-libtorch.sh` puts a
//! CPU build of it in `.libtorch/` and `.cargo/config.toml` points `LIBTORCH` there. With a
//! CUDA libtorch (`LIBTORCH` pointing at a full install), `Device::Cuda(n)` works too: the
//! backend loads `libtorch_cuda.so` itself before the first GPU query.
//!
//! ```
//! use backend_tch::Tch;
//! use rlgraph_core::backend::prelude::*;
//! use rlgraph_core::{Device, HostTensor};
//!
//! let a = Tch::from_host(&HostTensor::f32([2], vec![1.0, 2.0])?, Device::Cpu)?;
//! let b = Tch::affine(&a, 2.0, 1.0)?;
//! assert_eq!(Tch::to_host(&b)?, HostTensor::f32([2], vec![3.0, 5.0])?);
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```

use rlgraph_core::backend::prelude::*;
use rlgraph_core::profiler::Category;
use rlgraph_core::{CoreError, DType, Device, HostData, HostTensor, Result};
use tch::{Kind, Tensor};

mod autodiff;
mod bitwise;
mod compare;
mod cuda_adam;
mod cuda_graph;
mod cuda_kernel;
mod cuda_runtime;
mod cuda_shim;
mod elementwise;
mod index;
mod inplace_adam;
mod inplace_rmsprop;
mod module;
mod reduce;
mod shape;
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

pub(crate) fn err(op: &'static str) -> impl FnOnce(tch::TchError) -> CoreError {
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

pub(crate) fn ok(t: std::result::Result<Tensor, tch::TchError>, op: &'static str) -> Result<TchTensor> {
    t.map(TchTensor).map_err(err(op))
}

pub(crate) fn to_tdevice(device: Device) -> Result<tch::Device> {
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

pub(crate) fn to_kind(dtype: DType) -> Kind {
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

pub(crate) fn dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

pub(crate) fn mask(t: std::result::Result<Tensor, tch::TchError>, op: &'static str) -> Result<TchTensor> {
    ok(t.and_then(|m| m.f_to_kind(Kind::Uint8)), op)
}

impl BackendCore for Tch {
    type Tensor = TchTensor;

    const NAME: &'static str = "tch";

    fn device_available(device: Device) -> bool {
        to_tdevice(device).is_ok()
    }

    fn from_host(host: &HostTensor, device: Device) -> Result<TchTensor> {
        if device != Device::Cpu {
            cuda_graph::not_recording("upload")?;
        }
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
        cuda_graph::not_recording("download")?;
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
        if Self::device(t) != device {
            cuda_graph::not_recording("device_move")?;
        }
        let _transfer = rlgraph_core::profiler::capture(Category::Transfer, "device_move");
        ok(t.0.f_to_device(to_tdevice(device)?), "to_device")
    }

    fn sync(device: Device) -> Result<()> {
        if let Device::Cuda(i) = device {
            to_tdevice(device)?;
            let _exclusive = cuda_graph::device_wide("sync")?;
            tch::Cuda::synchronize(i as i64);
        }
        Ok(())
    }

    fn cast(t: &TchTensor, dtype: DType) -> Result<TchTensor> {
        ok(t.0.f_to_kind(to_kind(dtype)), "cast")
    }
}
