//! `ModuleOps`: the ops of network layers: matrix products, convolution and pooling.

use super::{BackendCore, ElementwiseOps, ShapeOps};
use crate::error::Result;

/// Linear algebra and convolution, the ops of network layers.
pub trait ModuleOps: BackendCore {
    /// Matrix product over the last two dimensions; leading dimensions must be equal.
    fn matmul(a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>;
    /// 2-D convolution of NCHW input with OIHW weights, symmetric zero padding.
    fn conv2d(x: &Self::Tensor, w: &Self::Tensor, stride: usize, padding: usize) -> Result<Self::Tensor>;
    /// 2-D max pooling of NCHW input, no padding.
    fn max_pool2d(x: &Self::Tensor, kernel: usize, stride: usize) -> Result<Self::Tensor>;

    /// `x @ w + b` for a matrix `x`, a matrix `w` and a vector `b` (a dense layer). A backend
    /// with a fused kernel (libtorch's `addmm`) saves a dispatch; by default `matmul` then `add`.
    fn linear(x: &Self::Tensor, w: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>
    where
        Self: ElementwiseOps,
    {
        Self::add(&Self::matmul(x, w)?, b)
    }

    /// `conv2d(x, w)` plus a bias per output channel (`b` of shape `[O]`, broadcast over each
    /// map). A backend with a fused kernel (candle's CPU path) adds it and sums its gradient
    /// per channel in one pass each; by default `conv2d` then `add`.
    fn conv2d_bias(
        x: &Self::Tensor,
        w: &Self::Tensor,
        b: &Self::Tensor,
        stride: usize,
        padding: usize,
    ) -> Result<Self::Tensor>
    where
        Self: ElementwiseOps + ShapeOps,
    {
        let channels = Self::shape(b).iter().product();
        Self::add(
            &Self::conv2d(x, w, stride, padding)?,
            &Self::reshape(b, &[1, channels, 1, 1])?,
        )
    }

    /// `conv2d(x, w)`, plus `b` per output channel where given, laid out NHWC (`[n, oh, ow,
    /// o]`): what a layer on NHWC images wants. A backend whose kernel writes that layout
    /// (candle's CPU path) spares the transposes to NCHW and back, and the copy a flatten of
    /// the permuted maps would make; by default the NCHW result, permuted (a view).
    fn conv2d_nhwc(
        x: &Self::Tensor,
        w: &Self::Tensor,
        b: Option<&Self::Tensor>,
        stride: usize,
        padding: usize,
    ) -> Result<Self::Tensor>
    where
        Self: ElementwiseOps + ShapeOps,
    {
        let y = match b {
            Some(b) => Self::conv2d_bias(x, w, b, stride, padding)?,
            None => Self::conv2d(x, w, stride, padding)?,
        };
        Self::permute(&y, &[0, 2, 3, 1])
    }

    /// `tanh(x @ w + b)`, a dense layer with tanh activation. A backend with a fused kernel
    /// (candle's CPU path) skips the pre-activation's tensor and its gradient; by default
    /// `linear` then `tanh`, and a fused kernel gives the same numbers.
    fn linear_tanh(x: &Self::Tensor, w: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor>
    where
        Self: ElementwiseOps,
    {
        Self::tanh(&Self::linear(x, w, b)?)
    }
}
