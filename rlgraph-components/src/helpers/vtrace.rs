//! V-trace (Espeholt et al. 2018, section 4.1): off-policy value targets `v_s` and
//! policy-gradient advantages from truncated importance weights, over time-major `[T, B]`
//! rollouts.

use rlgraph_core::{Backend, Component, GraphFn, Param, Result};

use super::{check_lengths, host, upload};

/// The V-trace outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct VTrace {
    /// `v_s`, time-major `[T * B]`.
    pub vs: Vec<f64>,
    /// `rho_s (r_s + gamma_s v_{s+1} - V(x_s))` with `rho_s = min(pg_rho_bar, pi/mu)`.
    pub pg_advantages: Vec<f64>,
}

/// V-trace over `t_len` steps of `batch` rollouts (time-major). `log_rhos = log pi - log mu`;
/// `discounts` are `gamma` times not-terminal; `bootstrap_value` is `V(x_T)` per rollout.
///
/// `v_s - V(x_s) = delta_s + gamma_s c_s (v_{s+1} - V(x_{s+1}))`, with
/// `delta_s = rho_s (r_s + gamma_s V(x_{s+1}) - V(x_s))`, `rho_s = min(rho_bar, pi/mu)` and
/// `c_s = min(c_bar, pi/mu)`.
#[allow(clippy::too_many_arguments)]
pub fn vtrace_from_importance_weights(
    t_len: usize,
    batch: usize,
    log_rhos: &[f64],
    discounts: &[f64],
    rewards: &[f64],
    values: &[f64],
    bootstrap_value: &[f64],
    rho_bar: f64,
    c_bar: f64,
    pg_rho_bar: f64,
) -> Result<VTrace> {
    let n = t_len * batch;
    check_lengths(
        "v_trace",
        &["log_rhos", "discounts", "rewards", "values", "T * B"],
        &[log_rhos.len(), discounts.len(), rewards.len(), values.len(), n],
    )?;
    check_lengths("v_trace", &["bootstrap_value", "B"], &[bootstrap_value.len(), batch])?;
    let at = |t: usize, b: usize| t * batch + b;
    let mut vs = vec![0.0; t_len * batch];
    let mut pg_advantages = vec![0.0; t_len * batch];
    for b in 0..batch {
        let mut acc = 0.0; // v_{s+1} - V(x_{s+1})
        for t in (0..t_len).rev() {
            let i = at(t, b);
            let rho = log_rhos[i].exp();
            let next_value = if t + 1 < t_len {
                values[at(t + 1, b)]
            } else {
                bootstrap_value[b]
            };
            let delta = rho.min(rho_bar) * (rewards[i] + discounts[i] * next_value - values[i]);
            acc = delta + discounts[i] * rho.min(c_bar) * acc;
            vs[i] = values[i] + acc;
        }
        for t in 0..t_len {
            let i = at(t, b);
            let next_vs = if t + 1 < t_len {
                vs[at(t + 1, b)]
            } else {
                bootstrap_value[b]
            };
            let rho = log_rhos[i].exp().min(pg_rho_bar);
            pg_advantages[i] = rho * (rewards[i] + discounts[i] * next_vs - values[i]);
        }
    }
    Ok(VTrace { vs, pg_advantages })
}

/// A V-trace component: `get_v_trace_values(log_rhos, discounts, rewards, values,
/// bootstrap_value) -> (vs, pg_advantages)`, inputs time-major `[T, B]` (bootstrap `[B]`).
pub fn v_trace<B: Backend>(name: &str, rho_bar: f64, c_bar: f64, pg_rho_bar: f64) -> Component<B> {
    let params = ["log_rhos", "discounts", "rewards", "values", "bootstrap_value"]
        .into_iter()
        .map(Param::new)
        .collect();
    Component::new(name)
        .with_kind("v-trace")
        .api("get_v_trace_values", params, |ctx, args| {
            ctx.graph_fn("v_trace", &args.present())
        })
        .graph_fn(
            GraphFn::tensors("v_trace", move |ctx, xs| {
                let shape = B::shape(xs[3]);
                let (t_len, batch) = (shape.first().copied().unwrap_or(0), shape.get(1).copied().unwrap_or(1));
                let get = |i: usize| host::<B>(xs[i]);
                let out = vtrace_from_importance_weights(
                    t_len,
                    batch,
                    &get(0)?,
                    &get(1)?,
                    &get(2)?,
                    &get(3)?,
                    &get(4)?,
                    rho_bar,
                    c_bar,
                    pg_rho_bar,
                )?;
                Ok(vec![
                    upload::<B>(&out.vs, xs[3], ctx.device())?,
                    upload::<B>(&out.pg_advantages, xs[3], ctx.device())?,
                ])
            })
            .outputs(2)
            .infer(|_, spaces| Ok(vec![spaces[3].clone(), spaces[3].clone()])),
        )
}
