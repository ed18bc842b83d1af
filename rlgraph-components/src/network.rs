//! `NeuralNetwork`, `Stack` and `BatchApply`: sub-components chained, and a sub-component
//! applied over a folded time rank.

use rlgraph_core::{Backend, Component, Param};

use crate::layers::{fold_time_rank, unfold_time_rank};

/// A stack named `name` (RLgraph's `Stack`): its API method `method(inputs)` runs each
/// sub-component's `method` on the previous one's first output, and returns every output of
/// the last one.
pub fn stack<B: Backend>(name: &str, subs: Vec<Component<B>>, method: &str) -> Component<B> {
    stack_with_inputs(name, subs, method, 1)
}

/// A [`stack`] whose method takes `num_inputs` inputs (`inputs`, then optional `inputs_1`,
/// ...), all given to the first member, as RLgraph's multi-input networks feed an LSTM its
/// initial state.
pub fn stack_with_inputs<B: Backend>(
    name: &str,
    subs: Vec<Component<B>>,
    method: &str,
    num_inputs: usize,
) -> Component<B> {
    let names: Vec<String> = subs.iter().map(|l| l.name().to_string()).collect();
    let m = method.to_string();
    let params = std::iter::once(Param::new("inputs"))
        .chain((1..num_inputs.max(1)).map(|i| Param::optional(format!("inputs_{i}"))))
        .collect();
    subs.into_iter()
        .fold(Component::new(name).with_kind("stack"), Component::with_sub)
        .api(method, params, move |ctx, args| {
            let mut outs = args.present();
            for (k, n) in names.iter().enumerate() {
                let inputs = if k == 0 { outs.clone() } else { outs[..1].to_vec() };
                outs = ctx.call(n, &m, &inputs)?;
            }
            Ok(outs)
        })
}

/// A network named `name` whose `call(inputs)` runs each layer's `call` on the previous output.
pub fn neural_network<B: Backend>(name: &str, layers: Vec<Component<B>>) -> Component<B> {
    stack(name, layers, "call").with_kind("neural-network")
}

/// RLgraph's `BatchApply`: `call(inputs)` folds the time rank of `[B, T, ...]` inputs into the
/// batch rank, runs `sub`'s `method` on the `[B * T, ...]` result, and unfolds every output
/// back to `[B, T, ...]`.
pub fn batch_apply<B: Backend>(name: &str, sub: Component<B>, method: &str) -> Component<B> {
    let (sub_name, m) = (sub.name().to_string(), method.to_string());
    Component::new(name)
        .with_kind("batch-apply")
        .with_sub(sub)
        .with_sub(fold_time_rank("folder"))
        .with_sub(unfold_time_rank("unfolder"))
        .api("call", vec![Param::new("inputs")], move |ctx, args| {
            let x = args.get(0)?;
            let folded = ctx.call("folder", "call", &[x])?[0];
            let outs = ctx.call(&sub_name, &m, &[folded])?;
            outs.into_iter()
                .map(|o| Ok(ctx.call("unfolder", "call", &[o, x])?[0]))
                .collect()
        })
}
