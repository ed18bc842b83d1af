//! A dense layer, `x . w + b` and optionally its tanh, on f32 rows on the CPU as one `gemm`
//! call that starts from the bias, with the bias's gradient summed row by row.
//!
//! Why: candle adds a bias by broadcasting it over the rows, and the gradient of a broadcast
//! is summed over the leading dimension with integer divisions for every element (its
//! general reduction path): `perf` put that at 12% of a PPO run on CartPole. Adding the bias
//! as a pass of its own after the product then cost a copy of the product and another pass
//! over it (a tenth of device PPO's update). Here the result starts as the bias in every row
//! and `gemm` adds the product into it. Where the inner dimension fits one of `gemm`'s blocks
//! (every classic-control and MuJoCo network) each element is `b + (x . w)` rounded once, as
//! before, so the numbers are the same to the bit; a longer one (a Nature CNN's 3,136 inputs)
//! adds its blocks' partial sums to the bias in turn.
//!
//! With tanh the activation runs in the product's buffer and its gradient feeds the product's
//! in one node: apart, the pre-activation was a tensor of its own, and candle's backward pass
//! zeroed and added into a gradient for it (device PPO's hidden layers, 2,048 x 64 each).

use candle_core::{CpuStorage, CustomOp1, CustomOp3, Layout, Result, Shape, Tensor};

use crate::cpu_slices::contiguous_f32;
use crate::gemm_call::{product, Strided};
use crate::matmul::product_grads;

fn f32_of<'a>(s: &'a CpuStorage, op: &str) -> Result<&'a [f32]> {
    match s {
        CpuStorage::F32(v) => Ok(v),
        _ => Err(candle_core::Error::Msg(format!("{op} takes f32 tensors"))),
    }
}

/// A 2-D layout as a [`Strided`] matrix.
fn strided(l: &Layout) -> Strided {
    Strided {
        offset: l.start_offset(),
        rs: l.stride()[0],
        cs: l.stride()[1],
    }
}

/// `x . w + b` for `x` of shape `[m, k]`, `w` of shape `[k, n]` and `b` of shape `[n]`, and
/// with `tanh` its tanh, computed in the product's own buffer.
struct Linear {
    tanh: bool,
}

impl CustomOp3 for Linear {
    fn name(&self) -> &'static str {
        if self.tanh {
            "linear-tanh"
        } else {
            "linear"
        }
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (x, w, b) = (
            f32_of(s1, "linear")?,
            f32_of(s2, "linear")?,
            contiguous_f32(s3, l3, "linear")?,
        );
        let ((m, k), (k2, n)) = (l1.shape().dims2()?, l2.shape().dims2()?);
        if k != k2 || b.len() != n {
            return Err(candle_core::Error::Msg(format!(
                "linear: shapes {:?}, {:?} and {:?} do not fit x . w + b",
                l1.dims(),
                l2.dims(),
                l3.dims()
            )));
        }
        let mut y = Vec::with_capacity(m * n);
        // Element by element into the spare room: copying the bias a row at a time was a
        // `memmove` call per row (a twentieth of device PPO for rows of 64 or fewer numbers).
        for row in y.spare_capacity_mut()[..m * n].chunks_exact_mut(n.max(1)) {
            for (d, &b) in row.iter_mut().zip(b) {
                d.write(b);
            }
        }
        // SAFETY: the loop wrote all `m * n` elements: `m` rows of `n` (nothing when n is 0).
        unsafe { y.set_len(m * n) };
        if !product(
            (m, n, k),
            &mut y,
            Strided::rows(0, n),
            true,
            x,
            strided(l1),
            w,
            strided(l2),
        ) {
            return Err(candle_core::Error::Msg(
                "linear: an operand lies outside its storage".into(),
            ));
        }
        if self.tanh {
            crate::fast_tanh::tanh_in_place(&mut y);
        }
        Ok((CpuStorage::F32(y), Shape::from((m, n))))
    }

    /// As candle's: `grad . w^T`, `x^T . grad` and the rows of `grad` summed, each only where
    /// it is needed; with tanh, of the gradient through tanh (from the output `y`, as tanh's own
    /// backward takes it, so the numbers are those of the two ops apart).
    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        y: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let through_tanh;
        let grad = if self.tanh {
            through_tanh = crate::fast_tanh::grad_from_output(y, grad)?;
            &through_tanh
        } else {
            grad
        };
        let (grad_x, grad_w) = product_grads(x, w, grad)?;
        let grad_b = match b.track_op() {
            true => Some(grad.contiguous()?.apply_op1(RowSum)?),
            false => None,
        };
        let (grad_w, grad_b) = (
            crate::grad_sink::divert(w, grad_w)?,
            crate::grad_sink::divert(b, grad_b)?,
        );
        Ok((grad_x, grad_w, grad_b))
    }
}

