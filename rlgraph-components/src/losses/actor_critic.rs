//! The advantage actor-critic loss (Mnih et al. 2016) with GAE advantages.

use rlgraph_core::{Backend, Component, GraphFn, Param};

use super::{advantage_terms, loss_component, weighted_total};
use crate::helpers::{gae_values, host, host_flags, upload};

/// The settings of an actor-critic loss (RLgraph's names).
#[derive(Clone, Debug, PartialEq)]
pub struct ActorCriticLossSpec {
    /// Gamma.
    pub discount: f64,
    /// GAE's lambda (1.0: Monte-Carlo returns minus the baseline).
    pub gae_lambda: f64,
    /// Weight of the policy-gradient term.
    pub weight_pg: f64,
    /// Weight of the value-function term.
    pub weight_vf: f64,
    /// Weight of the entropy bonus (subtracted).
    pub weight_entropy: f64,
}

impl Default for ActorCriticLossSpec {
    fn default() -> Self {
        ActorCriticLossSpec {
            discount: 0.99,
            gae_lambda: 1.0,
            weight_pg: 1.0,
            weight_vf: 0.5,
            weight_entropy: 0.01,
        }
    }
}

/// An actor-critic loss over a flat batch of steps. Parameters: `log_probs`,
/// `baseline_values`, `rewards`, `terminals`, `sequence_indices`, `entropy` (all `[B]`).
///
/// `loss_per_item = -w_pg log_prob A + w_vf 0.5 (V - (A + V_old))^2 - w_ent H`, with `A` the
/// GAE advantage computed from the (detached) baseline values.
pub fn actor_critic_loss<B: Backend>(name: &str, spec: ActorCriticLossSpec) -> Component<B> {
    let params = [
        "log_probs",
        "baseline_values",
        "rewards",
        "terminals",
        "sequence_indices",
        "entropy",
    ]
    .into_iter()
    .map(Param::new)
    .collect();
    loss_component(
        "actor-critic-loss",
        name,
        params,
        GraphFn::tensors("per_item", move |ctx, xs| {
            let (log_probs, values, entropy) = (xs[0], xs[1], xs[5]);
            let v = host::<B>(values)?;
            let adv = gae_values(
                &v,
                &host::<B>(xs[2])?,
                &host_flags::<B>(xs[3])?,
                &host_flags::<B>(xs[4])?,
                spec.discount,
                spec.gae_lambda,
            )?;
            let targets: Vec<f64> = adv.iter().zip(&v).map(|(a, v)| a + v).collect();
            let adv = upload::<B>(&adv, values, ctx.device())?;
            let targets = upload::<B>(&targets, values, ctx.device())?;
            let (pg, vf) = advantage_terms::<B>(log_probs, &adv, values, &targets)?;
            Ok(vec![weighted_total::<B>(
                (&pg, spec.weight_pg),
                (&vf, spec.weight_vf),
                (entropy, spec.weight_entropy),
            )?])
        }),
    )
}
