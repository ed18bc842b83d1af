//! A component wrapped with a loss and an optimizer, so that one call runs one update. This
//! is how `rlgraph call` (and a test) drives an optimizer step on any component, the way
//! RLgraph's optimizer tests do.

use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, Component, CoreError, Param, Result};

/// The harness `name` over `component`: every API method of `component` under its own name,
/// plus `step(<method's inputs>, <loss's inputs after the first>, time_percentage = 0)`. The
/// step feeds `method`'s first output to `loss`'s `loss` method as its first input, steps
/// `optimizer` on `component`'s variables, and returns the loss before the update.
pub fn training_harness<B: Backend>(
    name: &str,
    component: Component<B>,
    method: &str,
    loss: Component<B>,
    optimizer: Component<B>,
) -> Result<Component<B>> {
    let bad = |reason: String| CoreError::Config {
        at: "learn".into(),
        reason,
    };
    let comp = component.name().to_string();
    let (loss_name, opt_name) = (loss.name().to_string(), optimizer.name().to_string());
    if comp == loss_name || comp == opt_name || loss_name == opt_name {
        return Err(bad(format!(
            "the component, loss and optimizer need different scopes, got {comp:?}, {loss_name:?} and {opt_name:?}"
        )));
    }
    let methods: Vec<(String, Vec<Param>)> = component
        .api_methods()
        .iter()
        .map(|m| (m.name.clone(), m.params.clone()))
        .collect();
    let learn = methods
        .iter()
        .find(|(n, _)| n == method)
        .map(|(_, p)| p.clone())
        .ok_or_else(|| {
            let names: Vec<&str> = methods.iter().map(|(n, _)| n.as_str()).collect();
            bad(format!(
                "{comp} has no API method {method:?}; it has {}",
                names.join(", ")
            ))
        })?;
    if methods.iter().any(|(n, _)| n == "step") {
        return Err(bad(format!("{comp} has its own \"step\" method; the harness adds one")));
    }
    let loss_params = loss
        .api_methods()
        .iter()
        .find(|m| m.name == "loss")
        .map(|m| m.params.clone())
        .ok_or_else(|| bad(format!("{loss_name} is not a loss: it has no \"loss\" method")))?;
    let extra: Vec<Param> = loss_params.into_iter().skip(1).collect();
    if let Some(p) = extra.iter().find(|p| learn.iter().any(|q| q.name == p.name)) {
        return Err(bad(format!(
            "{method} and the loss both take a parameter {:?}; rename one",
            p.name
        )));
    }
    let (n_learn, n_extra) = (learn.len(), extra.len());
    let mut step_params = learn;
    step_params.extend(extra);
    step_params.push(Param::with_default("time_percentage", Value::f32(0.0)));
    let mut harness = Component::new(name)
        .with_kind("training-harness")
        .with_sub(component)
        .with_sub(loss)
        .with_sub(optimizer);
    for (m, params) in methods {
        let (c, forwarded) = (comp.clone(), m.clone());
        harness = harness.api(&m, params, move |ctx, args| ctx.call(&c, &forwarded, &args.present()));
    }
    let method = method.to_string();
    Ok(harness.api("step", step_params, move |ctx, args| {
        let inputs = (0..n_learn).map(|i| args.get(i)).collect::<Result<Vec<_>>>()?;
        let out = ctx.call(&comp, &method, &inputs)?;
        let first = *out.first().ok_or_else(|| CoreError::Component {
            component: comp.clone(),
            method: Some(method.clone()),
            reason: "returns nothing to put a loss on".into(),
        })?;
        let mut loss_in = vec![first];
        for i in n_learn..n_learn + n_extra {
            loss_in.push(args.get(i)?);
        }
        let loss = ctx.call(&loss_name, "loss", &loss_in)?;
        let vars = ctx.call(&comp, "variables", &[])?;
        ctx.call(&opt_name, "step", &[vars[0], loss[0], args.get(n_learn + n_extra)?])
    }))
}
