//! `NeuralNetwork`: layers applied in order, built from an RLgraph layer-spec list.

use rlgraph_core::{Backend, Component, Param};

/// A network named `name` whose `call(inputs)` runs each layer's `call` on the previous output.
pub fn neural_network<B: Backend>(name: &str, layers: Vec<Component<B>>) -> Component<B> {
    let names: Vec<String> = layers.iter().map(|l| l.name().to_string()).collect();
    layers.into_iter().fold(Component::new(name), Component::with_sub).api(
        "call",
        vec![Param::new("inputs")],
        move |ctx, args| {
            let mut x = args.get(0)?;
            for n in &names {
                x = ctx.call(n, "call", &[x])?[0];
            }
            Ok(vec![x])
        },
    )
}
