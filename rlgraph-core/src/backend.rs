//! The `Backend` trait: the tensor operations components are written against, once.
//!
//! Design choices, in the spirit of burn's backend trait:
//! - **Eager.** Both libtorch and candle are define-by-run, so every operation runs when
//!   called. The "static graph" lives above, in the execution plan; here there is none.
//! - **Static functions on the backend type.** A component calls `B::matmul(&x, &w)`; the
//!   tensor type is an associated type, so one component source serves every backend.
//! - **Few dtypes.** `F32`, `F64`, `I64` (all integer data, indices included) and `U8`
//!   (bytes and boolean masks: comparisons return 0/1 `U8`).
//! - **Randomness comes from the host.** Random tensors are drawn from the caller's seeded
//!   RNG on the host and uploaded, so the same seed gives the same numbers on every backend.
//! - **Explicit broadcasting.** Binary and comparison ops broadcast numpy-style; `matmul`
//!   needs equal leading (batch) dimensions.
//! - **Gradients** are taken of a scalar with respect to variables (`Self::Var`), which are
//!   the only mutable state: `var_set` overwrites a variable in place.
//!
//! The conformance suite in `tests/` runs the same cases on every backend.

use std::fmt::Debug;

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use crate::error::Result;

/// Element types a backend tensor can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// 64-bit signed integer (all integer data and indices).
    I64,
    /// Unsigned byte (images, and 0/1 boolean masks).
    U8,
}

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Device {
    /// The host CPU.
    #[default]
    Cpu,
    /// The CUDA GPU with this ordinal.
    Cuda(usize),
}

impl Device {
    /// Parses `cpu`, `cuda`, `cuda:N`, `gpu:N` (also RLgraph's `/device:GPU:N` and `/cpu`).
    pub fn parse(text: &str) -> Option<Device> {
        let t = text.trim().to_ascii_lowercase();
        let t = t.trim_start_matches('/').trim_start_matches("device:").to_string();
        if t == "cpu" || t.starts_with("cpu:") {
            return Some(Device::Cpu);
        }
        for prefix in ["cuda", "gpu"] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let rest = rest.trim_start_matches(':');
                return if rest.is_empty() {
                    Some(Device::Cuda(0))
                } else {
                    rest.parse().ok().map(Device::Cuda)
                };
            }
        }
        None
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

/// The elements of a host tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum HostData {
    /// 32-bit floats.
    F32(Vec<f32>),
    /// 64-bit floats.
    F64(Vec<f64>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// Bytes.
    U8(Vec<u8>),
}

/// [`Backend::adam_step`] as separate backend ops: the default, and the fallback of a
/// backend whose fused step does not take some operands.
pub fn adam_step_ops<B: Backend>(var: &B::Var, m: &B::Var, v: &B::Var, g: &B::Tensor, h: &AdamStep) -> Result<()> {
    let m_new = B::add(
        &B::affine(B::var_tensor(m), h.beta1, 0.0)?,
        &B::affine(g, 1.0 - h.beta1, 0.0)?,
    )?;
    let v_new = B::add(
        &B::affine(B::var_tensor(v), h.beta2, 0.0)?,
        &B::affine(&B::square(g)?, 1.0 - h.beta2, 0.0)?,
    )?;
    B::var_set(m, &m_new)?;
    B::var_set(v, &v_new)?;
    let m_hat = B::affine(&m_new, h.bias1, 0.0)?;
    let v_hat = B::affine(&v_new, h.bias2, 0.0)?;
    let step = B::div(&m_hat, &B::affine(&B::sqrt(&v_hat)?, 1.0, h.epsilon)?)?;
    let w = B::detach(B::var_tensor(var));
    B::var_set(var, &B::sub(&w, &B::affine(&step, h.lr, 0.0)?)?)
}

/// The scalars of one [`Backend::adam_step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamStep {
    /// The learning rate.
    pub lr: f64,
    /// The first moment's decay.
    pub beta1: f64,
    /// The second moment's decay.
    pub beta2: f64,
    /// Added to the second moment's root.
    pub epsilon: f64,
    /// `1 / (1 - beta1^t)` at step `t` (from 1).
    pub bias1: f64,
    /// `1 / (1 - beta2^t)` at step `t` (from 1).
    pub bias2: f64,
}

impl AdamStep {
    /// The scalars of Adam's step number `step` (from 1), bias corrections worked out.
    pub fn at(step: f64, lr: f64, beta1: f64, beta2: f64, epsilon: f64) -> Self {
        AdamStep {
            lr,
            beta1,
            beta2,
            epsilon,
            bias1: 1.0 / (1.0 - beta1.powf(step)),
            bias2: 1.0 / (1.0 - beta2.powf(step)),
        }
    }
}

/// A dense row-major tensor in host memory: how data enters and leaves a backend.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: HostData,
}

