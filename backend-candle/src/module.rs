//! The layer family on candle: this crate's matrix product and convolution kernels where they apply, candle's otherwise.

use candle_core::Tensor;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::Result;

use crate::{channel_bias, conv2d, err, linear, matmul, Candle};

impl ModuleOps for Candle {
    #[inline]
    fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        if let Some(product) = matmul::apply(a, b) {
            return product.map_err(err("matmul"));
        }
        // candle's matmul refuses some strided layouts (transposed operands, say); only then
        // copy the operands, so the common contiguous case pays no copy and no checks twice.
        if let Ok(product) = a.matmul(b) {
            return Ok(product);
        }
        a.contiguous()
            .and_then(|a| a.matmul(&b.contiguous()?))
            .map_err(err("matmul"))
    }
    fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
        match linear::apply(x, w, b, false) {
            Some(y) => y.map_err(err("linear")),
            None => Self::add(&Self::matmul(x, w)?, b),
        }
    }
    fn linear_tanh(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
        match linear::apply(x, w, b, true) {
            Some(y) => y.map_err(err("linear_tanh")),
            None => Self::tanh(&Self::linear(x, w, b)?),
        }
    }
    fn conv2d(x: &Tensor, w: &Tensor, stride: usize, padding: usize) -> Result<Tensor> {
        if let Some(y) = conv2d::apply(x, w, stride, padding, false) {
            return y.map_err(err("conv2d"));
        }
        x.conv2d(w, padding, stride, 1, 1).map_err(err("conv2d"))
    }
    fn conv2d_bias(x: &Tensor, w: &Tensor, b: &Tensor, stride: usize, padding: usize) -> Result<Tensor> {
        let y = Self::conv2d(x, w, stride, padding)?;
        match channel_bias::apply(&y, b, false) {
            Some(out) => out.map_err(err("conv2d_bias")),
            None => Self::add(&y, &Self::reshape(b, &[1, b.elem_count(), 1, 1])?),
        }
    }
    fn conv2d_nhwc(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: usize, padding: usize) -> Result<Tensor> {
        let y = match conv2d::apply(x, w, stride, padding, true) {
            Some(y) => y.map_err(err("conv2d"))?,
            // Elsewhere (CUDA, other types) the bias goes on the contiguous NCHW maps first.
            None => {
                let y = match b {
                    Some(b) => Self::conv2d_bias(x, w, b, stride, padding)?,
                    None => Self::conv2d(x, w, stride, padding)?,
                };
                return Self::permute(&y, &[0, 2, 3, 1]);
            }
        };
        let Some(b) = b else { return Ok(y) };
        match channel_bias::apply(&y, b, true) {
            Some(out) => out.map_err(err("conv2d_bias")),
            None => Self::add(&y, b),
        }
    }
    fn max_pool2d(x: &Tensor, kernel: usize, stride: usize) -> Result<Tensor> {
        x.max_pool2d_with_stride(kernel, stride).map_err(err("max_pool2d"))
    }
}
