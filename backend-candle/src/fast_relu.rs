//! ReLU for f32 on the CPU with a backward pass of one loop.
//!
//! Why: candle's ReLU backward builds `grad * (x >= 0)` from three tensors (a comparison, a
//! cast of its bytes to floats, a product), each a pass and an allocation; `perf` put those
//! maps at about a tenth of a MinAtar DQN update. Here the gradient is `grad` where the input
//! is at least 0 (candle's rule, which passes it at 0) and 0 elsewhere, in one pass. Values
//! and gradients are candle's to the bit.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape, Tensor};

use crate::cpu_slices::contiguous_f32;

/// `max(x, 0)`.
struct FastRelu;

impl CustomOp1 for FastRelu {
    fn name(&self) -> &'static str {
        "fast-relu"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(s, l, "fast-relu")?;
        Ok((
            CpuStorage::F32(x.iter().map(|&v| v.max(0.0)).collect()),
            l.shape().clone(),
        ))
    }

    fn bwd(&self, x: &Tensor, _y: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(x.apply_op2_no_bwd(&grad.contiguous()?, &ReluGrad)?))
    }
}

/// `grad` where `x >= 0`, else 0: ReLU's backward from its input in one pass.
struct ReluGrad;

impl CustomOp2 for ReluGrad {
    fn name(&self) -> &'static str {
        "fast-relu-grad"
    }

    fn cpu_fwd(&self, x: &CpuStorage, xl: &Layout, g: &CpuStorage, gl: &Layout) -> Result<(CpuStorage, Shape)> {
        let (x, g) = (
            contiguous_f32(x, xl, "fast-relu-grad")?,
            contiguous_f32(g, gl, "fast-relu-grad")?,
        );
        if x.len() != g.len() {
            return Err(candle_core::Error::Msg(
                "fast-relu-grad takes two contiguous f32 tensors of one size".into(),
            ));
        }
        let out = x.iter().zip(g).map(|(&x, &g)| if x >= 0.0 { g } else { 0.0 }).collect();
        Ok((CpuStorage::F32(out), xl.shape().clone()))
    }
}

/// ReLU of `t`: the one-pass backward for f32 on the CPU, candle's own otherwise.
pub fn apply(t: &Tensor) -> Result<Tensor> {
    if t.dtype() == candle_core::DType::F32 && t.device().is_cpu() {
        t.contiguous()?.apply_op1(FastRelu)
    } else {
        t.relu()
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};

    use crate::test_values::values;

    #[test]
    fn values_and_gradients_equal_candles_relu() {
        let dev = Device::Cpu;
        // Exact zeros among the inputs, where candle's rule (`x >= 0`) passes the gradient.
        let mut xs = values(64, 7);
        xs[3] = 0.0;
        xs[10] = -0.0;
        let x = Var::from_vec(xs.clone(), (8, 8), &dev).unwrap();
        let weights = Tensor::from_vec(values(64, 9), (8, 8), &dev).unwrap();
        let run = |y: Tensor| {
            let out: Vec<f32> = y.flatten_all().unwrap().to_vec1().unwrap();
            let g = (y * &weights).unwrap().sum_all().unwrap().backward().unwrap();
            let gx: Vec<f32> = g.get(&x).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            (out, gx)
        };
        let (fast, plain) = (run(super::apply(x.as_tensor()).unwrap()), run(x.relu().unwrap()));
        assert_eq!(fast, plain);
        // By hand: the weight where the input is at least 0, 0 elsewhere.
        let w: Vec<f32> = weights.flatten_all().unwrap().to_vec1().unwrap();
        let by_hand: Vec<f32> = xs
            .iter()
            .zip(&w)
            .map(|(&x, &w)| if x >= 0.0 { w } else { 0.0 })
            .collect();
        assert!(by_hand[3] != 0.0 && by_hand[10] != 0.0);
        assert_eq!(fast.1, by_hand);
    }
}