impl HostData {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            HostData::F32(_) => DType::F32,
            HostData::F64(_) => DType::F64,
            HostData::I64(_) => DType::I64,
            HostData::U8(_) => DType::U8,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            HostData::F32(v) => v.len(),
            HostData::F64(v) => v.len(),
            HostData::I64(v) => v.len(),
            HostData::U8(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as f64 (exact for f32, u8 and integers below 2^53).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            HostData::F32(v) => v.iter().map(|&x| x as f64).collect(),
            HostData::F64(v) => v.clone(),
            HostData::I64(v) => v.iter().map(|&x| x as f64).collect(),
            HostData::U8(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// `values` converted to `dtype` (floats truncate toward zero for integer types).
    pub fn from_f64(values: &[f64], dtype: DType) -> HostData {
        HostData::collect_f64(values.iter().copied(), dtype)
    }

    /// `values` stored as `dtype`, converted one at a time: no float64 copy of the whole
    /// (which would double the peak memory of a large variable's initial values).
    pub fn collect_f64(values: impl Iterator<Item = f64>, dtype: DType) -> HostData {
        match dtype {
            DType::F32 => HostData::F32(values.map(|x| x as f32).collect()),
            DType::F64 => HostData::F64(values.collect()),
            DType::I64 => HostData::I64(values.map(|x| x as i64).collect()),
            DType::U8 => HostData::U8(values.map(|x| x as u8).collect()),
        }
    }
}

impl HostTensor {
    /// A host tensor; fails unless the data fills the shape exactly.
    pub fn new(shape: impl Into<Vec<usize>>, data: HostData) -> Result<Self> {
        let shape = shape.into();
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(crate::error::CoreError::Backend {
                backend: "host",
                op: "HostTensor::new",
                message: format!("shape {shape:?} needs {n} elements, got {}", data.len()),
            });
        }
        Ok(HostTensor { shape, data })
    }

    /// An f32 host tensor.
    pub fn f32(shape: impl Into<Vec<usize>>, data: Vec<f32>) -> Result<Self> {
        Self::new(shape, HostData::F32(data))
    }

    /// An f64 host tensor.
    pub fn f64(shape: impl Into<Vec<usize>>, data: Vec<f64>) -> Result<Self> {
        Self::new(shape, HostData::F64(data))
    }

    /// An i64 host tensor.
    pub fn i64(shape: impl Into<Vec<usize>>, data: Vec<i64>) -> Result<Self> {
        Self::new(shape, HostData::I64(data))
    }

    /// A u8 host tensor.
    pub fn u8(shape: impl Into<Vec<usize>>, data: Vec<u8>) -> Result<Self> {
        Self::new(shape, HostData::U8(data))
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }
}

/// A tensor library that can run rlgraph components: creation, math, shapes, indexing,
/// comparisons, reductions, convolution, random numbers and gradients.
pub trait Backend: Clone + Debug + Send + Sync + 'static {
    /// The backend's tensor handle; cloning it is cheap and shares storage.
    type Tensor: Clone + Debug + Send + 'static;
    /// A trainable variable: a tensor that gradients are taken against and that can be overwritten.
    type Var: Send + 'static;

    /// The backend's name, as in messages and benchmark labels.
    const NAME: &'static str;

    /// Whether tensors can be placed on `device`.
    fn device_available(device: Device) -> bool;

    // ---- creation and transfer ----

    /// Uploads a host tensor to `device`.
    fn from_host(host: &HostTensor, device: Device) -> Result<Self::Tensor>;
    /// Downloads a tensor to the host.
    fn to_host(t: &Self::Tensor) -> Result<HostTensor>;
    /// A tensor of `shape` filled with `value` (converted to `dtype`).
    fn full(shape: &[usize], value: f64, dtype: DType, device: Device) -> Result<Self::Tensor>;
    /// The integers `0..n` as an I64 tensor.
    fn arange(n: usize, device: Device) -> Result<Self::Tensor>;
    /// The dimensions of `t`.
    fn shape(t: &Self::Tensor) -> Vec<usize>;
    /// The element type of `t`.
    fn dtype(t: &Self::Tensor) -> DType;
    /// The device `t` lives on.
    fn device(t: &Self::Tensor) -> Device;
    /// `t` moved to `device` (a no-op if it is there).
    fn to_device(t: &Self::Tensor, device: Device) -> Result<Self::Tensor>;
    /// Waits until all work queued on `device` has finished (a no-op on the CPU), so the
    /// profiler can bracket GPU kernels with host timestamps.
    fn sync(device: Device) -> Result<()>;
    /// `t` converted to `dtype`.
    fn cast(t: &Self::Tensor, dtype: DType) -> Result<Self::Tensor>;

    // ---- elementwise binary (numpy broadcasting) ----

