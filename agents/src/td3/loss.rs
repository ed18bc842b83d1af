//! TD3's two losses (Fujimoto et al. 2018), as CleanRL's `td3_continuous_action` and SB3
//! compute them.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, GraphFn, Param};

/// TD3's losses in one component `name`:
///
/// - `critic_loss(rewards, terminals, q1, q2, qt1_next, qt2_next)` (all `[B]`):
///   `mean((q1 - y)^2) + mean((q2 - y)^2)` with `y = r + discount (1 - d) min(qt1', qt2')`,
///   a constant (no gradient flows into the targets);
/// - `actor_loss(q1)`: `-mean(q1)`, the first critic at the policy's own actions.
pub fn td3_loss<B: Backend>(name: &str, discount: f64) -> Component<B> {
    let scalar = || Space::from(FloatBox::new(Vec::<usize>::new()));
    let params = ["rewards", "terminals", "q1", "q2", "qt1_next", "qt2_next"].map(Param::new);
    Component::new(name)
        .with_kind("td3-loss")
        .api("critic_loss", params.to_vec(), |ctx, args| {
            ctx.graph_fn("critic", &args.present())
        })
        .api("actor_loss", vec![Param::new("q1")], |ctx, args| {
            ctx.graph_fn("actor", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("critic", move |_, xs| {
                let (rewards, terminals, q1, q2) = (xs[0], xs[1], xs[2], xs[3]);
                let alive = B::affine(&B::cast(terminals, B::dtype(q1))?, -1.0, 1.0)?;
                let next = B::mul(&alive, &B::minimum(xs[4], xs[5])?)?;
                let y = B::detach(&B::add(
                    &B::cast(rewards, B::dtype(q1))?,
                    &B::affine(&next, discount, 0.0)?,
                )?);
                let mse = |q: &B::Tensor| B::mean_all(&B::square(&B::sub(q, &y)?)?);
                Ok(vec![B::add(&mse(q1)?, &mse(q2)?)?])
            })
            .infer(move |_, _| Ok(vec![scalar()])),
        )
        .graph_fn(
            GraphFn::tensors("actor", |_, xs| Ok(vec![B::neg(&B::mean_all(xs[0])?)?]))
                .infer(move |_, _| Ok(vec![scalar()])),
        )
}
