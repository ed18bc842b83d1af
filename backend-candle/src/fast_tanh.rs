//! tanh for f32 on the CPU as a rational polynomial, as Eigen computes it.
//!
//! Why: profiling DQN and PPO on CartPole (`rlgraph train --profile`, then `perf`) put a
//! third of the whole run in glibc's scalar `tanhf`/`expm1f`, which candle's CPU `tanh`
//! calls per element. The polynomial is within 5e-7 of tanh, absolute and relative (a few
//! ulps), and the compiler vectorises it. Other dtypes and devices keep candle's own `tanh`.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor};

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
#[inline]
pub fn tanh(x: f32) -> f32 {
    let x = x.clamp(-CLAMP, CLAMP);
    // Near 0, tanh(x) = x to f32 precision; the polynomial would lose the last bits.
    if x.abs() < 4e-4 {
        return x;
    }
    let x2 = x * x;
    let p = ALPHA.iter().rev().fold(0.0, |acc, a| acc * x2 + a) * x;
    let q = BETA.iter().rev().fold(0.0, |acc, b| acc * x2 + b);
    p / q
}

/// The op: forward on contiguous f32 CPU storage, backward as `(1 - y²) · grad`.
pub struct FastTanh;

impl CustomOp1 for FastTanh {
    fn name(&self) -> &'static str {
        "fast-tanh"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        match (storage, layout.contiguous_offsets()) {
            (CpuStorage::F32(v), Some((start, end))) => Ok((
                CpuStorage::F32(v[start..end].iter().map(|&x| tanh(x)).collect()),
                layout.shape().clone(),
            )),
            _ => Err(candle_core::Error::Msg("fast-tanh takes contiguous f32 tensors".into())),
        }
    }

    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(res.sqr()?.affine(-1.0, 1.0)?.mul(grad_res)?))
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
}
