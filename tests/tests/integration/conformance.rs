//! Backend conformance: every `Backend` operation on candle and on tch, with the same inputs,
//! must give the same outputs and gradients (1e-5 relative for f32), and those outputs must
//! equal the values worked out by hand in each case.

use backend_candle::Candle;
use backend_tch::Tch;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{test_device, Backend, CoreError, DType, HostTensor, Result};
use rlgraph_tests::{assert_backends_agree, assert_expected, f32s, host, i64s};

/// Defines a test that runs `$body` (generic over the backend `$B`) on both backends, checks
/// they agree, and checks the outputs against `$expected` (one flat list per output).
macro_rules! case {
    ($name:ident, $expected:expr, <$B:ident> $body:block) => {
        #[test]
        fn $name() {
            fn run<$B: Backend>() -> Result<Vec<HostTensor>> $body
            let candle = run::<Candle>().unwrap_or_else(|e| panic!("candle: {e}"));
            let tch = run::<Tch>().unwrap_or_else(|e| panic!("tch: {e}"));
            assert_backends_agree(stringify!($name), &candle, &tch);
            let expected: Vec<Vec<f64>> = $expected;
            assert_expected(stringify!($name), &candle, &expected);
        }
    };
}

/// Fails the case unless `t` has `shape`.
fn shaped<B: Backend>(t: B::Tensor, shape: &[usize]) -> Result<B::Tensor> {
    if B::shape(&t) != shape {
        return Err(CoreError::Backend {
            backend: B::NAME,
            op: "test",
            message: format!("shape {:?}, expected {shape:?}", B::shape(&t)),
        });
    }
    Ok(t)
}

case!(host_round_trip_all_dtypes, vec![vec![1.0, 2.0, 3.0, 4.0], vec![0.5, -1.5], vec![-3.0, 7.0], vec![0.0, 255.0]], <B> {
    let hosts = [
        HostTensor::f32([2, 2], vec![1.0, 2.0, 3.0, 4.0])?,
        HostTensor::f64([2], vec![0.5, -1.5])?,
        HostTensor::i64([2], vec![-3, 7])?,
        HostTensor::u8([2], vec![0, 255])?,
    ];
    let ts: Vec<B::Tensor> = hosts.iter().map(|h| B::from_host(h, test_device::<B>())).collect::<Result<_>>()?;
    let back = host::<B>(&ts)?;
    if back != hosts {
        return Err(CoreError::Backend { backend: B::NAME, op: "test", message: format!("{back:?}") });
    }
    Ok(back)
});

case!(full_and_scalar, vec![vec![2.5, 2.5], vec![3.0]], <B> {
    let a = shaped::<B>(B::full(&[2], 2.5, DType::F32, test_device::<B>())?, &[2])?;
    let b = shaped::<B>(B::scalar(3.0, DType::I64, test_device::<B>())?, &[])?;
    if B::dtype(&b) != DType::I64 { return Err(CoreError::Device("dtype".into())); }
    host::<B>(&[a, b])
});

case!(arange_counts_from_zero, vec![vec![0.0, 1.0, 2.0, 3.0]], <B> {
    host::<B>(&[B::arange(4, test_device::<B>())?])
});

case!(cast_truncates_toward_zero, vec![vec![1.0, -1.0, 2.0], vec![3.0, -4.0]], <B> {
    let a = B::cast(&f32s::<B>(&[3], &[1.7, -1.7, 2.0])?, DType::I64)?;
    let b = B::cast(&i64s::<B>(&[2], &[3, -4])?, DType::F32)?;
    host::<B>(&[a, b])
});

case!(add_broadcasts_rows, vec![vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let b = f32s::<B>(&[3], &[10.0, 20.0, 30.0])?;
    host::<B>(&[shaped::<B>(B::add(&a, &b)?, &[2, 3])?])
});

case!(sub_broadcasts_both_ways, vec![vec![0.0, -1.0, -2.0, 1.0, 0.0, -1.0]], <B> {
    let a = f32s::<B>(&[2, 1], &[1.0, 2.0])?;
    let b = f32s::<B>(&[1, 3], &[1.0, 2.0, 3.0])?;
    host::<B>(&[shaped::<B>(B::sub(&a, &b)?, &[2, 3])?])
});

