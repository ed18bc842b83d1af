//! Kernels compiled at run time on tch: [`RuntimeKernels`] through the shim (NVRTC to PTX,
//! the driver loads it, launches go to libtorch's current stream).

use std::ffi::{c_int, c_uint, c_void, CString};

use rlgraph_core::{BackendCore, CoreError, DType, Device, KernelArg, Result, RuntimeKernels};

use crate::cuda_shim::{shim_for, Shim};
use crate::{Tch, TchTensor};

// Launch arguments travel as 8-byte slots whose low bytes the kernel reads.
#[cfg(target_endian = "big")]
compile_error!("backend-tch's kernel launches assume a little-endian target");

/// Threads per block of every launch.
const BLOCK: usize = 256;

/// A kernel compiled for one CUDA device.
pub struct CudaKernel {
    raw: *mut c_void,
    device: Device,
    name: String,
    shim: &'static Shim,
}

// SAFETY: a loaded CUDA function has no thread affinity; launches name the stream themselves.
unsafe impl Send for CudaKernel {}
// SAFETY: as above; `launch` takes `&self` and the shim keeps no per-kernel mutable state.
unsafe impl Sync for CudaKernel {}

impl Drop for CudaKernel {
    fn drop(&mut self) {
        // SAFETY: `raw` came from the shim's compile and is freed once, here.
        unsafe { (self.shim.kernel_free)(self.raw) }
    }
}

impl RuntimeKernels for Tch {
    type Kernel = CudaKernel;

    fn compile(device: Device, source: &str, name: &str) -> Result<CudaKernel> {
        let shim = shim_for(device, "a kernel compiled at run time")?;
        let Device::Cuda(index) = device else {
            unreachable!("shim_for refuses other devices")
        };
        let nul = |what: &str, s: &str| {
            CString::new(s).map_err(|_| CoreError::Config {
                at: format!("kernel {name}"),
                reason: format!("the {what} holds a NUL byte"),
            })
        };
        let (c_source, c_name) = (nul("source", source)?, nul("name", name)?);
        let mut raw = std::ptr::null_mut();
        // SAFETY: both strings are NUL-terminated and outlive the call; the shim writes a
        // kernel pointer or returns an error message.
        shim.check(
            unsafe { (shim.kernel_compile)(index as c_int, c_source.as_ptr(), c_name.as_ptr(), &mut raw) },
            "compile",
        )?;
        Ok(CudaKernel {
            raw,
            device,
            name: name.to_string(),
            shim,
        })
    }

    fn empty(shape: &[usize], dtype: DType, device: Device) -> Result<TchTensor> {
        let device = crate::to_tdevice(device)?;
        crate::ok(
            tch::Tensor::f_empty(crate::dims(shape), (crate::to_kind(dtype), device)),
            "empty",
        )
    }

    fn launch(kernel: &CudaKernel, threads: usize, args: &[KernelArg<'_, TchTensor>]) -> Result<()> {
        if threads == 0 {
            return Ok(());
        }
        let bad = |reason: String| CoreError::Config {
            at: format!("kernel {}: launch", kernel.name),
            reason,
        };
        // Each argument's value, 8 bytes apiece; the driver reads each through a pointer.
        let mut values: Vec<u64> = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            values.push(match arg {
                KernelArg::Tensor(t) => {
                    if Tch::device(t) != kernel.device || !t.0.is_contiguous() {
                        return Err(bad(format!(
                            "argument {i} must be a contiguous tensor on {}, got one on {} (contiguous: {})",
                            kernel.device,
                            Tch::device(t),
                            t.0.is_contiguous()
                        )));
                    }
                    t.0.data_ptr() as u64
                }
                KernelArg::I64(v) => *v as u64,
                KernelArg::I32(v) => *v as u32 as u64,
                KernelArg::F32(v) => v.to_bits() as u64,
            });
        }
        let mut pointers: Vec<*mut c_void> = values.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
        let blocks = threads.div_ceil(BLOCK);
        let grid =
            c_uint::try_from(blocks).map_err(|_| bad(format!("{threads} threads are too many for one launch")))?;
        let Device::Cuda(index) = kernel.device else {
            unreachable!("kernels are compiled for CUDA devices only")
        };
        // SAFETY: each pointer addresses a live 8-byte value whose low bytes hold the argument
        // in the little-endian layout the kernel's parameter reads; the caller's contract
        // matches the arguments to the kernel's parameters.
        kernel.shim.check(
            unsafe {
                (kernel.shim.kernel_launch)(kernel.raw, index as c_int, grid, BLOCK as c_uint, pointers.as_mut_ptr())
            },
            "launch",
        )
    }
}
