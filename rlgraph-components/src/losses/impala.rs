//! The IMPALA loss (Espeholt et al. 2018): V-trace targets and advantages for the value
//! function and the policy gradient, over time-major rollouts.

use rlgraph_core::{Backend, Component, GraphFn, Param};

use super::{advantage_terms, bad_input, loss_component, weighted_total};
use crate::helpers::{host, upload, vtrace_from_importance_weights};

/// The settings of an IMPALA loss.
#[derive(Clone, Debug, PartialEq)]
pub struct ImpalaLossSpec {
    /// Gamma.
    pub discount: f64,
    /// Truncation of the importance weights in the value targets (rho-bar).
    pub rho_bar: f64,
    /// Truncation of the trace coefficients (c-bar).
    pub c_bar: f64,
    /// Truncation of the importance weights in the policy-gradient advantages.
    pub pg_rho_bar: f64,
    /// Weight of the policy-gradient term.
    pub weight_pg: f64,
    /// Weight of the value-function term.
    pub weight_vf: f64,
    /// Weight of the entropy bonus (subtracted).
    pub weight_entropy: f64,
    /// How rewards are squashed before V-trace (RLgraph's default: clamp to [-1, 1]).
    pub reward_clipping: RewardClipping,
}

/// RLgraph's IMPALA `reward_clipping`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RewardClipping {
    /// Rewards as they come (RLgraph's `None`).
    Off,
    /// Clamped into `[-1, 1]` (`"clamp_one"`, RLgraph's default).
    #[default]
    ClampOne,
    /// `5 tanh(r / 5)`, times 0.3 for negative rewards (`"soft_asymmetric"`).
    SoftAsymmetric,
}

impl RewardClipping {
    /// Parses RLgraph's `reward_clipping` value (absent: the default; `null`, `"clamp_one"` or
    /// `"soft_asymmetric"`), found at `at` for the error.
    pub fn parse(value: Option<&serde_json::Value>, at: &str) -> rlgraph_core::Result<Self> {
        match value.map(|v| (v, v.as_str())) {
            None => Ok(RewardClipping::default()),
            Some((serde_json::Value::Null, _)) => Ok(RewardClipping::Off),
            Some((_, Some("clamp_one"))) => Ok(RewardClipping::ClampOne),
            Some((_, Some("soft_asymmetric"))) => Ok(RewardClipping::SoftAsymmetric),
            Some((v, _)) => Err(rlgraph_core::CoreError::Config {
                at: at.into(),
                reason: format!("expected null, \"clamp_one\" (RLgraph's default) or \"soft_asymmetric\", got {v}"),
            }),
        }
    }

    /// The clipped reward.
    pub fn apply(self, r: f64) -> f64 {
        match self {
            RewardClipping::Off => r,
            RewardClipping::ClampOne => r.clamp(-1.0, 1.0),
            RewardClipping::SoftAsymmetric => {
                let squeezed = (r / 5.0).tanh();
                5.0 * if r < 0.0 { 0.3 * squeezed } else { squeezed }
            }
        }
    }
}

impl Default for ImpalaLossSpec {
    fn default() -> Self {
        ImpalaLossSpec {
            discount: 0.99,
            rho_bar: 1.0,
            c_bar: 1.0,
            pg_rho_bar: 1.0,
            weight_pg: 1.0,
            weight_vf: 0.5,
            weight_entropy: 0.01,
            reward_clipping: RewardClipping::default(),
        }
    }
}

/// An IMPALA loss. Parameters, time-major `[T, B]`: `log_probs` (learner policy),
/// `behaviour_log_probs` (actor policy), `entropy`, `values`, `rewards`, `terminals`; and
/// `bootstrap_value` `[B]`. `loss_per_item` is the sum over time for each rollout:
/// `sum_t -w_pg log pi(a_t) pg_adv_t + w_vf 0.5 (v_t - V(x_t))^2 - w_ent H_t`.
pub fn impala_loss<B: Backend>(name: &str, spec: ImpalaLossSpec) -> Component<B> {
    let params = [
        "log_probs",
        "behaviour_log_probs",
        "entropy",
        "values",
        "rewards",
        "terminals",
        "bootstrap_value",
    ]
    .into_iter()
    .map(Param::new)
    .collect();
    loss_component(
        "impala-loss",
        name,
        params,
        GraphFn::tensors("per_item", move |ctx, xs| {
            let (log_probs, entropy, values) = (xs[0], xs[2], xs[3]);
            let shape = B::shape(values);
            if shape.len() != 2 {
                return Err(bad_input(
                    ctx.component(),
                    format!("values must be time-major [T, B], got shape {shape:?}"),
                ));
            }
            let (t_len, batch) = (shape[0], shape[1]);
            let lp = host::<B>(log_probs)?;
            let log_rhos: Vec<f64> = lp.iter().zip(host::<B>(xs[1])?).map(|(p, m)| p - m).collect();
            let discounts: Vec<f64> = host::<B>(xs[5])?
                .iter()
                .map(|&d| if d != 0.0 { 0.0 } else { spec.discount })
                .collect();
            let out = vtrace_from_importance_weights(
                t_len,
                batch,
                &log_rhos,
                &discounts,
                &host::<B>(xs[4])?
                    .into_iter()
                    .map(|r| spec.reward_clipping.apply(r))
                    .collect::<Vec<_>>(),
                &host::<B>(values)?,
                &host::<B>(xs[6])?,
                spec.rho_bar,
                spec.c_bar,
                spec.pg_rho_bar,
            )?;
            let vs = upload::<B>(&out.vs, values, ctx.device())?;
            let adv = upload::<B>(&out.pg_advantages, values, ctx.device())?;
            let (pg, vf) = advantage_terms::<B>(log_probs, &adv, values, &vs)?;
            let step = weighted_total::<B>(
                (&pg, spec.weight_pg),
                (&vf, spec.weight_vf),
                (entropy, spec.weight_entropy),
            )?;
            Ok(vec![B::sum(&step, &[0], false)?])
        }),
    )
}
