//! `BackendCore`: the tensor type, creation, transfer and inspection every family builds on.

use std::fmt::Debug;

use super::{DType, Device, HostTensor};
use crate::error::Result;

/// What every op family builds on: the tensor type, where tensors live, and how they are made,
/// moved and looked at.
pub trait BackendCore: Clone + Debug + Send + Sync + 'static {
    /// The backend's tensor handle; cloning it is cheap and shares storage.
    type Tensor: Clone + Debug + Send + 'static;

    /// The backend's name, as in messages and benchmark labels.
    const NAME: &'static str;

    /// Whether tensors can be placed on `device`.
    fn device_available(device: Device) -> bool;
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

    /// A scalar tensor of the given dtype.
    fn scalar(value: f64, dtype: DType, device: Device) -> Result<Self::Tensor> {
        Self::full(&[], value, dtype, device)
    }
}
