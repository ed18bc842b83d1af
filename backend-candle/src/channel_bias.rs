//! A convolution's bias added per channel to NCHW or NHWC f32 maps on the CPU, and its
//! gradient summed per channel, each in one pass.
//!
//! Why: as for the dense layer's bias (see `linear.rs`), candle adds a `[1, C, 1, 1]` bias by
//! broadcasting it, and sums the broadcast's gradient through its general reduction, with
//! index arithmetic for every element. `perf` put that reduction at a tenth of a MinAtar DQN
//! update (16 maps of 8x8 at batch 32), beside the broadcast add's own share.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape, Tensor};

use crate::cpu_slices::contiguous_f32;

/// Where a map's channel is: NCHW's dimension 1, or NHWC's last.
#[derive(Clone, Copy)]
enum Channels {
    First,
    Last,
}

impl Channels {
    /// The channel count and the run of elements that share a channel, for maps of `shape`.
    fn of(self, shape: &Shape) -> Result<(usize, usize)> {
        let (_, a, b, c) = shape.dims4()?;
        Ok(match self {
            Channels::First => (a, b * c),
            Channels::Last => (c, 1),
        })
    }
}

/// `y + b` for maps `y` of shape `[n, c, h, w]` (or `[n, h, w, c]`) and a bias `b` of shape `[c]`.
struct ChannelBias(Channels);

impl CustomOp2 for ChannelBias {
    fn name(&self) -> &'static str {
        "channel-bias"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        let (y, b) = (
            contiguous_f32(s1, l1, "channel-bias")?,
            contiguous_f32(s2, l2, "channel-bias")?,
        );
        let (c, run) = self.0.of(l1.shape())?;
        if b.len() != c {
            return Err(candle_core::Error::Msg(format!(
                "channel-bias: a bias of {} values for {c} channels",
                b.len()
            )));
        }
        let mut out = Vec::with_capacity(y.len());
        match self.0 {
            Channels::First => {
                for (i, map) in y.chunks_exact(run.max(1)).enumerate() {
                    let bias = b[i % c.max(1)];
                    out.extend(map.iter().map(|v| v + bias));
                }
            }
            Channels::Last => {
                for pixel in y.chunks_exact(c.max(1)) {
                    out.extend(pixel.iter().zip(b).map(|(v, bias)| v + bias));
                }
            }
        }
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    fn bwd(&self, y: &Tensor, b: &Tensor, _out: &Tensor, grad: &Tensor) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let grad_y = y.track_op().then(|| grad.clone());
        let grad_b = match b.track_op() {
            true => Some(grad.contiguous()?.apply_op1(ChannelSum(self.0))?),
            false => None,
        };
        Ok((grad_y, crate::grad_sink::divert(b, grad_b)?))
    }
}

/// The sum of each channel of `[n, c, h, w]` (or `[n, h, w, c]`) maps, over the batch and
/// the map in order: shape `[c]`.
struct ChannelSum(Channels);

impl CustomOp1 for ChannelSum {
    fn name(&self) -> &'static str {
        "channel-sum"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let g = contiguous_f32(s, l, "channel-sum")?;
        let (c, run) = self.0.of(l.shape())?;
        let mut sums = vec![0f32; c];
        match self.0 {
            Channels::First => {
                for (i, map) in g.chunks_exact(run.max(1)).enumerate() {
                    sums[i % c.max(1)] += map.iter().sum::<f32>();
                }
            }
            Channels::Last => {
                for pixel in g.chunks_exact(c.max(1)) {
                    sums.iter_mut().zip(pixel).for_each(|(s, v)| *s += v);
                }
            }
        }
        Ok((CpuStorage::F32(sums), Shape::from(c)))
    }
}

