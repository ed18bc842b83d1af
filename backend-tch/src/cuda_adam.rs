//! Adam's scaled step (`OptimizerOps::adam_step_scaled`) as one kernel per variable on a CUDA
//! device, compiled at run time: a recorded PPO update takes an Adam step for each of its
//! variables in every minibatch, and as libtorch ops that is nine launches per variable.
//! The kernel does the in-place ops' arithmetic in their order (`lerp` with the weights
//! `1 - beta` rounded from f64 as libtorch rounds them), each op rounded on its own (the shim
//! compiles without fused multiply-adds); libtorch's own kernels may fuse some, so the two
//! agree to rounding, not to the bit.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rlgraph_core::{AdamScalars, BackendCore, Device, KernelArg, Result, RuntimeKernels};
use tch::Kind;

use crate::cuda_kernel::CudaKernel;
use crate::{Tch, TchTensor};

const SOURCE: &str = r#"
__device__ float lerp_like_torch(float a, float b, float w) {
    return w < 0.5f ? a + w * (b - a) : b - (b - a) * (1.0f - w);
}
extern "C" __global__ void rlgraph_adam_scaled(long long n, float* var, float* m, float* v, const float* g,
                                               const float* lr_bias1, const float* sqrt_bias2,
                                               float w1, float w2, float eps) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float gi = g[i];
    float mi = lerp_like_torch(m[i], gi, w1);
    float vi = lerp_like_torch(v[i], gi * gi, w2);
    m[i] = mi;
    v[i] = vi;
    float denom = sqrtf(vi) * sqrt_bias2[0] + eps;
    var[i] = var[i] - (mi * lr_bias1[0]) / denom;
}
"#;

/// The kernel per CUDA device index, compiled on first use (`None`: it could not be).
static KERNELS: Mutex<Vec<Option<Option<Arc<CudaKernel>>>>> = Mutex::new(Vec::new());

/// Whether the one-kernel step is on: `RLGRAPH_TCH_ADAM_KERNEL=off` keeps libtorch's ops
/// (to compare the two).
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("RLGRAPH_TCH_ADAM_KERNEL").map_or(true, |v| v != "off"))
}

/// The kernel for `device`, if it compiles there.
fn kernel_for(device: Device) -> Option<Arc<CudaKernel>> {
    let Device::Cuda(index) = device else {
        return None;
    };
    if !enabled() {
        return None;
    }
    let mut kernels = KERNELS.lock().unwrap_or_else(PoisonError::into_inner);
    if kernels.len() <= index {
        kernels.resize(index + 1, None);
    }
    kernels[index]
        .get_or_insert_with(|| Tch::compile(device, SOURCE, "rlgraph_adam_scaled").ok().map(Arc::new))
        .clone()
}

/// One launch of the step where every operand is a contiguous F32 tensor on one CUDA device
/// (the scalars 0-d there too); `Ok(false)` where not, for the caller's libtorch ops.
pub(crate) fn step(
    var: &TchTensor,
    m: &TchTensor,
    v: &TchTensor,
    g: &TchTensor,
    h: &AdamScalars<TchTensor>,
) -> Result<bool> {
    let device = Tch::device(var);
    let fits = |t: &TchTensor| Tch::device(t) == device && t.0.kind() == Kind::Float && t.0.is_contiguous();
    let scalar = |t: &TchTensor| fits(t) && t.0.numel() == 1;
    if !([var, m, v, g].into_iter().all(fits) && scalar(&h.lr_bias1) && scalar(&h.sqrt_bias2)) {
        return Ok(false);
    }
    let Some(kernel) = kernel_for(device) else {
        return Ok(false);
    };
    let n = var.0.numel();
    Tch::launch(
        &kernel,
        n,
        &[
            KernelArg::I64(n as i64),
            KernelArg::Tensor(var),
            KernelArg::Tensor(m),
            KernelArg::Tensor(v),
            KernelArg::Tensor(g),
            KernelArg::Tensor(&h.lr_bias1),
            KernelArg::Tensor(&h.sqrt_bias2),
            KernelArg::F32((1.0 - h.beta1) as f32),
            KernelArg::F32((1.0 - h.beta2) as f32),
            KernelArg::F32(h.epsilon as f32),
        ],
    )?;
    Ok(true)
}
