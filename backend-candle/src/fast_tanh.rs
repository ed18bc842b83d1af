//! tanh for f32 on the CPU as a rational polynomial, as Eigen computes it.
//!
//! Why: profiling DQN and PPO on CartPole (`rlgraph train --profile`, then `perf`) put a
//! third of the whole run in glibc's scalar `tanhf`/`expm1f`, which candle's CPU `tanh`
//! calls per element. The polynomial is within 5e-7 of tanh, absolute and relative (a few
//! ulps), and the compiler vectorises it. Other dtypes and devices keep candle's own `tanh`.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape, Tensor};

use crate::cpu_slices::contiguous_f32;
use crate::wide_lanes::with_wide_lanes;

/// Beyond this, tanh rounds to ±1 in f32.
const CLAMP: f32 = 7.905_311;
const ALPHA: [f32; 7] = [
    4.893_524_6e-3,
    6.372_619_3e-4,
    1.485_722_4e-5,
    5.122_297e-8,
    -8.604_672e-11,
    2.000_188e-13,
    -2.760_768_5e-16,
];
const BETA: [f32; 4] = [4.893_525e-3, 2.268_434_6e-3, 1.185_347_1e-4, 1.198_258_4e-6];

/// tanh(x) to within 5e-7, absolute and relative.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let x = x.clamp(-CLAMP, CLAMP);
    let x2 = x * x;
    let p = ALPHA.iter().rev().fold(0.0, |acc, a| acc * x2 + a) * x;
    let q = BETA.iter().rev().fold(0.0, |acc, b| acc * x2 + b);
    // Near 0, tanh(x) = x to f32 precision; the polynomial would lose the last bits. A select,
    // not an early return, so the loop over a tensor stays vectorised.
    if x.abs() < 4e-4 {
        x
    } else {
        p / q
    }
}

/// tanh of every element (in sixteen lanes where the CPU has AVX-512, eight with AVX2: the
/// divisions and the polynomial were what a PPO update's tanh waited on, a fifth of its time).
fn tanh_all(v: &[f32]) -> Vec<f32> {
    // A loop into the vector's spare room, not `collect`: `collect`'s body is not inlined
    // into the wide-lane function and would run in four lanes; nor a zeroed vector, whose zeroing
    // was 3% of a PPO update.
    let mut out = Vec::with_capacity(v.len());
    with_wide_lanes(|| {
        for (y, &x) in out.spare_capacity_mut().iter_mut().zip(v) {
            y.write(tanh(x));
        }
    });
    // SAFETY: the loop wrote all `v.len()` elements (the spare room holds at least that many).
    unsafe { out.set_len(v.len()) };
    out
}

/// tanh of every element, in place (as wide as [`tanh_all`]): a dense layer's product becomes
/// its activation without a second buffer.
pub(crate) fn tanh_in_place(v: &mut [f32]) {
    with_wide_lanes(|| {
        for x in v.iter_mut() {
            *x = tanh(*x);
        }
    });
}

/// tanh's gradient from its output: `(1 - y²) · g`, in one pass (as wide as [`tanh_all`]).
fn tanh_grad_all(y: &[f32], g: &[f32]) -> Vec<f32> {
    let n = y.len().min(g.len());
    let mut out = Vec::with_capacity(n);
    with_wide_lanes(|| {
        for ((d, &y), &g) in out.spare_capacity_mut().iter_mut().zip(y).zip(g) {
            d.write((1.0 - y * y) * g);
        }
    });
    // SAFETY: the loop wrote the first `n` elements (the spare room holds at least that many).
    unsafe { out.set_len(n) };
    out
}

/// The op: forward on contiguous f32 CPU storage, backward as `(1 - y²) · grad`.
pub struct FastTanh;

impl CustomOp1 for FastTanh {
    fn name(&self) -> &'static str {
        "fast-tanh"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let v = contiguous_f32(storage, layout, "fast-tanh")?;
        Ok((CpuStorage::F32(tanh_all(v)), layout.shape().clone()))
    }

    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        // Untracked: candle detaches every gradient it hands back (unless
        // CANDLE_GRAD_DO_NOT_DETACH is set), so no second derivative runs through here anyway.
        if grad_res.dtype() == candle_core::DType::F32 && grad_res.device().is_cpu() {
            return Ok(Some(grad_from_output(res, grad_res)?));
        }
        Ok(Some(res.sqr()?.affine(-1.0, 1.0)?.mul(grad_res)?))
    }
}

/// The gradient through tanh, `(1 - y²) · grad`, from tanh's f32 CPU output `y` in one pass
/// ([`TanhGrad`]).
pub(crate) fn grad_from_output(y: &Tensor, grad: &Tensor) -> Result<Tensor> {
    y.apply_op2_no_bwd(&grad.contiguous()?, &TanhGrad)
}

/// tanh's backward as one pass, where candle would allocate three tensors for it.
struct TanhGrad;

