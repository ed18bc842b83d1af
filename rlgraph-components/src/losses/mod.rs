//! Loss functions. Each is a component with RLgraph's three API methods:
//! `loss(...) -> (loss, loss_per_item)`, `loss_per_item(...)` and
//! `loss_average(loss_per_item)`; `loss` is the mean of `loss_per_item` over the batch.

mod actor_critic;
mod dqn;
mod from_spec;
mod impala;
mod ppo;
mod sac;
mod supervised;

pub use actor_critic::{actor_critic_loss, ActorCriticLossSpec};
pub use dqn::{dqn_loss, ContainerLoss, DqnLossSpec};
pub use from_spec::{loss_from_spec, LOSS_TYPES};
pub use impala::{impala_loss, ImpalaLossSpec, RewardClipping};
pub use ppo::{ppo_loss, PpoLossSpec};
pub use sac::{sac_loss, SacLossSpec};
pub use supervised::{cross_entropy_loss, euclidean_distance_loss};

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Param, Result};

/// A batch of scalar floats: the space of `loss_per_item`.
pub(crate) fn per_item_space() -> Space {
    Space::from(FloatBox::new(Vec::<usize>::new())).with_batch_rank(true)
}

/// A loss component of kind `kind` named `name` from its per-item graph function (named `per_item`, with
/// one input per parameter that is present) and the parameters of `loss`/`loss_per_item`.
pub(crate) fn loss_component<B: Backend>(
    kind: &str,
    name: &str,
    params: Vec<Param>,
    per_item: GraphFn<B>,
) -> Component<B> {
    let per_item = per_item.infer(|_, _| Ok(vec![per_item_space()]));
    Component::new(name)
        .with_kind(kind)
        .api("loss_per_item", params.clone(), |ctx, args| {
            Ok(vec![ctx.graph_fn1("per_item", &args.present())?])
        })
        .api("loss_average", vec![Param::new("loss_per_item")], |ctx, args| {
            Ok(vec![ctx.graph_fn1("average", &[args.get(0)?])?])
        })
        .api("loss", params, |ctx, args| {
            let per = ctx.graph_fn1("per_item", &args.present())?;
            let avg = ctx.graph_fn1("average", &[per])?;
            Ok(vec![avg, per])
        })
        .graph_fn(per_item)
        .graph_fn(
            GraphFn::tensors("average", |_, xs| Ok(vec![B::mean_all(xs[0])?]))
                .infer(|_, _| Ok(vec![Space::from(FloatBox::new(Vec::<usize>::new()))])),
        )
}

/// `w_pg pg + w_vf vf - w_ent entropy`: the weighted sum the policy-gradient losses end with.
pub(crate) fn weighted_total<B: Backend>(
    (pg, w_pg): (&B::Tensor, f64),
    (vf, w_vf): (&B::Tensor, f64),
    (entropy, w_ent): (&B::Tensor, f64),
) -> Result<B::Tensor> {
    let total = B::add(&B::affine(pg, w_pg, 0.0)?, &B::affine(vf, w_vf, 0.0)?)?;
    B::sub(&total, &B::affine(entropy, w_ent, 0.0)?)
}

/// The advantage actor-critic terms `(-log_prob A, 0.5 (V - target)^2)`; advantages and
/// targets are constants.
pub(crate) fn advantage_terms<B: Backend>(
    log_probs: &B::Tensor,
    advantages: &B::Tensor,
    values: &B::Tensor,
    targets: &B::Tensor,
) -> Result<(B::Tensor, B::Tensor)> {
    let pg = B::neg(&B::mul(log_probs, advantages)?)?;
    let vf = B::affine(&B::square(&B::sub(values, targets)?)?, 0.5, 0.0)?;
    Ok((pg, vf))
}

/// `t` (shape `[B]`) reshaped to broadcast against a tensor of `rank` dims: `[B, 1, ...]`.
pub(crate) fn per_batch<B: Backend>(t: &B::Tensor, rank: usize) -> Result<B::Tensor> {
    let mut shape = B::shape(t);
    shape.resize(rank.max(shape.len()), 1);
    B::reshape(t, &shape)
}

/// The mean over every dimension but the first: `[B, ...] -> [B]`.
pub(crate) fn mean_per_item<B: Backend>(t: &B::Tensor) -> Result<B::Tensor> {
    let rank = B::shape(t).len();
    if rank <= 1 {
        return Ok(t.clone());
    }
    B::mean(t, &(1..rank).collect::<Vec<_>>(), false)
}

/// `1 - terminals` as floats like `like`.
pub(crate) fn not_terminal<B: Backend>(terminals: &B::Tensor, like: &B::Tensor) -> Result<B::Tensor> {
    B::affine(&B::cast(terminals, B::dtype(like))?, -1.0, 1.0)
}

/// The error for inputs a loss cannot use.
pub(crate) fn bad_input(component: &str, reason: String) -> CoreError {
    CoreError::Component {
        component: component.into(),
        method: Some("loss_per_item".into()),
        reason,
    }
}
