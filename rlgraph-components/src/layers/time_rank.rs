//! Folding the time rank into the batch rank and back (RLgraph's `ReshapeLayer` with
//! `fold_time_rank` / `unfold_time_rank`), so batch-only layers can run over sequences.

use rlgraph_core::spaces::Ranks;
use rlgraph_core::{Backend, Component, GraphFn, Param};

/// `call(inputs)`: `[B, T, ...]` (or time-major `[T, B, ...]`) to `[B * T, ...]`; the output
/// has a batch rank only.
pub fn fold_time_rank<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .with_kind("fold-time-rank")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("fold", &[args.get(0)?])
        })
        // A preprocessor stack resets every member; folding keeps no state.
        .api("reset", vec![], |_, _| Ok(vec![]))
        .check_inputs(|s| {
            let x = s.get("inputs")?;
            match x.ranks() {
                Some(r) if r.batch && r.time && !x.is_container() => Ok(()),
                _ => Err(s.mismatch("inputs", "a primitive space with batch and time ranks")),
            }
        })
        .graph_fn(
            GraphFn::tensors("fold", |_, xs| {
                let shape = B::shape(xs[0]);
                let mut out = vec![shape[0] * shape[1]];
                out.extend_from_slice(&shape[2..]);
                Ok(vec![B::reshape(xs[0], &out)?])
            })
            .infer(|_, s| {
                Ok(vec![s[0].with_ranks(Ranks {
                    batch: true,
                    time: false,
                    time_major: false,
                })])
            }),
        )
}

/// `call(inputs, input_before_time_rank_folding)`: `[B * T, ...]` back to the leading
/// `[B, T]` (or `[T, B]`) of the second input, whose ranks the output takes.
pub fn unfold_time_rank<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .with_kind("unfold-time-rank")
        .api(
            "call",
            vec![Param::new("inputs"), Param::new("input_before_time_rank_folding")],
            |ctx, args| ctx.graph_fn("unfold", &[args.get(0)?, args.get(1)?]),
        )
        .check_inputs(|s| {
            let before = s.get("input_before_time_rank_folding")?;
            match before.ranks() {
                Some(r) if r.batch && r.time => Ok(()),
                _ => Err(s.mismatch(
                    "input_before_time_rank_folding",
                    "a space with batch and time ranks (the input before folding)",
                )),
            }
        })
        .graph_fn(
            GraphFn::tensors("unfold", |ctx, xs| {
                let (x, before) = (B::shape(xs[0]), B::shape(xs[1]));
                let lead = (before[0], before[1]);
                if x.first() != Some(&(lead.0 * lead.1)) {
                    return Err(rlgraph_core::CoreError::Component {
                        component: ctx.component().into(),
                        method: Some("call".into()),
                        reason: format!(
                            "inputs lead with {:?} rows; the folded {} x {} needs {}",
                            x.first(),
                            lead.0,
                            lead.1,
                            lead.0 * lead.1
                        ),
                    });
                }
                let mut out = vec![lead.0, lead.1];
                out.extend_from_slice(&x[1..]);
                Ok(vec![B::reshape(xs[0], &out)?])
            })
            .infer(|_, s| Ok(vec![s[0].with_ranks(s[1].ranks().unwrap_or_default())])),
        )
}
