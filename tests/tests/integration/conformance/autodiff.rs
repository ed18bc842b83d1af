//! `AutodiffOps`: gradients through every family's ops, variables overwritten in place, and detaching.

use super::prelude::*;

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

// sum(tanh(x w + b)), x = [[1, 2], [3, 4]], w = [0.25, -0.5], b = 0.5: pre-activations p = -0.25
// and -0.75 (exact in binary). With d_i = 1 - tanh(p_i)², d/db = d_1 + d_2, d/dw_j = sum_i x_ij
// d_i and d/dx_ij = w_j d_i.
case!(grad_of_linear_tanh_sum, {
    let d = [1.0 - (-0.25f64).tanh().powi(2), 1.0 - (-0.75f64).tanh().powi(2)];
    vec![
        vec![(-0.25f64).tanh() + (-0.75f64).tanh()],
        vec![d[0] + d[1]],
        vec![d[0] + 3.0 * d[1], 2.0 * d[0] + 4.0 * d[1]],
        vec![0.25 * d[0], -0.5 * d[0], 0.25 * d[1], -0.5 * d[1]],
    ]
}, <B> {
    let x = var::<B>(&[2, 2], &[1.0, 2.0, 3.0, 4.0])?;
    let w = var::<B>(&[2, 1], &[0.25, -0.5])?;
    let b = var::<B>(&[1], &[0.5])?;
    let loss = B::sum_all(&B::linear_tanh(B::var_tensor(&x), B::var_tensor(&w), B::var_tensor(&b))?)?;
    let g = B::grads(&loss, &[&b, &w, &x])?;
    host::<B>(&[loss, g[0].clone(), g[1].clone(), g[2].clone()])
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
