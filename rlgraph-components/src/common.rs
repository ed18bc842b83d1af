//! Small helpers RLgraph agents wire between bigger parts: container splitter and merger,
//! batch slicing and splitting, a seeded row sampler, and softmax.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, DType, GraphFn, HostTensor, Param, Result, Tree};

fn bad(component: &str, reason: String) -> CoreError {
    CoreError::Component {
        component: component.into(),
        method: None,
        reason,
    }
}

/// `split(inputs)`: the entries of a Dict input, as separate outputs in the order of `keys`.
pub fn container_splitter<B: Backend>(name: &str, keys: Vec<String>) -> Component<B> {
    let count = keys.len();
    let (k_run, k_infer) = (keys.clone(), keys);
    let comp = name.to_string();
    Component::new(name)
        .with_kind("container-splitter")
        .api("split", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("split", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::new("split", move |_, xs| match &xs[0] {
                Tree::Dict(d) => k_run
                    .iter()
                    .map(|k| {
                        d.get(k)
                            .cloned()
                            .ok_or_else(|| bad(&comp, format!("input has no key {k:?}")))
                    })
                    .collect(),
                _ => Err(bad(&comp, "split needs a Dict input".into())),
            })
            .outputs(count)
            .infer(move |ctx, s| match &s[0] {
                Space::Dict(d) => k_infer
                    .iter()
                    .map(|k| {
                        d.get(k).cloned().ok_or_else(|| {
                            bad(
                                ctx.component(),
                                format!(
                                    "input space has no key {k:?} (it has {:?})",
                                    d.entries().keys().collect::<Vec<_>>()
                                ),
                            )
                        })
                    })
                    .collect(),
                other => Err(bad(ctx.component(), format!("split needs a Dict input, got {other}"))),
            }),
        )
}

/// `merge(input-0, .., input-n)`: one Dict of the inputs under `names`.
pub fn container_merger<B: Backend>(name: &str, names: Vec<String>) -> Component<B> {
    let params: Vec<Param> = (0..names.len()).map(|i| Param::new(format!("input-{i}"))).collect();
    let (n_run, n_infer) = (names.clone(), names);
    Component::new(name)
        .with_kind("container-merger")
        .api("merge", params, |ctx, args| ctx.graph_fn("merge", &args.present()))
        .graph_fn(
            GraphFn::new("merge", move |_, xs| {
                Ok(vec![Tree::Dict(
                    n_run.iter().cloned().zip(xs.iter().cloned()).collect(),
                )])
            })
            .infer(move |_, s| Ok(vec![Space::dict(n_infer.iter().cloned().zip(s.iter().cloned()))?])),
        )
}

/// `slice(inputs, start, end)`: rows `start..end` of the batch (scalar int tensors).
pub fn slice<B: Backend>(name: &str) -> Component<B> {
    let comp = name.to_string();
    Component::new(name)
        .with_kind("slice")
        .api(
            "slice",
            vec![Param::new("inputs"), Param::new("start_index"), Param::new("end_index")],
            |ctx, args| ctx.graph_fn("slice", &[args.get(0)?, args.get(1)?, args.get(2)?]),
        )
        .graph_fn(
            GraphFn::tensors("slice", move |_, xs| {
                let read = |t: &B::Tensor| -> Result<usize> {
                    Ok(B::to_host(t)?.data.to_f64().first().copied().unwrap_or(0.0).max(0.0) as usize)
                };
                let (start, end) = (read(xs[1])?, read(xs[2])?);
                let rows = B::shape(xs[0]).first().copied().unwrap_or(0);
                if start > end || end > rows {
                    return Err(bad(&comp, format!("slice {start}..{end} is outside a batch of {rows}")));
                }
                Ok(vec![B::narrow(xs[0], 0, start, end - start)?])
            })
            .infer(|_, s| Ok(vec![s[0].clone()])),
        )
}

/// `split_batch(inputs)`: `shards` consecutive pieces of the batch (sizes differ by at most one).
pub fn batch_splitter<B: Backend>(name: &str, shards: usize) -> Component<B> {
    let comp = name.to_string();
    Component::new(name)
        .with_kind("batch-splitter")
        .api("split_batch", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("split", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("split", move |_, xs| {
                let rows = B::shape(xs[0]).first().copied().unwrap_or(0);
                if rows < shards {
                    return Err(bad(
                        &comp,
                        format!("a batch of {rows} cannot be split into {shards} shards"),
                    ));
                }
                let mut start = 0;
                (0..shards)
                    .map(|i| {
                        let len = rows / shards + usize::from(i < rows % shards);
                        start += len;
                        B::narrow(xs[0], 0, start - len, len)
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .outputs(shards)
            .infer(move |_, s| Ok(vec![s[0].clone(); shards])),
        )
}

/// `sample(inputs, sample_size)`: that many distinct rows of the batch, chosen by the seeded RNG.
pub fn sampler<B: Backend>(name: &str) -> Component<B> {
    let comp = name.to_string();
    Component::new(name)
        .with_kind("sampler")
        .api(
            "sample",
            vec![Param::new("inputs"), Param::new("sample_size")],
            |ctx, args| ctx.graph_fn("sample", &[args.get(0)?, args.get(1)?]),
        )
        .graph_fn(
            GraphFn::tensors("sample", move |ctx, xs| {
                let rows = B::shape(xs[0]).first().copied().unwrap_or(0);
                let n = B::to_host(xs[1])?.data.to_f64().first().copied().unwrap_or(0.0) as usize;
                if n > rows {
                    return Err(bad(
                        &comp,
                        format!("cannot sample {n} distinct rows from a batch of {rows}"),
                    ));
                }
                // A partial Fisher-Yates shuffle: the first n positions are a uniform sample.
                let mut idx: Vec<i64> = (0..rows as i64).collect();
                for i in 0..n {
                    let j = i + (rand::RngCore::next_u64(ctx.rng()) % (rows - i) as u64) as usize;
                    idx.swap(i, j);
                }
                let idx = B::from_host(&HostTensor::i64([n], idx[..n].to_vec())?, ctx.device())?;
                Ok(vec![B::index_select(xs[0], 0, &idx)?])
            })
            .infer(|_, s| Ok(vec![s[0].clone()])),
        )
}

/// `softmax(logits)` -> (probabilities, log-probabilities) over the last dimension.
pub fn softmax<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .with_kind("softmax")
        .api("softmax", vec![Param::new("logits")], |ctx, args| {
            ctx.graph_fn("softmax", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("softmax", |_, xs| {
                let log_p = crate::distributions::log_softmax::<B>(xs[0])?;
                Ok(vec![B::exp(&log_p)?, B::cast(&log_p, DType::F32)?])
            })
            .outputs(2)
            .infer(|_, s| {
                let f = Space::from(FloatBox::new(s[0].shape().unwrap_or(&[]).to_vec()))
                    .with_ranks(s[0].ranks().unwrap_or_default());
                Ok(vec![f.clone(), f])
            }),
        )
}
