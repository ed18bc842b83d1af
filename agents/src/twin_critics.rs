//! Twin Q networks (Fujimoto et al. 2018's clipped double Q): the critics of SAC and TD3.

use rlgraph_components::value_function;
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, GraphFn, Param, Result};

use crate::agent_parts::AgentParts;

/// Two Q networks under one scope (so one optimizer steps both):
/// `q_values(states, actions)` -> `(q1, q2)`, each network reading the state and the action
/// side by side.
pub(crate) fn twin_critics<B: Backend>(spec: &[serde_json::Value], parts: &AgentParts<B>) -> Result<Component<B>> {
    let q = |name: &str| -> Result<Component<B>> { Ok(value_function::<B>(name, parts.value_layers(spec)?)) };
    Ok(Component::new("critics")
        .with_kind("twin-critics")
        .with_sub(q("q1")?)
        .with_sub(q("q2")?)
        .api(
            "q_values",
            vec![Param::new("states"), Param::new("actions")],
            |ctx, args| {
                let x = ctx.graph_fn1("state_and_action", &[args.get(0)?, args.get(1)?])?;
                let q1 = ctx.call("q1", "value_output", &[x])?[0];
                let q2 = ctx.call("q2", "value_output", &[x])?[0];
                Ok(vec![q1, q2])
            },
        )
        .graph_fn(
            GraphFn::tensors("state_and_action", |_, xs| {
                let flat = |t: &B::Tensor| {
                    let shape = B::shape(t);
                    B::reshape(t, &[shape[0], shape[1..].iter().product()])
                };
                Ok(vec![B::concat(&[flat(xs[0])?, flat(xs[1])?], 1)?])
            })
            .infer(|_, s| {
                let size = |s: &Space| s.shape().unwrap_or(&[]).iter().product::<usize>();
                Ok(vec![Space::from(FloatBox::new([size(&s[0]) + size(&s[1])]))
                    .with_ranks(s[0].ranks().unwrap_or_default())])
            }),
        ))
}