/// The sum of the rows of a `[rows, n]` tensor, row 0 first: shape `[n]`.
struct RowSum;

impl CustomOp1 for RowSum {
    fn name(&self) -> &'static str {
        "row-sum"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let g = contiguous_f32(s, l, "row-sum")?;
        let n = l.shape().dims().last().copied().unwrap_or(1).max(1);
        let mut sum = vec![0.0f32; n];
        for row in g.chunks_exact(n) {
            for (s, g) in sum.iter_mut().zip(row) {
                *s += g;
            }
        }
        Ok((CpuStorage::F32(sum), Shape::from(n)))
    }
}

/// `x . w + b` (with `tanh`, its tanh) by [`Linear`] where `x` is an `[m, k]` f32 CPU tensor,
/// `w` a `[k, n]` one and `b` an `[n]` one; `None` for anything else (the caller multiplies,
/// broadcasts and applies tanh instead).
pub fn apply(x: &Tensor, w: &Tensor, b: &Tensor, tanh: bool) -> Option<Result<Tensor>> {
    let cpu_f32 = |t: &Tensor| t.dtype() == candle_core::DType::F32 && t.device().is_cpu();
    let (Ok((_, k)), Ok((k2, n)), Ok(n2)) = (x.dims2(), w.dims2(), b.dims1()) else {
        return None;
    };
    if k != k2 || n != n2 || !(cpu_f32(x) && cpu_f32(w) && cpu_f32(b)) {
        return None;
    }
    Some(b.contiguous().and_then(|b| x.apply_op3(w, &b, Linear { tanh })))
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};

    use crate::test_values::{bits, values};

    /// `x` of `[m, k]` (read transposed from `[k, m]` when `transpose_x`), `w` of `[k, n]`
    /// and `b` of `[n]`, as variables.
    fn operands(m: usize, k: usize, n: usize, transpose_x: bool) -> (Var, Tensor, Var, Var) {
        let cpu = &Device::Cpu;
        let var = |n: usize, shape: (usize, usize), seed| {
            Var::from_tensor(&Tensor::from_vec(values(n, seed), shape, cpu).unwrap()).unwrap()
        };
        let (x, x_used) = match transpose_x {
            true => {
                let x = var(m * k, (k, m), 1);
                let t = x.t().unwrap();
                (x, t)
            }
            false => {
                let x = var(m * k, (m, k), 1);
                let t = x.as_tensor().clone();
                (x, t)
            }
        };
        let b = Var::from_tensor(&Tensor::from_vec(values(n, 3), n, cpu).unwrap()).unwrap();
        (x, x_used, var(k * n, (k, n), 2), b)
    }

    #[test]
    fn values_and_gradients_equal_candles_product_and_broadcast_to_the_bit() {
        // A hidden layer, a layer from 4 inputs, and a transposed input.
        for (m, k, n, transpose_x) in [(37, 64, 19, false), (2048, 4, 64, false), (9, 64, 64, true)] {
            let (x, x_used, w, b) = operands(m, k, n, transpose_x);
            let ours = super::apply(&x_used, &w, &b, false).expect("f32 rows").unwrap();
            let theirs = x_used.matmul(&w).unwrap().broadcast_add(&b).unwrap();
            assert_same_values_and_gradients(&ours, &theirs, [&x, &w, &b], &format!("{m}x{k}x{n}"));
        }
    }

    /// Checks that `ours` and `theirs` (outputs of `[m, n]`) have the same bits, and so do the
    /// gradients of `vars` through them.
    fn assert_same_values_and_gradients(ours: &Tensor, theirs: &Tensor, vars: [&Var; 3], case: &str) {
        assert_eq!(bits(ours), bits(theirs), "{case}");
        // A loss whose gradient differs per element, so the row sums are not all alike.
        let (m, n) = ours.dims2().unwrap();
        let weights = Tensor::from_vec(values(m * n, 4), (m, n), &Device::Cpu).unwrap();
        let grads = |y: &Tensor| (y * &weights).unwrap().sum_all().unwrap().backward().unwrap();
        let (g_ours, g_theirs) = (grads(ours), grads(theirs));
        for v in vars {
            let (a, c) = (g_ours.get(v).unwrap(), g_theirs.get(v).unwrap());
            assert_eq!(a.dims(), c.dims());
            assert_eq!(bits(a), bits(c), "{case}");
        }
    }

    #[test]
    fn with_tanh_values_and_gradients_equal_the_layer_then_tanh_to_the_bit() {
        // Device PPO's hidden layers, a layer from 4 inputs, and a transposed input; the
        // values' scale puts some pre-activations where tanh saturates and some near 0.
        for (m, k, n, transpose_x) in [(2048, 64, 64, false), (300, 4, 64, false), (9, 64, 17, true)] {
            let (x, x_used, w, b) = operands(m, k, n, transpose_x);
            let fused = super::apply(&x_used, &w, &b, true).expect("f32 rows").unwrap();
            let apart = crate::fast_tanh::apply(&super::apply(&x_used, &w, &b, false).unwrap().unwrap()).unwrap();
            assert_same_values_and_gradients(&fused, &apart, [&x, &w, &b], &format!("{m}x{k}x{n}"));
        }
    }

    #[test]
    fn a_long_inner_dimension_stays_within_rounding_of_candles() {
        // A Nature CNN's dense layer: 3,136 inputs, over several of gemm's blocks.
        let (x, x_used, w, b) = operands(8, 3136, 16, false);
        let ours = super::apply(&x_used, &w, &b, false)
            .unwrap()
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let theirs = x
            .matmul(&w)
            .unwrap()
            .broadcast_add(&b)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        for (a, c) in ours.iter().flatten().zip(theirs.iter().flatten()) {
            assert!((a - c).abs() <= 1e-4 * c.abs().max(1.0), "{a} against {c}");
        }
    }

    #[test]
    fn other_shapes_and_dtypes_are_left_to_the_caller() {
        let z = |shape: &[usize], dtype| Tensor::zeros(shape, dtype, &Device::Cpu).unwrap();
        let f32 = candle_core::DType::F32;
        let (x, w) = (z(&[2, 3], f32), z(&[3, 4], f32));
        assert!(
            super::apply(&x, &w, &z(&[5], f32), false).is_none(),
            "a bias of the wrong width"
        );
        assert!(super::apply(&x, &w, &z(&[1, 4], f32), true).is_none(), "a 2-D bias");
        assert!(
            super::apply(&x, &z(&[2, 4], f32), &z(&[4], f32), false).is_none(),
            "inner dimensions differ"
        );
        assert!(
            super::apply(&z(&[2, 2, 3], f32), &w, &z(&[4], f32), true).is_none(),
            "a time rank"
        );
        let f64 = candle_core::DType::F64;
        assert!(super::apply(&z(&[2, 3], f64), &z(&[3, 4], f64), &z(&[4], f64), true).is_none());
    }
}