case!(mul_by_scalar_tensor, vec![vec![3.0, -4.0]], <B> {
    let a = f32s::<B>(&[2], &[1.5, -2.0])?;
    host::<B>(&[B::mul(&a, &f32s::<B>(&[], &[2.0])?)?])
});

case!(div_floats, vec![vec![0.5, 0.75]], <B> {
    host::<B>(&[B::div(&f32s::<B>(&[2], &[1.0, 3.0])?, &f32s::<B>(&[2], &[2.0, 4.0])?)?])
});

case!(integer_add_and_truncating_div, vec![vec![4.0, 6.0], vec![3.0, -3.0]], <B> {
    let a = B::add(&i64s::<B>(&[2], &[1, 2])?, &i64s::<B>(&[2], &[3, 4])?)?;
    let b = B::div(&i64s::<B>(&[2], &[7, -7])?, &i64s::<B>(&[2], &[2, 2])?)?;
    host::<B>(&[a, b])
});

case!(maximum_and_minimum, vec![vec![3.0, 5.0, -1.0], vec![1.0, 2.0, -2.0]], <B> {
    let a = f32s::<B>(&[3], &[1.0, 5.0, -2.0])?;
    let b = f32s::<B>(&[3], &[3.0, 2.0, -1.0])?;
    host::<B>(&[B::maximum(&a, &b)?, B::minimum(&a, &b)?])
});

// Positive bases only: candle computes pow as exp(b * ln a).
case!(pow_of_positive_bases, vec![vec![4.0, 3f64.sqrt(), 0.25]], <B> {
    host::<B>(&[B::pow(&f32s::<B>(&[3], &[2.0, 3.0, 4.0])?, &f32s::<B>(&[3], &[2.0, 0.5, -1.0])?)?])
});

case!(affine_scales_and_shifts, vec![vec![4.0, 7.0], vec![7.0]], <B> {
    let a = B::affine(&f32s::<B>(&[2], &[1.0, 2.0])?, 3.0, 1.0)?;
    let b = B::affine(&i64s::<B>(&[1], &[3])?, 2.0, 1.0)?;
    host::<B>(&[a, b])
});

case!(neg_and_abs, vec![vec![-1.5, 2.0], vec![1.5, 2.0]], <B> {
    let a = f32s::<B>(&[2], &[1.5, -2.0])?;
    host::<B>(&[B::neg(&a)?, B::abs(&a)?])
});

case!(exp_and_log, vec![vec![1.0, std::f64::consts::E], vec![0.0, 2.0]], <B> {
    let e2 = std::f64::consts::E.powi(2) as f32;
    host::<B>(&[B::exp(&f32s::<B>(&[2], &[0.0, 1.0])?)?, B::log(&f32s::<B>(&[2], &[1.0, e2])?)?])
});

case!(sqrt_and_square, vec![vec![2.0, 1.5], vec![9.0, 2.25]], <B> {
    host::<B>(&[B::sqrt(&f32s::<B>(&[2], &[4.0, 2.25])?)?, B::square(&f32s::<B>(&[2], &[3.0, -1.5])?)?])
});

case!(tanh_and_sigmoid, vec![vec![0.5f64.tanh(), (-1f64).tanh()], vec![0.5, 1.0 / (1.0 + (-2f64).exp())]], <B> {
    host::<B>(&[B::tanh(&f32s::<B>(&[2], &[0.5, -1.0])?)?, B::sigmoid(&f32s::<B>(&[2], &[0.0, 2.0])?)?])
});

// sin(pi/6) = 1/2, sin(-pi/2) = -1, cos(pi/3) = 1/2, cos(pi) = -1; floor rounds toward -inf.
case!(sin_cos_and_floor, vec![vec![0.5, -1.0], vec![0.5, -1.0], vec![2.0, -3.0, -1.0, 0.0]], <B> {
    use std::f32::consts::PI;
    host::<B>(&[
        B::sin(&f32s::<B>(&[2], &[PI / 6.0, -PI / 2.0])?)?,
        B::cos(&f32s::<B>(&[2], &[PI / 3.0, PI])?)?,
        B::floor(&f32s::<B>(&[4], &[2.7, -2.5, -1.0, 0.3])?)?,
    ])
});

