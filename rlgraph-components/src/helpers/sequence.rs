//! `SequenceHelper`: sequences in a flat batch of steps, marked by `sequence_indices` (1 at
//! the last step of each sequence: an episode end or a cut).

use rlgraph_core::spaces::{FloatBox, IntBox, Space};
use rlgraph_core::{Backend, Component, DType, GraphFn, HostTensor, Param, Result};

use super::{check_lengths, host, host_flags, upload};

/// The length of each sequence; a trailing unfinished sequence counts too.
/// `[0,0,0,0] -> [4]`, `[0,0,1,0] -> [3,1]`, `[1,1,1,1] -> [1,1,1,1]`.
pub fn sequence_lengths(sequence_indices: &[bool]) -> Vec<usize> {
    let mut lengths = vec![];
    let mut run = 0;
    for &end in sequence_indices {
        run += 1;
        if end {
            lengths.push(run);
            run = 0;
        }
    }
    if run > 0 {
        lengths.push(run);
    }
    lengths
}

/// `decay^k` for the step `k` places into its sequence (0 at each sequence start).
pub fn sequence_decays(sequence_indices: &[bool], decay: f64) -> Vec<f64> {
    let mut k = 0;
    sequence_indices
        .iter()
        .map(|&end| {
            let d = decay.powi(k);
            k = if end { 0 } else { k + 1 };
            d
        })
        .collect()
}

/// `out[t] = values[t] + decay * out[t+1]`, restarting after every sequence end.
pub fn reverse_discount(values: &[f64], sequence_indices: &[bool], decay: f64) -> Result<Vec<f64>> {
    check_lengths(
        "reverse_discount",
        &["values", "sequence_indices"],
        &[values.len(), sequence_indices.len()],
    )?;
    let mut out = vec![0.0; values.len()];
    let mut acc = 0.0;
    for t in (0..values.len()).rev() {
        if sequence_indices[t] {
            acc = 0.0;
        }
        acc = values[t] + decay * acc;
        out[t] = acc;
    }
    Ok(out)
}

/// The value of each step's next state: 0 after a terminal, the next step's value inside a
/// sequence, and at a cut (a sequence end that is not terminal) the step's own value, the
/// best estimate available without the next state.
pub fn bootstrap_next_values(values: &[f64], terminals: &[bool], sequence_indices: &[bool]) -> Result<Vec<f64>> {
    check_lengths(
        "bootstrap_values",
        &["values", "terminals", "sequence_indices"],
        &[values.len(), terminals.len(), sequence_indices.len()],
    )?;
    Ok((0..values.len())
        .map(|t| {
            if terminals[t] {
                0.0
            } else if sequence_indices[t] || t + 1 == values.len() {
                values[t]
            } else {
                values[t + 1]
            }
        })
        .collect())
}

/// A `SequenceHelper` component: `calc_sequence_lengths(sequence_indices)`,
/// `calc_sequence_decays(sequence_indices)`, `reverse_apply_decays_to_sequence(values,
/// sequence_indices)` and `bootstrap_values(values, terminals, sequence_indices)`, with
/// `decay` fixed at construction.
pub fn sequence_helper<B: Backend>(name: &str, decay: f64) -> Component<B> {
    let floats = || Space::from(FloatBox::new(Vec::<usize>::new())).with_batch_rank(true);
    let ints = || Space::from(IntBox::unbounded()).with_batch_rank(true);
    Component::new(name)
        .with_kind("sequence-helper")
        .api(
            "calc_sequence_lengths",
            vec![Param::new("sequence_indices")],
            |ctx, args| Ok(vec![ctx.graph_fn1("lengths", &[args.get(0)?])?]),
        )
        .api(
            "calc_sequence_decays",
            vec![Param::new("sequence_indices")],
            |ctx, args| Ok(vec![ctx.graph_fn1("decays", &[args.get(0)?])?]),
        )
        .api(
            "reverse_apply_decays_to_sequence",
            vec![Param::new("values"), Param::new("sequence_indices")],
            |ctx, args| Ok(vec![ctx.graph_fn1("reverse_discount", &[args.get(0)?, args.get(1)?])?]),
        )
        .api(
            "bootstrap_values",
            vec![
                Param::new("values"),
                Param::new("terminals"),
                Param::new("sequence_indices"),
            ],
            |ctx, args| {
                Ok(vec![
                    ctx.graph_fn1("bootstrap", &[args.get(0)?, args.get(1)?, args.get(2)?])?
                ])
            },
        )
        .graph_fn(
            GraphFn::tensors("lengths", |ctx, xs| {
                let lengths = sequence_lengths(&host_flags::<B>(xs[0])?);
                let data: Vec<i64> = lengths.iter().map(|&n| n as i64).collect();
                Ok(vec![B::from_host(&HostTensor::i64([data.len()], data)?, ctx.device())?])
            })
            .infer(move |_, _| Ok(vec![ints()])),
        )
        .graph_fn(
            GraphFn::tensors("decays", move |ctx, xs| {
                let d = sequence_decays(&host_flags::<B>(xs[0])?, decay);
                let like = B::cast(xs[0], DType::F32)?;
                Ok(vec![upload::<B>(&d, &like, ctx.device())?])
            })
            .infer(move |_, _| Ok(vec![floats()])),
        )
        .graph_fn(
            GraphFn::tensors("reverse_discount", move |ctx, xs| {
                let out = reverse_discount(&host::<B>(xs[0])?, &host_flags::<B>(xs[1])?, decay)?;
                Ok(vec![upload::<B>(&out, xs[0], ctx.device())?])
            })
            .infer_same(),
        )
        .graph_fn(
            GraphFn::tensors("bootstrap", |ctx, xs| {
                let out =
                    bootstrap_next_values(&host::<B>(xs[0])?, &host_flags::<B>(xs[1])?, &host_flags::<B>(xs[2])?)?;
                Ok(vec![upload::<B>(&out, xs[0], ctx.device())?])
            })
            .infer_same(),
        )
}
