//! The shape family on candle: views where candle's ops take strided input.

use candle_core::Tensor;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{CoreError, Result};

use crate::{err, Candle};

impl ShapeOps for Candle {
    fn reshape(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
        t.reshape(shape).map_err(err("reshape"))
    }
    fn transpose(t: &Tensor, d0: usize, d1: usize) -> Result<Tensor> {
        t.transpose(d0, d1)
            .and_then(|x| x.contiguous())
            .map_err(err("transpose"))
    }
    fn permute(t: &Tensor, dims: &[usize]) -> Result<Tensor> {
        // A view: candle's ops take strided inputs, and a conv layer's permutes there and
        // back compose into the original order without moving data.
        t.permute(dims).map_err(err("permute"))
    }
    fn concat(ts: &[Tensor], dim: usize) -> Result<Tensor> {
        Tensor::cat(ts, dim).map_err(err("concat"))
    }
    fn narrow(t: &Tensor, dim: usize, start: usize, len: usize) -> Result<Tensor> {
        t.narrow(dim, start, len).map_err(err("narrow"))
    }
    fn broadcast_to(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
        t.broadcast_as(shape).map_err(err("broadcast_to"))
    }
    fn unsqueeze(t: &Tensor, dim: usize) -> Result<Tensor> {
        t.unsqueeze(dim).map_err(err("unsqueeze"))
    }
    fn squeeze(t: &Tensor, dim: usize) -> Result<Tensor> {
        if t.dims().get(dim) != Some(&1) {
            return Err(CoreError::Backend {
                backend: Self::NAME,
                op: "squeeze",
                message: format!("dimension {dim} of shape {:?} is not of size 1", t.dims()),
            });
        }
        t.squeeze(dim).map_err(err("squeeze"))
    }
    fn pad_zeros(t: &Tensor, dim: usize, before: usize, after: usize) -> Result<Tensor> {
        t.pad_with_zeros(dim, before, after).map_err(err("pad_zeros"))
    }
}