impl CustomOp2 for TanhGrad {
    fn name(&self) -> &'static str {
        "fast-tanh-grad"
    }

    fn cpu_fwd(&self, y: &CpuStorage, yl: &Layout, g: &CpuStorage, gl: &Layout) -> Result<(CpuStorage, Shape)> {
        let (y, g) = (
            contiguous_f32(y, yl, "fast-tanh-grad")?,
            contiguous_f32(g, gl, "fast-tanh-grad")?,
        );
        if y.len() != g.len() {
            return Err(candle_core::Error::Msg(
                "fast-tanh-grad takes two contiguous f32 tensors of one size".into(),
            ));
        }
        Ok((CpuStorage::F32(tanh_grad_all(y, g)), yl.shape().clone()))
    }
}

/// tanh of `t`: the polynomial for f32 on the CPU, candle's own otherwise.
pub fn apply(t: &Tensor) -> Result<Tensor> {
    if t.dtype() == candle_core::DType::F32 && t.device().is_cpu() {
        t.contiguous()?.apply_op1(FastTanh)
    } else {
        t.tanh()
    }
}

#[cfg(test)]
mod tests {
    use super::tanh;

    #[test]
    fn the_polynomial_is_within_5e7_of_tanh_everywhere() {
        // A dense grid over where tanh is not yet ±1 in f32, and beyond.
        let grid = || (-120_000..=120_000).map(|i| f64::from((i as f64 * 1e-4) as f32));
        let worst = grid()
            .map(|x| (f64::from(tanh(x as f32)) - x.tanh()).abs())
            .fold(0.0, f64::max);
        assert!(worst < 5e-7, "absolute {worst}");
        // Relative to tanh itself, including near 0 where tanh is small.
        let rel = grid()
            .filter(|x| *x != 0.0)
            .map(|x| ((f64::from(tanh(x as f32)) - x.tanh()) / x.tanh()).abs())
            .fold(0.0, f64::max);
        assert!(rel < 5e-7, "relative {rel}");
        assert_eq!(tanh(0.0), 0.0);
        assert_eq!(tanh(1e-5), 1e-5);
        assert_eq!(tanh(f32::INFINITY), tanh(CLAMP_TEST));
        assert!(tanh(f32::NAN).is_nan());
    }

    const CLAMP_TEST: f32 = super::CLAMP;

    #[test]
    fn the_tensor_pass_equals_the_scalar_function_bit_for_bit() {
        // Lengths that leave loop tails, values on both sides of the near-0 cut and the clamp.
        for n in [1, 7, 8, 9, 15, 16, 17, 31, 1000] {
            let v: Vec<f32> = (0..n)
                .map(|i| ((i as f32) * 0.377 - 9.0) * if i % 3 == 0 { 1e-4 } else { 1.0 })
                .collect();
            let all = super::tanh_all(&v);
            let mut in_place = v.clone();
            super::tanh_in_place(&mut in_place);
            for ((x, y), z) in v.iter().zip(&all).zip(&in_place) {
                assert_eq!(y.to_bits(), tanh(*x).to_bits(), "tanh({x})");
                assert_eq!(z.to_bits(), tanh(*x).to_bits(), "tanh({x}) in place");
            }
        }
    }

    #[test]
    fn the_gradient_pass_is_one_minus_the_square_times_the_incoming_bit_for_bit() {
        // Lengths that leave tails of every wide-lane width.
        for n in [1, 7, 15, 16, 17, 33, 1000] {
            let y: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.0137 - 0.99).clamp(-1.0, 1.0)).collect();
            let g: Vec<f32> = (0..n).map(|i| (i as f32) * 0.5 - 3.0).collect();
            let all = super::tanh_grad_all(&y, &g);
            assert_eq!(all.len(), n);
            for ((d, y), g) in all.iter().zip(&y).zip(&g) {
                assert_eq!(d.to_bits(), ((1.0 - y * y) * g).to_bits(), "at y={y}, g={g}");
            }
        }
    }

    #[test]
    fn the_gradient_is_one_minus_the_square_times_the_incoming() {
        use candle_core::{Device, Tensor, Var};
        // d/dx sum(w · tanh(x)) = w · (1 - tanh(x)²), against f64 by hand.
        let xs = [-2.0_f32, -0.5, 0.0, 0.25, 3.0];
        let ws = [1.0_f32, -2.0, 0.5, 4.0, 1.5];
        let x = Var::new(&xs[..], &Device::Cpu).unwrap();
        let w = Tensor::new(&ws[..], &Device::Cpu).unwrap();
        let y = super::apply(x.as_tensor()).unwrap();
        let grads = y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        let got = grads.get(x.as_tensor()).unwrap().to_vec1::<f32>().unwrap();
        for ((g, x), w) in got.iter().zip(xs).zip(ws) {
            let expected = f64::from(w) * (1.0 - f64::from(x).tanh().powi(2));
            assert!(
                (f64::from(*g) - expected).abs() < 1e-6,
                "at {x}: {g} against {expected}"
            );
        }
    }
}
