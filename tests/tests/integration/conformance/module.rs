//! `ModuleOps`: matrix products, the dense layer, convolutions and max pooling.

use super::prelude::*;

case!(matmul_2d, vec![vec![19.0, 22.0, 43.0, 50.0]], <B> {
    let a = f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let b = f32s::<B>(&[2, 2], &[5.0, 6.0, 7.0, 8.0])?;
    host::<B>(&[B::matmul(&a, &b)?])
});

// [[1, 2], [3, 4]] x [[1, 0, 1], [0, 1, 1]] = [[1, 2, 3], [3, 4, 7]], plus [10, 20, 30] per row.
case!(linear_is_matmul_plus_bias, vec![vec![11.0, 22.0, 33.0, 13.0, 24.0, 37.0]], <B> {
    let x = f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let w = f32s::<B>(&[2, 3], &[1.0, 0.0, 1.0, 0.0, 1.0, 1.0])?;
    let b = f32s::<B>(&[3], &[10.0, 20.0, 30.0])?;
    host::<B>(&[shaped::<B>(B::linear(&x, &w, &b)?, &[2, 3])?])
});

// The same product with a small kernel, w = [[0.25, 0, 0.25], [0, 0.25, 0.25]] and b = [0, -0.5,
// 0.125]: pre-activations [[0.25, 0, 0.875], [0.75, 0.5, 1.875]], each exact in binary.
case!(linear_tanh_is_tanh_of_the_dense_layer, vec![[0.25f64, 0.0, 0.875, 0.75, 0.5, 1.875].iter().map(|p| p.tanh()).collect()], <B> {
    let x = f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let w = f32s::<B>(&[2, 3], &[0.25, 0.0, 0.25, 0.0, 0.25, 0.25])?;
    let b = f32s::<B>(&[3], &[0.0, -0.5, 0.125])?;
    host::<B>(&[shaped::<B>(B::linear_tanh(&x, &w, &b)?, &[2, 3])?])
});

case!(matmul_batched, vec![vec![3.0, 6.0]], <B> {
    let a = f32s::<B>(&[2, 1, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let b = f32s::<B>(&[2, 2, 1], &[1.0, 1.0, 2.0, 0.0])?;
    host::<B>(&[shaped::<B>(B::matmul(&a, &b)?, &[2, 1, 1])?])
});

case!(conv2d_valid_stride_1, vec![vec![12.0, 16.0, 24.0, 28.0]], <B> {
    let x = f32s::<B>(&[1, 1, 3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])?;
    let w = f32s::<B>(&[1, 1, 2, 2], &[1.0; 4])?;
    host::<B>(&[shaped::<B>(B::conv2d(&x, &w, 1, 0)?, &[1, 1, 2, 2])?])
});

case!(conv2d_padded_stride_2, vec![vec![12.0, 16.0, 24.0, 28.0]], <B> {
    let x = f32s::<B>(&[1, 1, 3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])?;
    let w = f32s::<B>(&[1, 1, 3, 3], &[1.0; 9])?;
    host::<B>(&[shaped::<B>(B::conv2d(&x, &w, 2, 1)?, &[1, 1, 2, 2])?])
});

case!(conv2d_mixes_channels, vec![vec![1.0, 2.0, 3.0, 4.0, 11.0, 14.0, 17.0, 20.0]], <B> {
    let x = f32s::<B>(&[1, 2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
    let w = f32s::<B>(&[2, 2, 1, 1], &[1.0, 0.0, 1.0, 2.0])?;
    host::<B>(&[B::conv2d(&x, &w, 1, 0)?])
});

// The same maps with a bias of [10, 100] per channel, laid out NHWC: each pixel's two
// channels side by side, [1 + 10, 11 + 100], [2 + 10, 14 + 100], ...
case!(conv2d_nhwc_lays_each_pixels_channels_together, vec![vec![11.0, 111.0, 12.0, 114.0, 13.0, 117.0, 14.0, 120.0], vec![1.0, 11.0, 2.0, 14.0, 3.0, 17.0, 4.0, 20.0]], <B> {
    let x = f32s::<B>(&[1, 2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
    let w = f32s::<B>(&[2, 2, 1, 1], &[1.0, 0.0, 1.0, 2.0])?;
    let b = f32s::<B>(&[2], &[10.0, 100.0])?;
    host::<B>(&[
        shaped::<B>(B::conv2d_nhwc(&x, &w, Some(&b), 1, 0)?, &[1, 2, 2, 2])?,
        shaped::<B>(B::conv2d_nhwc(&x, &w, None, 1, 0)?, &[1, 2, 2, 2])?,
    ])
});

case!(max_pool2d_takes_window_maxima, vec![vec![6.0, 8.0, 14.0, 16.0]], <B> {
    let x = f32s::<B>(&[1, 1, 4, 4], &(1..=16).map(|v| v as f32).collect::<Vec<_>>())?;
    host::<B>(&[shaped::<B>(B::max_pool2d(&x, 2, 2)?, &[1, 1, 2, 2])?])
});
