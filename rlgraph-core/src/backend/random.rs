//! `RandomOps`: seeded random tensors.

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use super::{BackendCore, DType, Device, HostData, HostTensor};
use crate::error::Result;

/// Random tensors from the caller's seeded RNG. By default drawn on the host and uploaded,
/// so the same seed gives the same numbers on every backend and device; a backend may
/// override them with draws on its device where that equality is not needed.
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
}
