//! The layer family on libtorch: matrix products (a dense layer in one `addmm`), convolution, pooling.

use rlgraph_core::backend::prelude::*;
use rlgraph_core::Result;
use tch::Tensor;

use crate::{ok, Tch, TchTensor};

impl ModuleOps for Tch {
    #[inline]
    fn matmul(a: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(a.0.f_matmul(&b.0), "matmul")
    }
    fn linear(x: &TchTensor, w: &TchTensor, b: &TchTensor) -> Result<TchTensor> {
        ok(b.0.f_addmm(&x.0, &w.0), "linear")
    }
    fn conv2d(x: &TchTensor, w: &TchTensor, stride: usize, padding: usize) -> Result<TchTensor> {
        let (s, p) = (stride as i64, padding as i64);
        ok(x.0.f_conv2d(&w.0, None::<&Tensor>, [s, s], [p, p], [1, 1], 1), "conv2d")
    }
    fn max_pool2d(x: &TchTensor, kernel: usize, stride: usize) -> Result<TchTensor> {
        let (k, s) = (kernel as i64, stride as i64);
        ok(x.0.f_max_pool2d([k, k], [s, s], [0, 0], [1, 1], false), "max_pool2d")
    }
}
