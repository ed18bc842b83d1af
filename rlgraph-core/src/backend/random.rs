//! `RandomOps`: seeded random tensors.

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use super::{BackendCore, DType, Device, HostData, HostTensor};
use crate::error::Result;

/// Random tensors from the caller's seeded RNG. By default drawn on the host and uploaded,
/// so the same seed gives the same numbers on every backend and device; a backend overrides
/// them with draws on its device where a run asked for that
/// ([`crate::GraphCapture::draw_on_device`]), and then calls the host versions below
/// everywhere else.
pub trait RandomOps: BackendCore {
    /// Uniform samples in `[low, high)` from the caller's RNG.
    fn uniform(
        shape: &[usize],
        low: f64,
        high: f64,
        dtype: DType,
        device: Device,
        rng: &mut dyn RngCore,
    ) -> Result<Self::Tensor> {
        uniform_on_host::<Self>(shape, low, high, dtype, device, rng)
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
        normal_on_host::<Self>(shape, mean, std, dtype, device, rng)
    }

    /// `rows` minibatches of `m` distinct indices into `0..total` each, as one I64 tensor of
    /// `rows * m` (row after row), from the caller's RNG.
    fn sample_indices(
        total: usize,
        m: usize,
        rows: usize,
        device: Device,
        rng: &mut dyn RngCore,
    ) -> Result<Self::Tensor> {
        sample_indices_on_host::<Self>(total, m, rows, device, rng)
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
}

/// [`RandomOps::uniform`] drawn on the host and uploaded: the default.
pub fn uniform_on_host<B: RandomOps>(
    shape: &[usize],
    low: f64,
    high: f64,
    dtype: DType,
    device: Device,
    rng: &mut dyn RngCore,
) -> Result<B::Tensor> {
    // 53 random bits give a uniform double in [0, 1).
    B::from_draws(shape, dtype, device, || {
        low + (high - low) * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    })
}

/// [`RandomOps::normal`] drawn on the host and uploaded: the default.
pub fn normal_on_host<B: RandomOps>(
    shape: &[usize],
    mean: f64,
    std: f64,
    dtype: DType,
    device: Device,
    rng: &mut dyn RngCore,
) -> Result<B::Tensor> {
    B::from_draws(shape, dtype, device, || {
        mean + std * Distribution::<f64>::sample(&StandardNormal, rng)
    })
}

/// [`RandomOps::sample_indices`] drawn on the host (`rand`'s `index::sample` per row, `m`
/// clamped to `total`) and uploaded: the default.
pub fn sample_indices_on_host<B: RandomOps>(
    total: usize,
    m: usize,
    rows: usize,
    device: Device,
    rng: &mut dyn RngCore,
) -> Result<B::Tensor> {
    let m = m.min(total);
    let mut drawn = Vec::with_capacity(rows * m);
    for _ in 0..rows {
        drawn.extend(
            rand::seq::index::sample(&mut *rng, total, m)
                .into_iter()
                .map(|i| i as i64),
        );
    }
    B::from_host(&HostTensor::i64([rows * m], drawn)?, device)
}
