//! The shape family on libtorch: views where libtorch's kernels take strided input.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::{CoreError, Result};
use tch::Tensor;

use crate::{dims, ok, Tch, TchTensor};

impl ShapeOps for Tch {
    fn reshape(t: &TchTensor, shape: &[usize]) -> Result<TchTensor> {
        // Reshaping to the same shape (a policy's logits at a flat action) would cost a
        // dispatch for a view of the same tensor.
        let dims = dims(shape);
        if t.0.size() == dims {
            return Ok(t.clone());
        }
        ok(t.0.f_reshape(dims), "reshape")
    }
    fn transpose(t: &TchTensor, d0: usize, d1: usize) -> Result<TchTensor> {
        ok(
            t.0.f_transpose(d0 as i64, d1 as i64).and_then(|x| x.f_contiguous()),
            "transpose",
        )
    }
    fn permute(t: &TchTensor, dims: &[usize]) -> Result<TchTensor> {
        let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        // A view, not a copy: libtorch's kernels take strided inputs, and an NHWC image seen
        // as NCHW is its channels-last layout, which its convolutions run on directly (a
        // conv layer's permutes there and back then move no data).
        ok(t.0.f_permute(&dims), "permute")
    }
    fn concat(ts: &[TchTensor], dim: usize) -> Result<TchTensor> {
        let inner: Vec<&Tensor> = ts.iter().map(|t| &t.0).collect();
        ok(Tensor::f_cat(&inner, dim as i64), "concat")
    }
    fn narrow(t: &TchTensor, dim: usize, start: usize, len: usize) -> Result<TchTensor> {
        ok(t.0.f_narrow(dim as i64, start as i64, len as i64), "narrow")
    }
    fn broadcast_to(t: &TchTensor, shape: &[usize]) -> Result<TchTensor> {
        ok(t.0.f_broadcast_to(dims(shape)), "broadcast_to")
    }
    fn unsqueeze(t: &TchTensor, dim: usize) -> Result<TchTensor> {
        ok(t.0.f_unsqueeze(dim as i64), "unsqueeze")
    }
    fn squeeze(t: &TchTensor, dim: usize) -> Result<TchTensor> {
        let shape = Self::shape(t);
        if shape.get(dim) != Some(&1) {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "squeeze",
                message: format!("dimension {dim} of shape {shape:?} is not of size 1"),
            });
        }
        ok(t.0.f_squeeze_dim(dim as i64), "squeeze")
    }
    fn pad_zeros(t: &TchTensor, dim: usize, before: usize, after: usize) -> Result<TchTensor> {
        // constant_pad_nd lists (before, after) pairs from the last dimension backwards.
        let rank = t.0.dim();
        let mut pad = vec![0i64; 2 * (rank - dim)];
        let at = 2 * (rank - 1 - dim);
        pad[at] = before as i64;
        pad[at + 1] = after as i64;
        ok(t.0.f_constant_pad_nd(pad.as_slice()), "pad_zeros")
    }
}
