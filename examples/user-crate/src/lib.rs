//! A user's own crate on rlgraph's public API: an environment registered under an id of
//! theirs, a layer type of theirs and an algorithm of theirs, which configs, `rlgraph train`
//! and Rust code all use.

use rlgraph::prelude::*;

pub mod reinforce;

/// Registers CartPole under another id, as a user's own environment would be, `halve`, and
/// the `reinforce` algorithm.
pub fn register() {
    register_env("OwnPole-v0", |seed| {
        Ok(Box::new(rlgraph::envs::CartPole::new(seed)) as Box<dyn Env>)
    })
    .expect("a new environment id");
    register_component::<Candle, Halve>("halve", |_, _| Ok(halve::<Candle>())).expect("a new component type");
    // Once per backend the program builds agents on (candle here, the default).
    register_algorithm::<Candle, _>("reinforce", reinforce::reinforce).expect("a new algorithm");
}

/// The settings of `halve`: none.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Halve {}

/// `x / 2`, a layer of one's own.
pub fn halve<B: Backend>() -> Component<B> {
    Component::new("halve")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .graph_fn(GraphFn::tensors("apply", |_, xs| Ok(vec![B::affine(xs[0], 0.5, 0.0)?])).infer_same())
}