case!(relu_and_clamp, vec![vec![0.0, 0.5], vec![-1.0, 0.2, 1.0]], <B> {
    host::<B>(&[B::relu(&f32s::<B>(&[2], &[-1.0, 0.5])?)?, B::clamp(&f32s::<B>(&[3], &[-3.0, 0.2, 5.0])?, -1.0, 1.0)?])
});

case!(comparisons_give_u8_masks, vec![
    vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0], vec![0.0, 1.0, 1.0], vec![1.0, 0.0, 0.0], vec![1.0, 1.0, 0.0]
], <B> {
    let a = f32s::<B>(&[3], &[1.0, 2.0, 3.0])?;
    let b = f32s::<B>(&[], &[2.0])?;
    let out = [B::eq(&a, &b)?, B::gt(&a, &b)?, B::ge(&a, &b)?, B::lt(&a, &b)?, B::le(&a, &b)?];
    if out.iter().any(|m| B::dtype(m) != DType::U8) { return Err(CoreError::Device("mask dtype".into())); }
    host::<B>(&out)
});

case!(where_cond_selects_and_broadcasts, vec![vec![1.0, 0.0, 3.0]], <B> {
    let mask = B::from_host(&HostTensor::u8([3], vec![1, 0, 1])?, test_device::<B>())?;
    host::<B>(&[B::where_cond(&mask, &f32s::<B>(&[3], &[1.0, 2.0, 3.0])?, &f32s::<B>(&[], &[0.0])?)?])
});

case!(sum_over_dims, vec![vec![5.0, 7.0, 9.0], vec![6.0, 15.0], vec![21.0], vec![21.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[
        shaped::<B>(B::sum(&a, &[0], false)?, &[3])?,
        shaped::<B>(B::sum(&a, &[1], true)?, &[2, 1])?,
        shaped::<B>(B::sum(&a, &[0, 1], false)?, &[])?,
        shaped::<B>(B::sum_all(&a)?, &[])?,
    ])
});

case!(mean_over_dims, vec![vec![2.0, 5.0], vec![3.5]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[B::mean(&a, &[1], false)?, B::mean_all(&a)?])
});

case!(max_and_min_along_a_dim, vec![vec![3.0, 6.0], vec![1.0, 4.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 3.0, 2.0, 6.0, 4.0, 5.0])?;
    host::<B>(&[shaped::<B>(B::max(&a, 1, false)?, &[2])?, shaped::<B>(B::min(&a, 1, true)?, &[2, 1])?])
});

case!(argmax_gives_i64_indices, vec![vec![1.0, 0.0], vec![1.0, 1.0, 1.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 3.0, 2.0, 6.0, 4.0, 5.0])?;
    let rows = shaped::<B>(B::argmax(&a, 1, true)?, &[2, 1])?;
    if B::dtype(&rows) != DType::I64 { return Err(CoreError::Device("argmax dtype".into())); }
    host::<B>(&[rows, B::argmax(&a, 0, false)?])
});

case!(reshape_and_transpose, vec![vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]], <B> {
    let a = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[shaped::<B>(B::reshape(&a, &[3, 2])?, &[3, 2])?, shaped::<B>(B::transpose(&a, 0, 1)?, &[3, 2])?])
});

// permute([2, 3, 4] of 0..24, [2, 0, 1]) has shape [4, 2, 3] and element (k, i, j) = x[i][j][k]
// = 12 i + 4 j + k, written out by hand below; a non-permutation is an error.
case!(permute_reorders_dimensions, vec![vec![
    0.0, 4.0, 8.0, 12.0, 16.0, 20.0,
    1.0, 5.0, 9.0, 13.0, 17.0, 21.0,
    2.0, 6.0, 10.0, 14.0, 18.0, 22.0,
    3.0, 7.0, 11.0, 15.0, 19.0, 23.0,
]], <B> {
    let a = f32s::<B>(&[2, 3, 4], &(0..24).map(|v| v as f32).collect::<Vec<_>>())?;
    if B::permute(&a, &[0, 0, 1]).is_ok() || B::permute(&a, &[1, 0]).is_ok() {
        return Err(CoreError::Device("a non-permutation must fail".into()));
    }
    host::<B>(&[shaped::<B>(B::permute(&a, &[2, 0, 1])?, &[4, 2, 3])?])
});

