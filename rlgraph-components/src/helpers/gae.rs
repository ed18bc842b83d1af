//! Generalized advantage estimation (Schulman et al. 2016) over flat batches of steps with
//! terminals and sequence boundaries.

use rlgraph_core::{Backend, Component, GraphFn, Param, Result};

use super::sequence::{bootstrap_next_values, reverse_discount};
use super::{check_lengths, host, host_flags, upload};

/// `delta_t = r_t + gamma * V(s_{t+1}) - V(s_t)`, with `V(s_{t+1})` from
/// [`bootstrap_next_values`] (0 after a terminal).
pub fn td_errors(
    values: &[f64],
    rewards: &[f64],
    terminals: &[bool],
    sequence_indices: &[bool],
    gamma: f64,
) -> Result<Vec<f64>> {
    check_lengths(
        "td_errors",
        &["baseline_values", "rewards"],
        &[values.len(), rewards.len()],
    )?;
    let next = bootstrap_next_values(values, terminals, sequence_indices)?;
    Ok((0..values.len())
        .map(|t| rewards[t] + gamma * next[t] - values[t])
        .collect())
}

/// `A_t = sum_l (gamma lambda)^l delta_{t+l}`, summed only to the end of `t`'s sequence
/// (a terminal ends a sequence too).
pub fn gae_values(
    values: &[f64],
    rewards: &[f64],
    terminals: &[bool],
    sequence_indices: &[bool],
    gamma: f64,
    lambda: f64,
) -> Result<Vec<f64>> {
    let deltas = td_errors(values, rewards, terminals, sequence_indices, gamma)?;
    let ends: Vec<bool> = terminals.iter().zip(sequence_indices).map(|(&d, &s)| d || s).collect();
    reverse_discount(&deltas, &ends, gamma * lambda)
}

/// A GAE component with `calc_td_errors` and `calc_gae_values`, each taking
/// `(baseline_values, rewards, terminals, sequence_indices)`.
pub fn gae<B: Backend>(name: &str, discount: f64, gae_lambda: f64) -> Component<B> {
    let params = || {
        ["baseline_values", "rewards", "terminals", "sequence_indices"]
            .into_iter()
            .map(Param::new)
            .collect::<Vec<_>>()
    };
    let run = move |lambda: Option<f64>| {
        move |ctx: &mut rlgraph_core::KernelCtx<'_, B>, xs: &[&B::Tensor]| {
            let (v, r) = (host::<B>(xs[0])?, host::<B>(xs[1])?);
            let (d, s) = (host_flags::<B>(xs[2])?, host_flags::<B>(xs[3])?);
            let out = match lambda {
                Some(l) => gae_values(&v, &r, &d, &s, discount, l)?,
                None => td_errors(&v, &r, &d, &s, discount)?,
            };
            Ok(vec![upload::<B>(&out, xs[0], ctx.device())?])
        }
    };
    Component::new(name)
        .api("calc_td_errors", params(), |ctx, args| {
            Ok(vec![ctx.graph_fn1("td_errors", &args.present())?])
        })
        .api("calc_gae_values", params(), |ctx, args| {
            Ok(vec![ctx.graph_fn1("gae_values", &args.present())?])
        })
        .graph_fn(GraphFn::tensors("td_errors", run(None)).infer_same())
        .graph_fn(GraphFn::tensors("gae_values", run(Some(gae_lambda))).infer_same())
}
