//! `SpecOnly`: a backend that holds no tensors, so components can be made from their specs,
//! and those specs checked, where no backend is chosen yet (an agent config as it loads).
//!
//! Making a component computes nothing (its graph functions run only when a graph is built),
//! so every spec error the registry finds surfaces here too. Its tensor type has no values:
//! an operation that receives a tensor can never be called, and one that would create a
//! tensor returns an error saying this backend computes nothing.

use crate::backend::{Backend, DType, Device, HostTensor};
use crate::error::{CoreError, Result};

/// A backend for making components without computing anything: see the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpecOnly;

/// The tensor of [`SpecOnly`]: a type with no values.
#[derive(Clone, Copy, Debug)]
pub enum NoTensor {}

fn no_tensors(op: &'static str) -> CoreError {
    CoreError::Backend {
        backend: SpecOnly::NAME,
        op,
        message: "this backend only checks specs and computes nothing; build the graph on candle or tch".into(),
    }
}

impl Backend for SpecOnly {
    type Tensor = NoTensor;
    type Var = NoTensor;

    const NAME: &'static str = "spec-only";

    fn device_available(_device: Device) -> bool {
        false
    }

    fn from_host(_host: &HostTensor, _device: Device) -> Result<Self::Tensor> {
        Err(no_tensors("from_host"))
    }

    fn to_host(t: &Self::Tensor) -> Result<HostTensor> {
        match *t {}
    }

    fn full(_shape: &[usize], _value: f64, _dtype: DType, _device: Device) -> Result<Self::Tensor> {
        Err(no_tensors("full"))
    }

    fn arange(_n: usize, _device: Device) -> Result<Self::Tensor> {
        Err(no_tensors("arange"))
    }

    fn shape(t: &Self::Tensor) -> Vec<usize> {
        match *t {}
    }

    fn dtype(t: &Self::Tensor) -> DType {
        match *t {}
    }

    fn device(t: &Self::Tensor) -> Device {
        match *t {}
    }

    fn to_device(t: &Self::Tensor, _device: Device) -> Result<Self::Tensor> {
        match *t {}
    }

    fn sync(_device: Device) -> Result<()> {
        Ok(())
    }

    fn cast(t: &Self::Tensor, _dtype: DType) -> Result<Self::Tensor> {
        match *t {}
    }

    fn add(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn sub(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn mul(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn div(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn maximum(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn minimum(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn pow(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn affine(t: &Self::Tensor, _mul: f64, _add: f64) -> Result<Self::Tensor> {
        match *t {}
    }

    fn neg(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn exp(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn log(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn sqrt(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn square(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn abs(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn tanh(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn sin(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn cos(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn floor(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn sigmoid(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn relu(t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn clamp(t: &Self::Tensor, _min: f64, _max: f64) -> Result<Self::Tensor> {
        match *t {}
    }

    fn eq(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn gt(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn ge(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn lt(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn le(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn where_cond(mask: &Self::Tensor, _on_true: &Self::Tensor, _on_false: &Self::Tensor) -> Result<Self::Tensor> {
        match *mask {}
    }

    fn sum(t: &Self::Tensor, _dims: &[usize], _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }

    fn mean(t: &Self::Tensor, _dims: &[usize], _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }

    fn max(t: &Self::Tensor, _dim: usize, _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }

    fn min(t: &Self::Tensor, _dim: usize, _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }

    fn argmax(t: &Self::Tensor, _dim: usize, _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }

    fn reshape(t: &Self::Tensor, _shape: &[usize]) -> Result<Self::Tensor> {
        match *t {}
    }

    fn transpose(t: &Self::Tensor, _d0: usize, _d1: usize) -> Result<Self::Tensor> {
        match *t {}
    }

    fn permute(t: &Self::Tensor, _dims: &[usize]) -> Result<Self::Tensor> {
        match *t {}
    }

    fn concat(ts: &[Self::Tensor], _dim: usize) -> Result<Self::Tensor> {
        match ts.first() {
            Some(t) => match *t {},
            None => Err(no_tensors("concat")),
        }
    }

    fn narrow(t: &Self::Tensor, _dim: usize, _start: usize, _len: usize) -> Result<Self::Tensor> {
        match *t {}
    }

    fn broadcast_to(t: &Self::Tensor, _shape: &[usize]) -> Result<Self::Tensor> {
        match *t {}
    }

    fn unsqueeze(t: &Self::Tensor, _dim: usize) -> Result<Self::Tensor> {
        match *t {}
    }

    fn squeeze(t: &Self::Tensor, _dim: usize) -> Result<Self::Tensor> {
        match *t {}
    }

    fn pad_zeros(t: &Self::Tensor, _dim: usize, _before: usize, _after: usize) -> Result<Self::Tensor> {
        match *t {}
    }

    fn matmul(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }

    fn conv2d(x: &Self::Tensor, _w: &Self::Tensor, _stride: usize, _padding: usize) -> Result<Self::Tensor> {
        match *x {}
    }

    fn max_pool2d(x: &Self::Tensor, _kernel: usize, _stride: usize) -> Result<Self::Tensor> {
        match *x {}
    }

    fn index_select(t: &Self::Tensor, _dim: usize, _idx: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn gather(t: &Self::Tensor, _dim: usize, _idx: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn scatter_add(t: &Self::Tensor, _dim: usize, _idx: &Self::Tensor, _src: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }

    fn one_hot(idx: &Self::Tensor, _depth: usize, _dtype: DType) -> Result<Self::Tensor> {
        match *idx {}
    }

    fn var(t: &Self::Tensor) -> Result<Self::Var> {
        match *t {}
    }

    fn var_tensor(v: &Self::Var) -> &Self::Tensor {
        match *v {}
    }

    fn var_set(v: &Self::Var, _t: &Self::Tensor) -> Result<()> {
        match *v {}
    }

    fn detach(t: &Self::Tensor) -> Self::Tensor {
        match *t {}
    }

    fn grads(loss: &Self::Tensor, _vars: &[&Self::Var]) -> Result<Vec<Self::Tensor>> {
        match *loss {}
    }
}
