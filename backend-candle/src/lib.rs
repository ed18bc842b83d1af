//! The candle backend for rlgraph-rs: pure Rust, no system libraries, the embedded default.
//!
//! [`Candle`] implements [`rlgraph_core::Backend`] on candle's CPU device (and CUDA when
//! candle is built with its `cuda` feature, which this workspace does not turn on).
//!
//! ```
//! use backend_candle::Candle;
//! use rlgraph_core::backend::prelude::*;
//! use rlgraph_core::{Device, HostTensor};
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

mod autodiff;
mod bitwise;
mod channel_bias;
mod compare;
mod conv2d;
mod cpu_slices;
mod elementwise;
mod fast_relu;
mod fast_tanh;
mod fused_adam;
mod fused_rmsprop;
mod gemm_call;
mod grad_sink;
mod index;
mod linear;
mod matmul;
mod module;
mod reduce;
mod shape;
#[cfg(test)]
mod test_values;
mod threads;
mod wide_lanes;

pub use threads::init_threads;

use candle_core::{DType as CDType, Device as CDevice, Tensor};
use rlgraph_core::backend::prelude::*;
use rlgraph_core::profiler::Category;
use rlgraph_core::{CoreError, DType, Device, HostData, HostTensor, Result};

pub use candle_core;

/// The candle backend (CPU; CUDA where candle's `cuda` feature is built).
#[derive(Clone, Copy, Debug, Default)]
pub struct Candle;

pub(crate) fn err(op: &'static str) -> impl FnOnce(candle_core::Error) -> CoreError {
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

pub(crate) fn to_cdevice(device: Device) -> Result<CDevice> {
    match device {
        Device::Cpu => Ok(CDevice::Cpu),
        Device::Cuda(i) => CDevice::new_cuda(i).map_err(err("to_device")),
    }
}

pub(crate) fn to_cdtype(dtype: DType) -> CDType {
    match dtype {
        DType::F32 => CDType::F32,
        DType::F64 => CDType::F64,
        DType::I64 => CDType::I64,
        DType::U8 => CDType::U8,
    }
}

/// The numpy broadcast of two shapes, or an error naming both.
pub(crate) fn broadcast_shape(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
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

pub(crate) fn full_like(t: &Tensor, value: f64) -> Result<Tensor> {
    Candle::full(&[], value, Candle::dtype(t), Candle::device(t))
}

impl BackendCore for Candle {
    type Tensor = Tensor;

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
}