case!(concat_along_each_dim, vec![vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 5.0, 3.0, 4.0, 6.0]], <B> {
    let a = B::concat(&[f32s::<B>(&[2], &[1.0, 2.0])?, f32s::<B>(&[1], &[3.0])?], 0)?;
    let b = B::concat(&[f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?, f32s::<B>(&[2, 1], &[5.0, 6.0])?], 1)?;
    host::<B>(&[a, shaped::<B>(b, &[2, 3])?])
});

case!(narrow_takes_a_slice, vec![vec![1.0, 2.0, 3.0]], <B> {
    host::<B>(&[B::narrow(&f32s::<B>(&[5], &[0.0, 1.0, 2.0, 3.0, 4.0])?, 0, 1, 3)?])
});

case!(broadcast_to_repeats_rows, vec![vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]], <B> {
    host::<B>(&[shaped::<B>(B::broadcast_to(&f32s::<B>(&[3], &[1.0, 2.0, 3.0])?, &[2, 3])?, &[2, 3])?])
});

case!(unsqueeze_and_squeeze, vec![vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]], <B> {
    let a = shaped::<B>(B::unsqueeze(&f32s::<B>(&[3], &[1.0, 2.0, 3.0])?, 0)?, &[1, 3])?;
    let b = shaped::<B>(B::squeeze(&a, 0)?, &[3])?;
    if B::squeeze(&a, 1).is_ok() { return Err(CoreError::Device("squeeze of a size-3 dim must fail".into())); }
    host::<B>(&[a, b])
});

case!(pad_zeros_around_a_dim, vec![vec![0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0]], <B> {
    host::<B>(&[shaped::<B>(B::pad_zeros(&f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?, 1, 1, 2)?, &[2, 5])?])
});

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

case!(max_pool2d_takes_window_maxima, vec![vec![6.0, 8.0, 14.0, 16.0]], <B> {
    let x = f32s::<B>(&[1, 1, 4, 4], &(1..=16).map(|v| v as f32).collect::<Vec<_>>())?;
    host::<B>(&[shaped::<B>(B::max_pool2d(&x, 2, 2)?, &[1, 1, 2, 2])?])
});

case!(index_select_rows, vec![vec![5.0, 6.0, 1.0, 2.0]], <B> {
    let t = f32s::<B>(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[B::index_select(&t, 0, &i64s::<B>(&[2], &[2, 0])?)?])
});

case!(gather_along_dim_1, vec![vec![3.0, 4.0]], <B> {
    let t = f32s::<B>(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    host::<B>(&[B::gather(&t, 1, &i64s::<B>(&[2, 1], &[2, 0])?)?])
});

case!(scatter_add_accumulates, vec![vec![3.0, 0.0, 0.0, 0.0, 4.0, 3.0]], <B> {
    let t = B::full(&[2, 3], 0.0, DType::F32, test_device::<B>())?;
    let idx = i64s::<B>(&[2, 2], &[0, 0, 2, 1])?;
    host::<B>(&[B::scatter_add(&t, 1, &idx, &f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?)?])
});

case!(one_hot_of_indices, vec![vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0]], <B> {
    host::<B>(&[shaped::<B>(B::one_hot(&i64s::<B>(&[2], &[2, 0])?, 3, DType::F32)?, &[2, 3])?])
});

case!(f64_precision_is_kept, vec![vec![1.0 + 1e-12]], <B> {
    let a = B::from_host(&HostTensor::f64([1], vec![1.0])?, test_device::<B>())?;
    let b = B::from_host(&HostTensor::f64([1], vec![1e-12])?, test_device::<B>())?;
    let c = B::add(&a, &b)?;
    let h = B::to_host(&c)?;
    if h.data.to_f64()[0] == 1.0 { return Err(CoreError::Device("f64 lost precision".into())); }
    Ok(vec![h])
});

// ---- gradients ----

fn var<B: Backend>(shape: &[usize], data: &[f32]) -> Result<B::Var> {
    B::var(&f32s::<B>(shape, data)?)
}

case!(grad_of_matmul_sum, vec![vec![11.0], vec![1.0, 2.0], vec![3.0, 4.0]], <B> {
    let x = var::<B>(&[1, 2], &[1.0, 2.0])?;
    let w = var::<B>(&[2, 1], &[3.0, 4.0])?;
    let loss = B::sum_all(&B::matmul(B::var_tensor(&x), B::var_tensor(&w))?)?;
    let g = B::grads(&loss, &[&w, &x])?;
    host::<B>(&[loss, g[0].clone(), g[1].clone()])
});

