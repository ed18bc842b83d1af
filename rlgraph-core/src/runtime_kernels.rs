//! `RuntimeKernels`: backends that compile a kernel from source at run time and launch it.

use crate::{Backend, DType, Device, Result};

/// One argument of a [`RuntimeKernels::launch`], in the kernel's parameter order: a tensor
/// passes its data pointer (it must be contiguous and on the kernel's device), a number its
/// value.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg<'a, T> {
    /// A contiguous tensor, as a pointer to its first element.
    Tensor(&'a T),
    /// A C `long long`.
    I64(i64),
    /// A C `int`.
    I32(i32),
    /// A C `float`.
    F32(f32),
}

/// A capability beside [`Backend`]: a kernel written in CUDA C++ (one `extern "C" __global__`
/// function), compiled for the device at run time (NVRTC on tch) and launched on the
/// backend's current stream, so a [`crate::GraphCapture`] recording takes it in like any op.
/// What it pays for: a step of many small elementwise ops becomes one pass over memory.
///
/// The kernel's parameters are the caller's contract: nothing checks that the arguments'
/// dtypes match them, so wrap a kernel in a type that builds its arguments in one place.
pub trait RuntimeKernels: Backend {
    /// A compiled kernel, launchable on the device it was compiled for.
    type Kernel: Send + Sync;

    /// Compiles `name` from `source` for `device`. Floating-point ops round one by one (no
    /// fused multiply-adds), so a kernel that repeats a chain of the backend's one-op kernels
    /// gives their numbers.
    fn compile(device: Device, source: &str, name: &str) -> Result<Self::Kernel>;

    /// A contiguous tensor of `shape` whose elements a kernel is about to write (not
    /// initialized: no fill is launched).
    fn empty(shape: &[usize], dtype: DType, device: Device) -> Result<Self::Tensor>;

    /// Launches `kernel` over `threads` threads (in blocks of 256) with `args`.
    fn launch(kernel: &Self::Kernel, threads: usize, args: &[KernelArg<'_, Self::Tensor>]) -> Result<()>;
}
