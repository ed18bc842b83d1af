//! The PPO clipped-surrogate loss (Schulman et al. 2017), with optional value-function
//! clipping and standardized advantages.

use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, Component, DType, Device, GraphFn, Param};

use super::{loss_component, weighted_total};
use crate::distributions::scalar;
use crate::helpers::host;

/// The settings of a PPO loss (RLgraph's names).
#[derive(Clone, Debug, PartialEq)]
pub struct PpoLossSpec {
    /// Epsilon: the ratio is clipped to `[1 - clip_ratio, 1 + clip_ratio]`.
    pub clip_ratio: f64,
    /// Clip the new value within this distance of the old one (`None`: no clipping).
    pub value_function_clipping: Option<f64>,
    /// Standardize the advantages over the batch (mean 0, std 1).
    pub standardize_advantages: bool,
    /// Weight of the value-function term.
    pub weight_vf: f64,
    /// Weight of the entropy bonus (subtracted).
    pub weight_entropy: f64,
}

impl Default for PpoLossSpec {
    fn default() -> Self {
        PpoLossSpec {
            clip_ratio: 0.2,
            value_function_clipping: None,
            standardize_advantages: false,
            weight_vf: 0.5,
            weight_entropy: 0.01,
        }
    }
}

/// A PPO loss. Parameters (all `[B]`): `log_probs`, `prev_log_probs`, `state_values`,
/// `prev_state_values`, `advantages`, `entropy`; then the scalars `clip_ratio` and
/// `weight_entropy`, which default to the spec's and let a caller feed schedules. Value
/// targets are `advantages + prev_state_values` (before standardizing).
///
/// `loss_per_item = -min(r A, clip(r, 1-e, 1+e) A) + w_vf 0.5 max((V - T)^2, (V_clip - T)^2)
/// - w_ent H`, with `r = exp(log_probs - prev_log_probs)`.
pub fn ppo_loss<B: Backend>(name: &str, spec: PpoLossSpec) -> Component<B> {
    let params = [
        "log_probs",
        "prev_log_probs",
        "state_values",
        "prev_state_values",
        "advantages",
        "entropy",
    ]
    .into_iter()
    .map(Param::new)
    .chain([
        Param::with_default("clip_ratio", Value::f32(spec.clip_ratio as f32)),
        Param::with_default("weight_entropy", Value::f32(spec.weight_entropy as f32)),
    ])
    .collect();
    loss_component(
        "ppo-loss",
        name,
        params,
        GraphFn::tensors("per_item", move |_, xs| {
            let (log_probs, prev_log_probs, values, prev_values, advantages, entropy) = (
                xs[0],
                &B::detach(xs[1]),
                xs[2],
                &B::detach(xs[3]),
                &B::detach(xs[4]),
                xs[5],
            );
            let targets = B::add(advantages, prev_values)?;
            let adv = if spec.standardize_advantages {
                let mean = B::mean_all(advantages)?;
                let centered = B::sub(advantages, &mean)?;
                let std = B::sqrt(&B::mean_all(&B::square(&centered)?)?)?;
                B::div(&centered, &B::add(&std, &scalar::<B>(&std, 1e-8)?)?)?
            } else {
                advantages.clone()
            };
            let ratio = B::exp(&B::sub(log_probs, prev_log_probs)?)?;
            let knobs = Knobs::<B>::read(&xs[6..], &spec, B::device(log_probs))?;
            let clipped = knobs.clip(&ratio)?;
            let pg = B::neg(&B::minimum(&B::mul(&ratio, &adv)?, &B::mul(&clipped, &adv)?)?)?;
            let err = B::square(&B::sub(values, &targets)?)?;
            let vf = match spec.value_function_clipping {
                Some(c) => {
                    let v_clipped = B::add(prev_values, &B::clamp(&B::sub(values, prev_values)?, -c, c)?)?;
                    B::maximum(&err, &B::square(&B::sub(&v_clipped, &targets)?)?)?
                }
                None => err,
            };
            let total = match &knobs {
                Knobs::OnHost { weight_entropy, .. } => {
                    weighted_total::<B>((&pg, 1.0), (&vf, 0.5 * spec.weight_vf), (entropy, *weight_entropy))?
                }
                Knobs::OnDevice { weight_entropy, .. } => {
                    let total = B::add(&B::affine(&pg, 1.0, 0.0)?, &B::affine(&vf, 0.5 * spec.weight_vf, 0.0)?)?;
                    B::sub(&total, &B::mul(entropy, weight_entropy)?)?
                }
            };
            Ok(vec![total])
        }),
    )
}

/// The clip ratio and the entropy weight a call was given (or the spec's). On the CPU they are
/// read as numbers, as they always were; on a GPU they stay 0-d tensors on the device, so a
/// minibatch step waits for no download (and a recorded update replays them as they change).
enum Knobs<B: Backend> {
    OnHost {
        clip_ratio: f64,
        weight_entropy: f64,
    },
    OnDevice {
        clip_ratio: B::Tensor,
        weight_entropy: B::Tensor,
    },
}

impl<B: Backend> Knobs<B> {
    fn read(given: &[&B::Tensor], spec: &PpoLossSpec, device: Device) -> rlgraph_core::Result<Self> {
        if device != Device::Cpu {
            let knob = |i: usize, default: f64| -> rlgraph_core::Result<B::Tensor> {
                // The first element, as the host path reads it.
                let count: usize = given.get(i).map_or(0, |t| B::shape(t).iter().product());
                match given.get(i).filter(|_| count > 0) {
                    Some(t) => B::cast(
                        &B::reshape(&B::narrow(&B::reshape(t, &[count])?, 0, 0, 1)?, &[])?,
                        DType::F32,
                    ),
                    None => B::scalar(default, DType::F32, device),
                }
            };
            return Ok(Knobs::OnDevice {
                clip_ratio: knob(0, spec.clip_ratio)?,
                weight_entropy: knob(1, spec.weight_entropy)?,
            });
        }
        let number = |i: usize, default: f64| -> rlgraph_core::Result<f64> {
            match given.get(i) {
                Some(t) => Ok(host::<B>(t)?.first().copied().unwrap_or(default)),
                None => Ok(default),
            }
        };
        Ok(Knobs::OnHost {
            clip_ratio: number(0, spec.clip_ratio)?,
            weight_entropy: number(1, spec.weight_entropy)?,
        })
    }

    /// `ratio` clamped into `[1 - clip_ratio, 1 + clip_ratio]`.
    fn clip(&self, ratio: &B::Tensor) -> rlgraph_core::Result<B::Tensor> {
        match self {
            Knobs::OnHost { clip_ratio, .. } => B::clamp(ratio, 1.0 - clip_ratio, 1.0 + clip_ratio),
            Knobs::OnDevice { clip_ratio, .. } => {
                let (low, high) = (B::affine(clip_ratio, -1.0, 1.0)?, B::affine(clip_ratio, 1.0, 1.0)?);
                B::minimum(&B::maximum(ratio, &low)?, &high)
            }
        }
    }
}
