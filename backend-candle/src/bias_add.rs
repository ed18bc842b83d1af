//! A dense layer's bias added to f32 rows on the CPU, with the bias's gradient summed row
//! by row.
//!
//! Why: candle adds a bias by broadcasting it over the rows, and the gradient of a broadcast
//! is summed over the leading dimension with integer divisions for every element (its
//! general reduction path). `perf` put that at 12% of a PPO run on CartPole. Here the
//! forward pass is the same f32 additions, and the backward pass sums the rows in the same
//! order as candle does (row 0 first), so the numbers are the same to the bit.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape, Tensor};

fn contiguous_f32<'a>(s: &'a CpuStorage, l: &Layout, op: &str) -> Result<&'a [f32]> {
    match (s, l.contiguous_offsets()) {
        (CpuStorage::F32(v), Some((start, end))) => Ok(&v[start..end]),
        _ => Err(candle_core::Error::Msg(format!("{op} takes contiguous f32 tensors"))),
    }
}

/// `x + b` for `x` of shape `[rows, n]` and `b` of shape `[n]`.
struct BiasAdd;

impl CustomOp2 for BiasAdd {
    fn name(&self) -> &'static str {
        "bias-add"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        let (x, b) = (contiguous_f32(s1, l1, "bias-add")?, contiguous_f32(s2, l2, "bias-add")?);
        let mut y = x.to_vec();
        for row in y.chunks_exact_mut(b.len().max(1)) {
            for (y, b) in row.iter_mut().zip(b) {
                *y += b;
            }
        }
        Ok((CpuStorage::F32(y), l1.shape().clone()))
    }

    fn bwd(&self, _x: &Tensor, _b: &Tensor, _y: &Tensor, grad: &Tensor) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let grad_b = grad.contiguous()?.apply_op1(RowSum)?;
        Ok((Some(grad.clone()), Some(grad_b)))
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

/// `x + b` by [`BiasAdd`] where `x` is a `[rows, n]` f32 CPU tensor and `b` an `[n]` one;
/// `None` for anything else (the caller broadcasts instead).
pub fn apply(x: &Tensor, b: &Tensor) -> Option<Result<Tensor>> {
    let cpu_f32 = |t: &Tensor| t.dtype() == candle_core::DType::F32 && t.device().is_cpu();
    let (Ok((_, n)), Ok(m)) = (x.dims2(), b.dims1()) else {
        return None;
    };
    if n != m || !cpu_f32(x) || !cpu_f32(b) {
        return None;
    }
    Some(x.contiguous().and_then(|x| x.apply_op2(&b.contiguous()?, BiasAdd)))
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};

    use crate::test_values::{bits, values};

    #[test]
    fn values_and_gradients_equal_candles_broadcast_to_the_bit() {
        let (rows, n) = (37, 19);
        let x = Var::from_tensor(&Tensor::from_vec(values(rows * n, 1), (rows, n), &Device::Cpu).unwrap()).unwrap();
        let b = Var::from_tensor(&Tensor::from_vec(values(n, 2), n, &Device::Cpu).unwrap()).unwrap();
        // A loss whose gradient differs per element, so the row sums are not all alike.
        let weights = Tensor::from_vec(values(rows * n, 3), (rows, n), &Device::Cpu).unwrap();
        let ours = super::apply(&x, &b).expect("f32 rows and a bias").unwrap();
        let theirs = x.broadcast_add(&b).unwrap();
        assert_eq!(bits(&ours), bits(&theirs));
        let grads = |y: &Tensor| (y * &weights).unwrap().sum_all().unwrap().backward().unwrap();
        let (g_ours, g_theirs) = (grads(&ours), grads(&theirs));
        for v in [&x, &b] {
            let (a, c) = (g_ours.get(v).unwrap(), g_theirs.get(v).unwrap());
            assert_eq!(a.dims(), c.dims());
            assert_eq!(bits(a), bits(c));
        }
    }

    #[test]
    fn other_shapes_and_dtypes_are_left_to_the_broadcast() {
        let x = Tensor::zeros((2, 3), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert!(super::apply(&x, &Tensor::zeros(4, candle_core::DType::F32, &Device::Cpu).unwrap()).is_none());
        assert!(super::apply(
            &x,
            &Tensor::zeros((1, 3), candle_core::DType::F32, &Device::Cpu).unwrap()
        )
        .is_none());
        let x64 = Tensor::zeros((2, 3), candle_core::DType::F64, &Device::Cpu).unwrap();
        assert!(super::apply(&x64, &Tensor::zeros(3, candle_core::DType::F64, &Device::Cpu).unwrap()).is_none());
    }
}