/// `y + b` per channel through [`ChannelBias`] for contiguous f32 CPU maps (NCHW, or NHWC
/// where `last`) and a bias of one value per channel; `None` for anything else (the caller
/// broadcasts).
pub(crate) fn apply(y: &Tensor, b: &Tensor, last: bool) -> Option<Result<Tensor>> {
    let f32_cpu = |t: &Tensor| t.device().is_cpu() && t.dtype() == candle_core::DType::F32;
    let channel = if last { 3 } else { 1 };
    let fits = y.rank() == 4 && b.dims() == [y.dims()[channel]] && y.is_contiguous() && b.is_contiguous();
    if !(f32_cpu(y) && f32_cpu(b) && fits) {
        return None;
    }
    let channels = if last { Channels::Last } else { Channels::First };
    Some(y.apply_op2(b, ChannelBias(channels)))
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};

    use crate::test_values::values;

    #[test]
    fn values_and_gradients_equal_a_broadcast_add() {
        let dev = Device::Cpu;
        let y = Var::from_vec(values(2 * 3 * 4 * 5, 1), (2, 3, 4, 5), &dev).unwrap();
        let b = Var::from_vec(values(3, 2), 3, &dev).unwrap();
        let weights = Tensor::from_vec(values(2 * 3 * 4 * 5, 3), (2, 3, 4, 5), &dev).unwrap();
        let fused = super::apply(y.as_tensor(), b.as_tensor(), false).unwrap().unwrap();
        let plain = y.broadcast_add(&b.reshape((1, 3, 1, 1)).unwrap()).unwrap();
        let (f, p): (Vec<f32>, Vec<f32>) = (
            fused.flatten_all().unwrap().to_vec1().unwrap(),
            plain.flatten_all().unwrap().to_vec1().unwrap(),
        );
        // One addition per element either way: equal to the bit.
        assert_eq!(f, p);
        let grads = |out: &Tensor| {
            let g = (out * &weights).unwrap().sum_all().unwrap().backward().unwrap();
            let gy: Vec<f32> = g.get(&y).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            let gb: Vec<f32> = g.get(&b).unwrap().to_vec1().unwrap();
            (gy, gb)
        };
        let ((fy, fb), (py, pb)) = (grads(&fused), grads(&plain));
        assert_eq!(fy, py);
        // Channel k's gradient is the sum of the weights over its maps, added by hand here.
        let w: Vec<f32> = weights.flatten_all().unwrap().to_vec1().unwrap();
        for k in 0..3 {
            let by_hand: f32 = (0..2)
                .flat_map(|n| w[(n * 3 + k) * 20..(n * 3 + k + 1) * 20].to_vec())
                .sum();
            assert!(
                (fb[k] - by_hand).abs() <= 1e-5 * by_hand.abs().max(1.0),
                "{fb:?} vs {by_hand}"
            );
            assert!(
                (fb[k] - pb[k]).abs() <= 1e-5 * pb[k].abs().max(1.0),
                "{fb:?} vs candle's {pb:?}"
            );
        }
    }

    #[test]
    fn other_shapes_and_types_fall_back() {
        let dev = Device::Cpu;
        let y = Tensor::zeros((2, 3, 4, 5), candle_core::DType::F32, &dev).unwrap();
        assert!(super::apply(&y, &Tensor::zeros(4, candle_core::DType::F32, &dev).unwrap(), false).is_none());
        // Three channels last would need a bias of five.
        assert!(super::apply(&y, &Tensor::zeros(3, candle_core::DType::F32, &dev).unwrap(), true).is_none());
        assert!(super::apply(&y, &Tensor::zeros(3, candle_core::DType::F64, &dev).unwrap(), false).is_none());
        let flat = Tensor::zeros((2, 3), candle_core::DType::F32, &dev).unwrap();
        assert!(super::apply(&flat, &Tensor::zeros(3, candle_core::DType::F32, &dev).unwrap(), false).is_none());
    }

    #[test]
    fn channels_last_take_the_bias_of_their_last_index_and_sum_it_back() {
        let dev = Device::Cpu;
        // [n, h, w, c] = [2, 2, 3, 4]: element e's channel is e mod 4.
        let y = Var::from_vec(values(48, 1), (2, 2, 3, 4), &dev).unwrap();
        let b = Var::from_vec(vec![1f32, 10.0, 100.0, 1000.0], 4, &dev).unwrap();
        let fused = super::apply(y.as_tensor(), b.as_tensor(), true).unwrap().unwrap();
        let (f, yv): (Vec<f32>, Vec<f32>) = (
            fused.flatten_all().unwrap().to_vec1().unwrap(),
            y.flatten_all().unwrap().to_vec1().unwrap(),
        );
        let bias = [1f32, 10.0, 100.0, 1000.0];
        for e in 0..48 {
            assert_eq!(f[e], yv[e] + bias[e % 4], "element {e}");
        }
        // With weights 1 everywhere but channel 2's, which weigh 3: the bias gradient is the
        // count of elements per channel (12), times their weight.
        let w: Vec<f32> = (0..48).map(|e| if e % 4 == 2 { 3.0 } else { 1.0 }).collect();
        let weights = Tensor::from_vec(w, (2, 2, 3, 4), &dev).unwrap();
        let g = (fused * &weights).unwrap().sum_all().unwrap().backward().unwrap();
        let gb: Vec<f32> = g.get(&b).unwrap().to_vec1().unwrap();
        assert_eq!(gb, vec![12.0, 12.0, 36.0, 12.0]);
    }
}
