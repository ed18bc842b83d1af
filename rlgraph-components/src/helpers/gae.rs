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
        .with_kind("gae")
        .api("calc_td_errors", params(), |ctx, args| {
            Ok(vec![ctx.graph_fn1("td_errors", &args.present())?])
        })
        .api("calc_gae_values", params(), |ctx, args| {
            Ok(vec![ctx.graph_fn1("gae_values", &args.present())?])
        })
        .graph_fn(GraphFn::tensors("td_errors", run(None)).infer_same())
        .graph_fn(GraphFn::tensors("gae_values", run(Some(gae_lambda))).infer_same())
}

/// GAE over time-major device tensors, as backend ops (nothing crosses to the host): the
/// advantages `[T, N]` of `T` steps of `N` environment copies.
///
/// `values` is `[T + 1, N]`: the value of each step's state, then of the state after the
/// last step. `terminated` and `truncated` (U8 `[T, N]`) end a copy's episode at a step; its
/// next row then belongs to the next episode. As in [`bootstrap_next_values`], a terminal
/// step bootstraps from 0 and a truncated one from its own value; the last step bootstraps
/// from `values[T]`.
pub fn gae_time_major<B: Backend>(
    values: &B::Tensor,
    rewards: &B::Tensor,
    terminated: &B::Tensor,
    truncated: &B::Tensor,
    gamma: f64,
    lambda: f64,
) -> Result<B::Tensor> {
    let shape = B::shape(rewards);
    let [steps, _copies] = shape[..] else {
        return Err(rlgraph_core::CoreError::Config {
            at: "gae_time_major".into(),
            reason: format!("rewards must be [T, N], got {shape:?}"),
        });
    };
    let rows = |t: &B::Tensor| B::shape(t).first().copied().unwrap_or(0);
    check_lengths("gae_time_major", &["rewards + 1", "values"], &[steps + 1, rows(values)])?;
    check_lengths(
        "gae_time_major",
        &["rewards", "terminated", "truncated"],
        &[steps, rows(terminated), rows(truncated)],
    )?;
    let row = |t: &B::Tensor, i: usize| -> Result<B::Tensor> { B::squeeze(&B::narrow(t, 0, i, 1)?, 0) };
    let zero = B::scalar(0.0, B::dtype(values), B::device(values))?;
    let mut advantages = Vec::with_capacity(steps);
    let mut next_advantage: Option<B::Tensor> = None;
    for t in (0..steps).rev() {
        let (value, done_terminal, cut) = (row(values, t)?, row(terminated, t)?, row(truncated, t)?);
        let next_value = B::where_cond(
            &done_terminal,
            &zero,
            &B::where_cond(&cut, &value, &row(values, t + 1)?)?,
        )?;
        let delta = B::sub(
            &B::add(&row(rewards, t)?, &B::affine(&next_value, gamma, 0.0)?)?,
            &value,
        )?;
        let advantage = match next_advantage {
            Some(next) => {
                let ended = B::maximum(&done_terminal, &cut)?;
                let carried = B::where_cond(&ended, &zero, &B::affine(&next, gamma * lambda, 0.0)?)?;
                B::add(&delta, &carried)?
            }
            None => delta,
        };
        advantages.push(B::unsqueeze(&advantage, 0)?);
        next_advantage = Some(advantage);
    }
    advantages.reverse();
    B::concat(&advantages, 0)
}