// sum(x w + b) over 2 rows, x = [[1, 2], [3, 4]], w = [3, 4], b = 0.5: 11 + 25 + 2 * 0.5 = 37;
// d/db = 2 (one per row), d/dw = the column sums of x [4, 6], d/dx = w on every row.
case!(grad_of_linear_sum, vec![vec![37.0], vec![2.0], vec![4.0, 6.0], vec![3.0, 4.0, 3.0, 4.0]], <B> {
    let x = var::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let w = var::<B>(&[2, 1], &[3.0, 4.0])?;
    let b = var::<B>(&[1], &[0.5])?;
    let loss = B::sum_all(&B::linear(B::var_tensor(&x), B::var_tensor(&w), B::var_tensor(&b))?)?;
    let g = B::grads(&loss, &[&b, &w, &x])?;
    host::<B>(&[loss, g[0].clone(), g[1].clone(), g[2].clone()])
});

// One Adam step from zero moments at t = 1 (lr 0.1, beta1 0.9, beta2 0.999, eps 1e-8), by
// hand: m = 0.1 g = [0.05, -0.1], v = 0.001 g^2 = [0.00025, 0.001]; corrected (x10, x1000)
// they are [0.5, -1] and [0.25, 1], so each weight moves by 0.1 * (+-1) against its gradient.
// In f32 (the fused path on candle) and in f64 (the separate ops).
case!(adam_step_by_hand, vec![
    vec![0.9, -1.9], vec![0.05, -0.1], vec![0.00025, 0.001],
    vec![0.9, -1.9], vec![0.05, -0.1], vec![0.00025, 0.001],
], <B> {
    let h = rlgraph_core::AdamStep { lr: 0.1, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, bias1: 10.0, bias2: 1000.0 };
    let mut out = vec![];
    for dtype in [DType::F32, DType::F64] {
        let at = |x: &[f32]| -> Result<B::Var> { B::var(&B::cast(&f32s::<B>(&[2], x)?, dtype)?) };
        let (w, m, v) = (at(&[1.0, -2.0])?, at(&[0.0, 0.0])?, at(&[0.0, 0.0])?);
        let g = B::cast(&f32s::<B>(&[2], &[0.5, -1.0])?, dtype)?;
        B::adam_step(&w, &m, &v, &g, &h)?;
        out.extend(host::<B>(&[B::var_tensor(&w).clone(), B::var_tensor(&m).clone(), B::var_tensor(&v).clone()])?);
    }
    Ok(out)
});

case!(grad_of_sigmoid, vec![{
    let s = |x: f64| 1.0 / (1.0 + (-x).exp());
    vec![s(0.5) * (1.0 - s(0.5)), s(-1.0) * (1.0 - s(-1.0))]
}], <B> {
    let v = var::<B>(&[2], &[0.5, -1.0])?;
    let loss = B::sum_all(&B::sigmoid(B::var_tensor(&v))?)?;
    host::<B>(&B::grads(&loss, &[&v])?)
});

case!(grad_of_tanh, vec![vec![1.0 - 0.5f64.tanh().powi(2), 1.0 - 1f64.tanh().powi(2)]], <B> {
    let v = var::<B>(&[2], &[0.5, -1.0])?;
    let loss = B::sum_all(&B::tanh(B::var_tensor(&v))?)?;
    host::<B>(&B::grads(&loss, &[&v])?)
});

// d/dv (e^v * v) = e^v (1 + v)
case!(grad_of_exp_times_identity, vec![vec![0.5f64.exp() * 1.5, 0.0]], <B> {
    let v = var::<B>(&[2], &[0.5, -1.0])?;
    let t = B::var_tensor(&v);
    let loss = B::sum_all(&B::mul(&B::exp(t)?, t)?)?;
    host::<B>(&B::grads(&loss, &[&v])?)
});

// d/dv log(v^2) = 2 / v; d/dv sqrt(v) = 1 / (2 sqrt v); d/dv 1/v = -1/v^2
case!(grad_of_log_sqrt_div, vec![vec![2.0 / 4.0 + 1.0 / (2.0 * 2.0) - 1.0 / 16.0]], <B> {
    let v = var::<B>(&[1], &[4.0])?;
    let t = B::var_tensor(&v);
    let one = f32s::<B>(&[1], &[1.0])?;
    let terms = B::add(&B::add(&B::log(&B::square(t)?)?, &B::sqrt(t)?)?, &B::div(&one, t)?)?;
    host::<B>(&B::grads(&B::sum_all(&terms)?, &[&v])?)
});

