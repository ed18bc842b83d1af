//! One number per batch item from per-action-dimension results: a multi-dimensional
//! action's log-likelihood (or entropy) is the sum over its independent dimensions.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, GraphFn};

/// A graph function `name` that sums every dimension after the batch dimension.
pub(crate) fn sum_action_dims<B: Backend>(name: &str) -> GraphFn<B> {
    GraphFn::tensors(name, |_, xs| {
        let rank = B::shape(xs[0]).len();
        Ok(vec![if rank > 1 {
            B::sum(xs[0], &(1..rank).collect::<Vec<_>>(), false)?
        } else {
            xs[0].clone()
        }])
    })
    .infer(|_, s| {
        Ok(vec![
            Space::from(FloatBox::new(Vec::<usize>::new())).with_ranks(s[0].ranks().unwrap_or_default())
        ])
    })
}
