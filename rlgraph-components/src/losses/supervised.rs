//! Supervised losses: categorical cross-entropy from logits, and Euclidean distance.

use rlgraph_core::{Backend, Component, GraphFn, Param, Tree};

use crate::distributions::Kind as DistributionKind;

use super::{loss_component, mean_per_item};

fn params() -> Vec<Param> {
    vec![Param::new("parameters"), Param::new("labels")]
}

/// Cross-entropy of integer `labels` `[B, ...]` under the softmax of `parameters` (logits
/// `[B, ..., C]`): `-log softmax(logits)[label]`, averaged over any dims between batch and
/// classes.
pub fn cross_entropy_loss<B: Backend>(name: &str) -> Component<B> {
    loss_component(
        "cross-entropy-loss",
        name,
        params(),
        GraphFn::tensors("per_item", |_, xs: &[&B::Tensor]| {
            // The negative log-likelihood of the labels under a Categorical over the logits.
            let log_p = DistributionKind::Categorical.log_prob::<B>(&Tree::Leaf(xs[0].clone()), xs[1])?;
            Ok(vec![mean_per_item::<B>(&B::neg(&log_p)?)?])
        }),
    )
}

/// The Euclidean distance between `parameters` and `labels` per item:
/// `sqrt(sum over non-batch dims (p - l)^2)`.
pub fn euclidean_distance_loss<B: Backend>(name: &str) -> Component<B> {
    loss_component(
        "euclidean-distance-loss",
        name,
        params(),
        GraphFn::tensors("per_item", |_, xs| {
            let sq = B::square(&B::sub(xs[0], xs[1])?)?;
            let rank = B::shape(&sq).len();
            let summed = if rank > 1 {
                B::sum(&sq, &(1..rank).collect::<Vec<_>>(), false)?
            } else {
                sq
            };
            Ok(vec![B::sqrt(&summed)?])
        }),
    )
}