case!(grad_sums_over_broadcast_dims, vec![vec![2.0, 2.0, 2.0]], <B> {
    let v = var::<B>(&[1, 3], &[1.0, 2.0, 3.0])?;
    let c = f32s::<B>(&[2, 3], &[0.0; 6])?;
    let loss = B::sum_all(&B::add(B::var_tensor(&v), &c)?)?;
    host::<B>(&B::grads(&loss, &[&v])?)
});

case!(grad_of_relu_and_maximum, vec![vec![0.0, 1.0], vec![0.0, 1.0]], <B> {
    let v = var::<B>(&[2], &[-1.0, 2.0])?;
    let t = B::var_tensor(&v);
    let a = B::grads(&B::sum_all(&B::relu(t)?)?, &[&v])?;
    let zero = f32s::<B>(&[], &[0.0])?;
    let b = B::grads(&B::sum_all(&B::maximum(t, &zero)?)?, &[&v])?;
    host::<B>(&[a[0].clone(), b[0].clone()])
});

case!(grad_of_an_unused_variable_is_zero, vec![vec![2.0], vec![0.0, 0.0]], <B> {
    let used = var::<B>(&[1], &[1.0])?;
    let unused = var::<B>(&[2], &[5.0, 6.0])?;
    let loss = B::sum_all(&B::affine(B::var_tensor(&used), 2.0, 0.0)?)?;
    host::<B>(&B::grads(&loss, &[&used, &unused])?)
});

case!(var_set_overwrites_in_place, vec![vec![3.0, 4.0], vec![6.0, 8.0]], <B> {
    let v = var::<B>(&[2], &[1.0, 2.0])?;
    B::var_set(&v, &f32s::<B>(&[2], &[3.0, 4.0])?)?;
    if B::var_set(&v, &f32s::<B>(&[3], &[1.0, 2.0, 3.0])?).is_ok() {
        return Err(CoreError::Device("var_set of a wrong shape must fail".into()));
    }
    let t = B::var_tensor(&v);
    let g = B::grads(&B::sum_all(&B::square(t)?)?, &[&v])?;
    host::<B>(&[B::var_tensor(&v).clone(), g[0].clone()])
});

case!(detach_blocks_the_gradient, vec![vec![1.0, 2.0]], <B> {
    let v = var::<B>(&[2], &[1.0, 2.0])?;
    let t = B::var_tensor(&v);
    let loss = B::sum_all(&B::mul(&B::detach(t), t)?)?;
    host::<B>(&B::grads(&loss, &[&v])?)
});

case!(grad_through_gather, vec![vec![0.0, 0.0, 2.0]], <B> {
    let v = var::<B>(&[1, 3], &[1.0, 2.0, 3.0])?;
    let g = B::gather(B::var_tensor(&v), 1, &i64s::<B>(&[1, 2], &[2, 2])?)?;
    host::<B>(&B::grads(&B::sum_all(&g)?, &[&v])?)
});

case!(grad_of_conv2d_weights, vec![vec![12.0, 16.0, 24.0, 28.0]], <B> {
    let x = f32s::<B>(&[1, 1, 3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])?;
    let w = var::<B>(&[1, 1, 2, 2], &[0.1, -0.2, 0.3, 0.4])?;
    let loss = B::sum_all(&B::conv2d(&x, B::var_tensor(&w), 1, 0)?)?;
    host::<B>(&B::grads(&loss, &[&w])?)
});

// loss = mean((x w - y)^2) over 2 rows; dL/dw = 2/2 * x^T (x w - y)
case!(grad_of_mean_squared_error, vec![vec![(1.0 * 2.0 + 3.0 * 3.0), (2.0 * 2.0 + 4.0 * 3.0)]], <B> {
    let x = f32s::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let w = var::<B>(&[2, 1], &[1.0, 1.0])?;
    let y = f32s::<B>(&[2, 1], &[1.0, 4.0])?; // residuals: 3 - 1 = 2, 7 - 4 = 3
    let r = B::sub(&B::matmul(&x, B::var_tensor(&w))?, &y)?;
    host::<B>(&B::grads(&B::mean_all(&B::square(&r)?)?, &[&w])?)
});

