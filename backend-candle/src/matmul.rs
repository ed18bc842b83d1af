//! Matrix products on the CPU through [`crate::gemm_call`], forward and backward, with the
//! same `gemm` calls candle makes (so the same numbers to the bit) but the thread count of
//! `rlgraph_core::threads` instead of an environment variable read on every call.

use candle_core::{CpuStorage, CustomOp2, Layout, Result, Shape, Tensor};

use crate::gemm_call::{num_like::One, product, Strided};

/// `[.., m, k] x [.., k, n] -> [.., m, n]`, the leading dimensions equal.
pub(crate) struct MatMul;

/// The leading dimensions' element offsets of a layout of rank `rank >= 2`, in row-major order
/// of those dimensions.
fn batch_offsets(l: &Layout) -> Vec<usize> {
    let (dims, stride) = (l.dims(), l.stride());
    let lead = dims.len() - 2;
    let mut offsets = vec![l.start_offset()];
    for d in 0..lead {
        offsets = offsets
            .iter()
            .flat_map(|&o| (0..dims[d]).map(move |i| o + i * stride[d]))
            .collect();
    }
    offsets
}

fn bad(what: String) -> candle_core::Error {
    candle_core::Error::Msg(format!("matmul: {what}"))
}

fn products<T: Copy + 'static + One>(lhs: &[T], l1: &Layout, rhs: &[T], l2: &Layout) -> Result<(Vec<T>, Shape)> {
    let (d1, d2) = (l1.dims(), l2.dims());
    let r = d1.len();
    if r < 2 || d2.len() != r || d1[..r - 2] != d2[..r - 2] || d1[r - 1] != d2[r - 2] {
        return Err(bad(format!("shapes {d1:?} and {d2:?} do not multiply")));
    }
    let (m, k, n) = (d1[r - 2], d1[r - 1], d2[r - 1]);
    let (s1, s2) = (l1.stride(), l2.stride());
    let (a_off, b_off) = (batch_offsets(l1), batch_offsets(l2));
    let mut out = vec![T::zero(); a_off.len() * m * n];
    for (i, (&a, &b)) in a_off.iter().zip(&b_off).enumerate() {
        let ok = product(
            (m, n, k),
            &mut out,
            Strided::rows(i * m * n, n),
            false,
            lhs,
            Strided {
                offset: a,
                rs: s1[r - 2],
                cs: s1[r - 1],
            },
            rhs,
            Strided {
                offset: b,
                rs: s2[r - 2],
                cs: s2[r - 1],
            },
        );
        if !ok {
            return Err(bad("an operand lies outside its storage".into()));
        }
    }
    let mut shape = d1[..r - 1].to_vec();
    shape.push(n);
    Ok((out, Shape::from(shape)))
}

impl CustomOp2 for MatMul {
    fn name(&self) -> &'static str {
        "matmul"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        match (s1, s2) {
            (CpuStorage::F32(a), CpuStorage::F32(b)) => products(a, l1, b, l2).map(|(v, s)| (CpuStorage::F32(v), s)),
            (CpuStorage::F64(a), CpuStorage::F64(b)) => products(a, l1, b, l2).map(|(v, s)| (CpuStorage::F64(v), s)),
            _ => Err(bad("takes two f32 or two f64 tensors".into())),
        }
    }

    /// As candle's backward: `grad . rhs^T` and `lhs^T . grad`, each only where it is needed.
    fn bwd(
        &self,
        lhs: &Tensor,
        rhs: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        product_grads(lhs, rhs, grad)
    }
}

/// The gradients of `lhs . rhs` from the result's `grad`, as candle computes them:
/// `grad . rhs^T` and `lhs^T . grad`, each only where its operand is tracked.
pub(crate) fn product_grads(lhs: &Tensor, rhs: &Tensor, grad: &Tensor) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let grad_lhs = match lhs.track_op() {
        true => Some(grad.apply_op2(&rhs.t()?, MatMul)?),
        false => None,
    };
    let grad_rhs = match rhs.track_op() {
        true => Some(lhs.t()?.apply_op2(grad, MatMul)?),
        false => None,
    };
    Ok((grad_lhs, grad_rhs))
}

/// `a . b` through [`MatMul`] for f32 or f64 CPU tensors; `None` for anything else (the
/// caller uses candle's own matmul).
pub(crate) fn apply(a: &Tensor, b: &Tensor) -> Option<Result<Tensor>> {
    let cpu_float =
        |t: &Tensor| t.device().is_cpu() && matches!(t.dtype(), candle_core::DType::F32 | candle_core::DType::F64);
    if !(cpu_float(a) && cpu_float(b) && a.dtype() == b.dtype() && a.rank() >= 2 && a.rank() == b.rank()) {
        return None;
    }
    Some(a.apply_op2(b, MatMul))
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};

    use crate::test_values::{bits, values};

    #[test]
    fn products_and_gradients_equal_candles_to_the_bit() {
        let cpu = &Device::Cpu;
        // Plain, a transposed operand, a batch of three, and a dense layer's shapes (its
        // weight gradient tall, so computed as its transpose, and packed panels of 16 rows).
        for (da, db, transpose_b) in [
            (vec![5, 7], vec![7, 3], false),
            (vec![32, 300], vec![300, 40], false),
            (vec![5, 7], vec![3, 7], true),
            (vec![3, 4, 6], vec![3, 6, 2], false),
        ] {
            let a =
                Var::from_tensor(&Tensor::from_vec(values(da.iter().product(), 1), da.clone(), cpu).unwrap()).unwrap();
            let b =
                Var::from_tensor(&Tensor::from_vec(values(db.iter().product(), 2), db.clone(), cpu).unwrap()).unwrap();
            let b_used = if transpose_b {
                b.t().unwrap()
            } else {
                b.as_tensor().clone()
            };
            let ours = super::apply(&a, &b_used).expect("floats on the CPU").unwrap();
            let theirs = a.matmul(&b_used).unwrap();
            assert_eq!(ours.dims(), theirs.dims());
            assert_eq!(bits(&ours), bits(&theirs), "{da:?} x {db:?}");
            let weights = Tensor::from_vec(values(ours.elem_count(), 3), ours.dims(), cpu).unwrap();
            let grads = |y: &Tensor| (y * &weights).unwrap().sum_all().unwrap().backward().unwrap();
            let (g_ours, g_theirs) = (grads(&ours), grads(&theirs));
            for v in [&a, &b] {
                assert_eq!(
                    bits(g_ours.get(v).unwrap()),
                    bits(g_theirs.get(v).unwrap()),
                    "{da:?} x {db:?}"
                );
            }
        }
    }

    #[test]
    fn mismatched_shapes_are_an_error_not_a_panic() {
        let a = Tensor::zeros((2, 3), candle_core::DType::F32, &Device::Cpu).unwrap();
        let b = Tensor::zeros((4, 2), candle_core::DType::F32, &Device::Cpu).unwrap();
        let err = super::apply(&a, &b).unwrap().unwrap_err().to_string();
        assert!(err.contains("[2, 3]") && err.contains("[4, 2]"), "{err}");
    }
}
