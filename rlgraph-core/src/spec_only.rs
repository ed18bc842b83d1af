//! `SpecOnly`: a backend that holds no tensors, so components can be made from their specs,
//! and those specs checked, where no backend is chosen yet (an agent config as it loads).
//!
//! Making a component computes nothing (its graph functions run only when a graph is built),
//! so every spec error the registry finds surfaces here too. Its tensor type has no values:
//! an operation that receives a tensor can never be called, and one that would create a
//! tensor returns an error saying this backend computes nothing.

use crate::backend::prelude::*;
use crate::backend::{BinaryOp, BitOp, CmpOp, DType, Device, HostTensor, ReduceOp, UnaryOp};
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

impl BackendCore for SpecOnly {
    type Tensor = NoTensor;

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
}

impl ElementwiseOps for SpecOnly {
    fn binary(_op: BinaryOp, a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }
    fn unary(_op: UnaryOp, t: &Self::Tensor) -> Result<Self::Tensor> {
        match *t {}
    }
    fn affine(t: &Self::Tensor, _mul: f64, _add: f64) -> Result<Self::Tensor> {
        match *t {}
    }
    fn clamp(t: &Self::Tensor, _min: f64, _max: f64) -> Result<Self::Tensor> {
        match *t {}
    }
}

impl CompareOps for SpecOnly {
    fn cmp(_op: CmpOp, a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }
    fn where_cond(mask: &Self::Tensor, _on_true: &Self::Tensor, _on_false: &Self::Tensor) -> Result<Self::Tensor> {
        match *mask {}
    }
}

impl ReduceOps for SpecOnly {
    fn reduce(_op: ReduceOp, t: &Self::Tensor, _dims: &[usize], _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }
    fn argmax(t: &Self::Tensor, _dim: usize, _keepdim: bool) -> Result<Self::Tensor> {
        match *t {}
    }
}

impl ShapeOps for SpecOnly {
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
}

impl ModuleOps for SpecOnly {
    fn matmul(a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }
    fn conv2d(x: &Self::Tensor, _w: &Self::Tensor, _stride: usize, _padding: usize) -> Result<Self::Tensor> {
        match *x {}
    }
    fn max_pool2d(x: &Self::Tensor, _kernel: usize, _stride: usize) -> Result<Self::Tensor> {
        match *x {}
    }
}

impl IndexOps for SpecOnly {
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
}

impl BitwiseOps for SpecOnly {
    fn bitwise(_op: BitOp, a: &Self::Tensor, _b: &Self::Tensor) -> Result<Self::Tensor> {
        match *a {}
    }
    fn shift_left(t: &Self::Tensor, _bits: u32) -> Result<Self::Tensor> {
        match *t {}
    }
    fn shift_right(t: &Self::Tensor, _bits: u32) -> Result<Self::Tensor> {
        match *t {}
    }
}

impl AutodiffOps for SpecOnly {
    type Var = NoTensor;

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

impl OptimizerOps for SpecOnly {}

impl RandomOps for SpecOnly {}

impl GraphCapture for SpecOnly {}