// ---- seeded randomness, drawn on the host ----

case!(uniform_is_seeded_and_in_range, vec![vec![1.0, 1.0]], <B> {
    let u = B::uniform(&[10_000], -1.0, 3.0, DType::F32, test_device::<B>(), &mut ChaCha8Rng::seed_from_u64(1))?;
    let v = B::to_host(&u)?.data.to_f64();
    let in_range = v.iter().all(|&x| (-1.0..3.0).contains(&x));
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    // The mean of U(-1, 3) is 1 with standard error 4/sqrt(12 * 10000) ~ 0.012.
    let mean_ok = (mean - 1.0).abs() < 0.05;
    Ok(vec![HostTensor::f64([2], vec![f64::from(u8::from(in_range)), f64::from(u8::from(mean_ok))])?])
});

case!(normal_is_seeded_with_the_right_moments, vec![vec![1.0, 1.0]], <B> {
    let n = B::normal(&[10_000], 2.0, 0.5, DType::F64, test_device::<B>(), &mut ChaCha8Rng::seed_from_u64(2))?;
    let v = B::to_host(&n)?.data.to_f64();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    let ok = |b: bool| f64::from(u8::from(b));
    Ok(vec![HostTensor::f64([2], vec![ok((mean - 2.0).abs() < 0.02), ok((var.sqrt() - 0.5).abs() < 0.02)])?])
});

#[test]
fn same_seed_gives_the_same_numbers_on_both_backends() {
    let a = Candle::uniform(
        &[64],
        0.0,
        1.0,
        DType::F32,
        test_device::<Candle>(),
        &mut ChaCha8Rng::seed_from_u64(9),
    )
    .unwrap();
    let b = Tch::uniform(
        &[64],
        0.0,
        1.0,
        DType::F32,
        test_device::<Tch>(),
        &mut ChaCha8Rng::seed_from_u64(9),
    )
    .unwrap();
    assert_eq!(Candle::to_host(&a).unwrap(), Tch::to_host(&b).unwrap());
}

#[test]
fn shape_errors_are_errors_not_panics() {
    fn run<B: Backend>() {
        let a = f32s::<B>(&[2, 3], &[0.0; 6]).unwrap();
        let b = f32s::<B>(&[4], &[0.0; 4]).unwrap();
        assert!(B::add(&a, &b).is_err(), "{}", B::NAME);
        assert!(B::matmul(&a, &a).is_err(), "{}", B::NAME);
        assert!(B::reshape(&a, &[5]).is_err(), "{}", B::NAME);
        assert!(HostTensor::f32([3], vec![1.0]).is_err());
        // Built by hand past that check, a shape that does not hold the data is refused,
        // not read past the end of it.
        let torn = HostTensor {
            shape: vec![1000],
            data: rlgraph_core::HostData::F32(vec![1.0]),
        };
        assert!(B::from_host(&torn, test_device::<B>()).is_err(), "{}", B::NAME);
    }
    run::<Candle>();
    run::<Tch>();
}

// `sync` waits for queued work: a product computed, synchronized, then read back; on the
// CPU it is a no-op. [[1, 2], [3, 4]] x [[1], [1]] = [[3], [7]] by hand.
case!(sync_after_queued_work, vec![vec![3.0, 7.0]], <B> {
    let a = B::from_host(&HostTensor::f32([2, 2], vec![1.0, 2.0, 3.0, 4.0])?, test_device::<B>())?;
    let b = B::from_host(&HostTensor::f32([2, 1], vec![1.0, 1.0])?, test_device::<B>())?;
    let c = B::matmul(&a, &b)?;
    B::sync(test_device::<B>())?;
    host::<B>(&[c])
});

#[test]
fn sync_on_a_device_that_does_not_exist_is_an_error_naming_it() {
    fn run<B: Backend>() -> String {
        match B::sync(rlgraph_core::Device::Cuda(99)) {
            Ok(()) => panic!("{}: cuda:99 synchronized", B::NAME),
            Err(e) => e.to_string(),
        }
    }
    for message in [run::<Candle>(), run::<Tch>()] {
        assert!(message.contains("cuda") || message.contains("99"), "{message}");
    }
}
