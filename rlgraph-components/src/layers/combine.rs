//! Layers that combine tensors: concatenation along the last axis, and residual connections.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Param};

use crate::activation::Activation;

/// `call(input-0, .., input-{n-1})`: the inputs concatenated along their last dimension.
pub fn concat<B: Backend>(name: &str, num_inputs: usize) -> Component<B> {
    let params: Vec<Param> = (0..num_inputs).map(|i| Param::new(format!("input-{i}"))).collect();
    Component::new(name)
        .with_kind("concat")
        .api("call", params, |ctx, args| ctx.graph_fn("concat", &args.present()))
        .graph_fn(
            GraphFn::tensors("concat", |_, xs| {
                let last = B::shape(xs[0]).len().saturating_sub(1);
                let owned: Vec<B::Tensor> = xs.iter().map(|t| (*t).clone()).collect();
                Ok(vec![B::concat(&owned, last)?])
            })
            .infer(|ctx, s| {
                let mut shape = s[0].shape().unwrap_or(&[]).to_vec();
                let lead = &shape[..shape.len().saturating_sub(1)].to_vec();
                let mut total = 0;
                for sp in s {
                    let sh = sp.shape().unwrap_or(&[]);
                    if sh.len() != shape.len() || sh[..sh.len().saturating_sub(1)] != lead[..] {
                        return Err(CoreError::Component {
                            component: ctx.component().into(),
                            method: Some("concat".into()),
                            reason: format!(
                                "inputs must agree on all but the last dimension: {:?} vs {sh:?}",
                                s[0].shape().unwrap_or(&[])
                            ),
                        });
                    }
                    total += sh.last().copied().unwrap_or(1);
                }
                if let Some(l) = shape.last_mut() {
                    *l = total;
                }
                Ok(vec![
                    Space::from(FloatBox::new(shape)).with_ranks(s[0].ranks().unwrap_or_default())
                ])
            }),
        )
}

/// `call(inputs)`: `inputs + unit(inputs)`, for a sub-component `unit` whose `call` keeps the shape.
pub fn residual<B: Backend>(name: &str, unit: Component<B>) -> Component<B> {
    residual_activated(name, unit, Activation::Linear)
}

/// `call(inputs)`: `activation(inputs + unit(inputs))`, RLgraph's `ResidualLayer` (whose
/// `unit` is its residual unit repeated `repeats` times).
pub fn residual_activated<B: Backend>(name: &str, unit: Component<B>, activation: Activation) -> Component<B> {
    let unit_name = unit.name().to_string();
    Component::new(name)
        .with_kind("residual")
        .with_sub(unit)
        .api("call", vec![Param::new("inputs")], move |ctx, args| {
            let x = args.get(0)?;
            let fx = ctx.call(&unit_name, "call", &[x])?;
            ctx.graph_fn("add", &[x, fx[0]])
        })
        .graph_fn(
            GraphFn::tensors("add", move |_, xs| {
                Ok(vec![activation.apply::<B>(&B::add(xs[0], xs[1])?)?])
            })
            .infer_same(),
        )
}