    /// `a + b`.
    fn add(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a - b`.
    fn sub(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a * b`.
    fn mul(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a / b`.
    fn div(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `max(a, b)` elementwise.
    fn maximum(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `min(a, b)` elementwise.
    fn minimum(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a ^ b` elementwise (floats).
    fn pow(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t * mul + add`, with scalars.
    fn affine(t: &Self::Tensor, mul: f64, add: f64) -> Result<Self::Tensor>;

    // ---- elementwise unary ----

    /// `-t`.
    fn neg(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// `e^t`.
    fn exp(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// Natural logarithm.
    fn log(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// Square root.
    fn sqrt(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t * t`.
    fn square(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// `|t|`.
    fn abs(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// Hyperbolic tangent.
    fn tanh(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// Sine (radians).
    fn sin(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// Cosine (radians).
    fn cos(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// The largest integer not above each element (floats).
    fn floor(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// Logistic sigmoid `1 / (1 + e^-t)`.
    fn sigmoid(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// `max(t, 0)`.
    fn relu(t: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t` clamped into `[min, max]`.
    fn clamp(t: &Self::Tensor, min: f64, max: f64) -> Result<Self::Tensor>;

    // ---- comparisons (0/1 U8 masks, broadcasting) and selection ----

    /// `a == b`.
    fn eq(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a > b`.
    fn gt(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a >= b`.
    fn ge(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a < b`.
    fn lt(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `a <= b`.
    fn le(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `on_true` where `mask` is non-zero, else `on_false` (broadcasting).
    fn where_cond(mask: &Self::Tensor, on_true: &Self::Tensor, on_false: &Self::Tensor) -> Result<Self::Tensor>;

    // ---- reductions ----

    /// Sum over `dims` (non-empty).
    fn sum(t: &Self::Tensor, dims: &[usize], keepdim: bool) -> Result<Self::Tensor>;
    /// Mean over `dims` (non-empty).
    fn mean(t: &Self::Tensor, dims: &[usize], keepdim: bool) -> Result<Self::Tensor>;
    /// Largest value along `dim`.
    fn max(t: &Self::Tensor, dim: usize, keepdim: bool) -> Result<Self::Tensor>;
    /// Smallest value along `dim`.
    fn min(t: &Self::Tensor, dim: usize, keepdim: bool) -> Result<Self::Tensor>;
    /// Index (I64) of the largest value along `dim`; ties go to the first.
    fn argmax(t: &Self::Tensor, dim: usize, keepdim: bool) -> Result<Self::Tensor>;

    // ---- shapes ----

    /// The same elements in a new shape.
    fn reshape(t: &Self::Tensor, shape: &[usize]) -> Result<Self::Tensor>;
    /// Dimensions `d0` and `d1` swapped.
    fn transpose(t: &Self::Tensor, d0: usize, d1: usize) -> Result<Self::Tensor>;
    /// Dimensions reordered: dimension `i` of the result is dimension `dims[i]` of `t`; a
    /// strided view on both backends (no copy: the ops that need ordered data copy then).
    fn permute(t: &Self::Tensor, dims: &[usize]) -> Result<Self::Tensor>;
    /// Tensors joined along `dim`.
    fn concat(ts: &[Self::Tensor], dim: usize) -> Result<Self::Tensor>;
    /// `len` entries of `dim` starting at `start`.
    fn narrow(t: &Self::Tensor, dim: usize, start: usize, len: usize) -> Result<Self::Tensor>;
    /// `t` broadcast to `shape`.
    fn broadcast_to(t: &Self::Tensor, shape: &[usize]) -> Result<Self::Tensor>;
    /// A new dimension of size 1 at `dim`.
    fn unsqueeze(t: &Self::Tensor, dim: usize) -> Result<Self::Tensor>;
    /// Dimension `dim` (of size 1) removed.
    fn squeeze(t: &Self::Tensor, dim: usize) -> Result<Self::Tensor>;
    /// Zeros added before and after dimension `dim`.
    fn pad_zeros(t: &Self::Tensor, dim: usize, before: usize, after: usize) -> Result<Self::Tensor>;

    // ---- linear algebra and convolution ----

    /// Matrix product over the last two dimensions; leading dimensions must be equal.
    fn matmul(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// `x @ w + b` for a matrix `x`, a matrix `w` and a vector `b` (a dense layer). A backend
    /// with a fused kernel (libtorch's `addmm`) saves a dispatch; by default `matmul` then `add`.
    fn linear(x: &Self::Tensor, w: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        Self::add(&Self::matmul(x, w)?, b)
    }
    /// 2-D convolution of NCHW input with OIHW weights, symmetric zero padding.
    fn conv2d(x: &Self::Tensor, w: &Self::Tensor, stride: usize, padding: usize) -> Result<Self::Tensor>;
    /// 2-D max pooling of NCHW input, no padding.
    fn max_pool2d(x: &Self::Tensor, kernel: usize, stride: usize) -> Result<Self::Tensor>;

    // ---- indexing ----

    /// Entries of `dim` picked by the I64 vector `idx`.
    fn index_select(t: &Self::Tensor, dim: usize, idx: &Self::Tensor) -> Result<Self::Tensor>;
    /// `out[i][j] = t[i][idx[i][j]]` along `dim` (`idx` I64, same rank as `t`).
    fn gather(t: &Self::Tensor, dim: usize, idx: &Self::Tensor) -> Result<Self::Tensor>;
    /// `t` with `src` added at positions `idx` along `dim`.
    fn scatter_add(t: &Self::Tensor, dim: usize, idx: &Self::Tensor, src: &Self::Tensor) -> Result<Self::Tensor>;
    /// One-hot encoding of I64 indices: shape `idx.shape + [depth]`.
    fn one_hot(idx: &Self::Tensor, depth: usize, dtype: DType) -> Result<Self::Tensor>;

    // ---- variables and gradients ----

    /// A trainable variable holding `t`.
    fn var(t: &Self::Tensor) -> Result<Self::Var>;
    /// The tensor of a variable; gradients flow through it to the variable.
    fn var_tensor(v: &Self::Var) -> &Self::Tensor;
    /// Overwrites a variable in place (same shape and dtype).
    fn var_set(v: &Self::Var, t: &Self::Tensor) -> Result<()>;
    /// `t` cut off from the gradient computation.
    fn detach(t: &Self::Tensor) -> Self::Tensor;
    /// Gradients of the scalar `loss` with respect to `vars` (zeros for variables it does not use).
    fn grads(loss: &Self::Tensor, vars: &[&Self::Var]) -> Result<Vec<Self::Tensor>>;
    /// One Adam step on `var` with gradient `g` and moment variables `m` and `v` (all of one
    /// shape): `m = β1 m + (1 - β1) g`, `v = β2 v + (1 - β2) g²`, then
    /// `var -= lr (m · bias1) / (sqrt(v · bias2) + ε)`. By default as separate ops; a backend
    /// may fuse them, giving the same numbers.
    fn adam_step(var: &Self::Var, m: &Self::Var, v: &Self::Var, g: &Self::Tensor, h: &AdamStep) -> Result<()> {
        adam_step_ops::<Self>(var, m, v, g, h)
    }
    /// Runs `f` without recording how its tensors were computed, for calls whose results
    /// no gradient will flow through (acting). A backend with a gradient tape (libtorch)
    /// skips it; without one this is just `f()`.
    fn without_grad<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    // ---- provided: seeded random numbers drawn on the host ----

    /// Uniform samples in `[low, high)` from the caller's RNG.
    fn uniform(
        shape: &[usize],
        low: f64,
        high: f64,
        dtype: DType,
        device: Device,
        rng: &mut dyn RngCore,
    ) -> Result<Self::Tensor> {
        // 53 random bits give a uniform double in [0, 1).
        Self::from_draws(shape, dtype, device, || {
            low + (high - low) * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
        })
    }

    /// Normal samples with `mean` and `std` from the caller's RNG.
    fn normal(
        shape: &[usize],
        mean: f64,
        std: f64,
        dtype: DType,
        device: Device,
        rng: &mut dyn RngCore,
    ) -> Result<Self::Tensor> {
        Self::from_draws(shape, dtype, device, || {
            mean + std * Distribution::<f64>::sample(&StandardNormal, rng)
        })
    }

    /// A tensor of `shape` filled, in row-major order, by calling `draw` once per element.
    fn from_draws(
        shape: &[usize],
        dtype: DType,
        device: Device,
        mut draw: impl FnMut() -> f64,
    ) -> Result<Self::Tensor> {
        let n: usize = shape.iter().product();
        let values: Vec<f64> = (0..n).map(|_| draw()).collect();
        Self::from_host(&HostTensor::new(shape, HostData::from_f64(&values, dtype))?, device)
    }

    /// A scalar tensor of the given dtype.
    fn scalar(value: f64, dtype: DType, device: Device) -> Result<Self::Tensor> {
        Self::full(&[], value, dtype, device)
    }

    /// Sum of all elements, as a scalar.
    fn sum_all(t: &Self::Tensor) -> Result<Self::Tensor> {
        let n: usize = Self::shape(t).iter().product();
        Self::sum(&Self::reshape(t, &[n])?, &[0], false)
    }

    /// Mean of all elements, as a scalar.
    fn mean_all(t: &Self::Tensor) -> Result<Self::Tensor> {
        let n: usize = Self::shape(t).iter().product();
        Self::mean(&Self::reshape(t, &[n])?, &[0], false)
    }
}
