//! Preprocessors with state between calls: `moving_standardize` (running mean and variance)
//! and `sequence` (frame stacking). Each has `call(inputs)` and `reset()`; their state lives
//! in non-trainable variables, so checkpoints carry it. Both compute on the host: they are
//! a few additions per element, cheaper there than as a chain of kernel dispatches.

use crate::helpers::{host, upload};
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{
    Backend, Component, CoreError, DType, GraphFn, HostData, HostTensor, Initializer, KernelCtx, Param, Result, Tree,
    VarDecl,
};

/// RLgraph's `SMALL_NUMBER`, added to the standard deviation.
const SMALL_NUMBER: f64 = 1e-6;

/// `data` as an F32 tensor of `shape` (outputs are float whatever the input's type).
fn upload_f32<B: Backend>(data: &[f64], shape: Vec<usize>, ctx: &KernelCtx<'_, B>) -> Result<B::Tensor> {
    B::from_host(
        &HostTensor {
            shape,
            data: HostData::F32(data.iter().map(|&v| v as f32).collect()),
        },
        ctx.device(),
    )
}

fn set_var<B: Backend>(ctx: &KernelCtx<'_, B>, name: &str, data: &[f64]) -> Result<()> {
    let var = ctx.var_handle(name)?;
    B::var_set(var, &upload::<B>(data, B::var_tensor(var), ctx.device())?)
}

/// Refuses containers and text: the state is per element of one numeric tensor.
fn numeric_inputs(s: &rlgraph_core::InputSpaces) -> Result<()> {
    match s.get("inputs")? {
        Space::Float(_) | Space::Int(_) | Space::Bool(_) => Ok(()),
        _ => Err(s.mismatch("inputs", "one numeric (float, int or bool) space")),
    }
}

fn item_shape(spaces: &rlgraph_core::InputSpaces) -> Result<Vec<usize>> {
    Ok(spaces.get("inputs")?.shape().unwrap_or(&[]).to_vec())
}

fn bad(ctx: &KernelCtx<'_, impl Backend>, reason: String) -> CoreError {
    CoreError::Component {
        component: ctx.component().into(),
        method: Some("call".into()),
        reason,
    }
}

/// The `reset` graph function: every variable back to zero; one dummy output, so the reset
/// reaches the caller's outputs and runs.
fn reset_fn<B: Backend>(vars: &'static [&'static str]) -> GraphFn<B> {
    GraphFn::new("reset", move |ctx, _| {
        for name in vars {
            let var = ctx.var_handle(name)?;
            let zeros = B::affine(B::var_tensor(var), 0.0, 0.0)?;
            B::var_set(var, &B::detach(&zeros))?;
        }
        Ok(vec![Tree::Leaf(B::scalar(
            0.0,
            rlgraph_core::DType::F32,
            ctx.device(),
        )?)])
    })
    .infer(|_, _| Ok(vec![Space::from(FloatBox::new(Vec::<usize>::new()))]))
}

/// Standardizes each element by running estimates over every item seen since the last reset,
/// RLgraph's `MovingStandardize`: per item, `n += 1`, `d = x - mean`, `mean += d / n`,
/// `s += d^2 (n - 1) / n`; then `(x - mean) / (sqrt(s / (n - 1)) + 1e-6)` (with `mean^2` as
/// the variance while `n = 1`), using the estimates after the whole batch.
pub fn moving_standardize<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .with_kind("moving-standardize")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .api("reset", vec![], |ctx, _| ctx.graph_fn("reset", &[]))
        .check_inputs(numeric_inputs)
        .variables(|spaces| {
            let shape = item_shape(spaces)?;
            Ok(vec![
                VarDecl::new("count", [], Initializer::Zeros).frozen(),
                VarDecl::new("mean", shape.clone(), Initializer::Zeros).frozen(),
                VarDecl::new("sum_sq", shape, Initializer::Zeros).frozen(),
            ])
        })
        .graph_fn(reset_fn::<B>(&["count", "mean", "sum_sq"]))
        .graph_fn(
            GraphFn::tensors("apply", |ctx, xs| {
                let x = host::<B>(xs[0])?;
                let mut mean = host::<B>(ctx.var("mean")?)?;
                let mut sum_sq = host::<B>(ctx.var("sum_sq")?)?;
                let mut n = host::<B>(ctx.var("count")?)?.first().copied().unwrap_or(0.0);
                let width = mean.len().max(1);
                if x.len() % width != 0 {
                    return Err(bad(ctx, format!("{} elements are not whole items of {width}", x.len())));
                }
                for item in x.chunks(width) {
                    n += 1.0;
                    for ((m, s), v) in mean.iter_mut().zip(sum_sq.iter_mut()).zip(item) {
                        let d = v - *m;
                        *m += d / n;
                        *s += d * d * (n - 1.0) / n;
                    }
                }
                let std: Vec<f64> = mean
                    .iter()
                    .zip(&sum_sq)
                    .map(|(m, s)| {
                        let var = if n > 1.0 { s / (n - 1.0) } else { m * m };
                        var.sqrt() + SMALL_NUMBER
                    })
                    .collect();
                let out: Vec<f64> = x
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v - mean[i % width]) / std[i % width])
                    .collect();
                set_var::<B>(ctx, "count", &[n])?;
                set_var::<B>(ctx, "mean", &mean)?;
                set_var::<B>(ctx, "sum_sq", &sum_sq)?;
                Ok(vec![upload_f32::<B>(&out, B::shape(xs[0]), ctx)?])
            })
            .infer(|_, s| {
                Ok(vec![Space::from(FloatBox::new(s[0].shape().unwrap_or(&[]).to_vec()))
                    .with_ranks(s[0].ranks().unwrap_or_default())])
            }),
        )
}

/// Refuses text and empty containers: every leaf is stacked as numbers.
fn numeric_leaves(s: &rlgraph_core::InputSpaces) -> Result<()> {
    let leaves = s.get("inputs")?.flatten();
    match leaves
        .iter()
        .find(|(_, l)| !matches!(l, Space::Float(_) | Space::Int(_) | Space::Bool(_)))
    {
        Some((key, _)) => Err(s.mismatch("inputs", format!("inputs{key}: a numeric (float, int or bool) space"))),
        None if leaves.is_empty() => Err(s.mismatch("inputs", "at least one numeric leaf")),
        None => Ok(()),
    }
}

/// Frame stacking, RLgraph's `Sequence`: the last `length` inputs of each of `batch_size`
/// streams, oldest first; right after construction or `reset` the first input fills every
/// slot. With `add_rank` the frames form a new last dimension (`[..., length]`), otherwise
/// they are concatenated along the last one. Output is float. A Dict or Tuple input is
/// stacked leaf by leaf with one step count per stream, as RLgraph keeps one buffer per flat
/// key and one index. An input without a batch rank is one stream (`batch_size` must be 1),
/// fed and returned without a batch dimension.
pub fn sequence<B: Backend>(name: &str, length: usize, batch_size: usize, add_rank: bool) -> Component<B> {
    let length = length.max(1);
    Component::new(name)
        .with_kind("sequence")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .api("reset", vec![], |ctx, _| ctx.graph_fn("reset", &[]))
        .check_inputs(move |s| {
            numeric_leaves(s)?;
            match s.get("inputs")?.has_batch_rank() || batch_size == 1 {
                true => Ok(()),
                false => Err(s.mismatch(
                    "inputs",
                    format!("a batch rank: without one the input is one stream, not batch_size {batch_size}"),
                )),
            }
        })
        .variables(move |spaces| {
            let mut shape = vec![batch_size, length];
            let inputs = spaces.get("inputs")?;
            match inputs.is_container() {
                // Every leaf's items side by side, flat: [batch, length, sum of leaf sizes].
                true => shape.push(inputs.flat_dim()),
                false => shape.extend(item_shape(spaces)?),
            }
            Ok(vec![
                VarDecl::new("frames", shape, Initializer::Zeros).frozen(),
                // Steps since the last reset, per stream (0: the next input fills every slot).
                VarDecl::new("steps", [batch_size], Initializer::Zeros).frozen(),
            ])
        })
        .graph_fn(reset_fn::<B>(&["frames", "steps"]))
        .graph_fn(
            GraphFn::new("apply", move |ctx, xs| {
                let input = xs.first().ok_or_else(|| bad(ctx, "needs its input".into()))?;
                let mut frames = host::<B>(ctx.var("frames")?)?;
                let steps = host::<B>(ctx.var("steps")?)?;
                let frame = frames.len() / (batch_size * length);
                let batched = ctx.input_space(0).is_none_or(Space::has_batch_rank);
                let mut stack = Stacking {
                    frames: &mut frames,
                    steps: &steps,
                    length,
                    batch_size,
                    add_rank,
                    frame,
                    offset: 0,
                };
                let ctx_ref = &*ctx;
                let out = input.try_map(&mut |key, x| {
                    // One unbatched stream is pushed as a batch of one and given back without it.
                    let mut shape = B::shape(x);
                    if !batched {
                        shape.insert(0, 1);
                    }
                    let (data, mut shape) = stack.push(&host::<B>(x)?, shape, key).map_err(|e| bad(ctx_ref, e))?;
                    if !batched {
                        shape.remove(0);
                    }
                    match B::dtype(x) {
                        DType::U8 | DType::I64 => B::from_host(
                            &HostTensor::new(shape, HostData::from_f64(&data, B::dtype(x)))?,
                            ctx_ref.device(),
                        ),
                        _ => upload_f32::<B>(&data, shape, ctx_ref),
                    }
                })?;
                let steps: Vec<f64> = steps.iter().map(|s| s + 1.0).collect();
                set_var::<B>(ctx, "frames", &frames)?;
                set_var::<B>(ctx, "steps", &steps)?;
                Ok(vec![out])
            })
            .infer(move |_, s| {
                Ok(vec![s[0].map(|_, leaf| {
                    let mut shape = leaf.shape().unwrap_or(&[]).to_vec();
                    match shape.last_mut() {
                        Some(last) if !add_rank => *last *= length,
                        _ => shape.push(length),
                    }
                    let ranks = leaf.ranks().unwrap_or_default();
                    match leaf {
                        Space::Int(b) => Space::from(b.clone().with_shape(shape)).with_ranks(ranks),
                        _ => Space::from(FloatBox::new(shape)).with_ranks(ranks),
                    }
                })])
            }),
        )
}

/// One call of `sequence` over the host copy of its frames: each leaf in turn takes the next
/// `offset..offset + width` of every frame.
struct Stacking<'a> {
    /// `[batch, length, frame]`, oldest frame first.
    frames: &'a mut [f64],
    steps: &'a [f64],
    length: usize,
    batch_size: usize,
    add_rank: bool,
    /// The elements of one frame: every leaf's item.
    frame: usize,
    /// Where the next leaf's item starts within a frame.
    offset: usize,
}

impl Stacking<'_> {
    /// Pushes one leaf's batch `x` (of `shape`, at flat key `key`) into the frames and gives
    /// its stacked output with that output's shape.
    fn push(&mut self, x: &[f64], shape: Vec<usize>, key: &str) -> std::result::Result<(Vec<f64>, Vec<usize>), String> {
        let (batch_size, length, frame) = (self.batch_size, self.length, self.frame);
        if shape.first() != Some(&batch_size) {
            return Err(format!(
                "expects batches of {batch_size} streams, got shape {shape:?} at inputs{key}"
            ));
        }
        let width = x.len() / batch_size;
        let start = self.offset;
        if start + width > frame {
            return Err(format!(
                "inputs{key} has {width} elements per item, more than its frames hold (the input is not the space it was built for)"
            ));
        }
        self.offset += width;
        let mut out = Vec::with_capacity(x.len() * length);
        for b in 0..batch_size {
            let item = &x[b * width..(b + 1) * width];
            let stream = &mut self.frames[b * length * frame..(b + 1) * length * frame];
            let slot = |f: usize| f * frame + start..f * frame + start + width;
            if self.steps[b] == 0.0 {
                for f in 0..length {
                    stream[slot(f)].copy_from_slice(item);
                }
            } else {
                for f in 1..length {
                    stream.copy_within(slot(f), slot(f - 1).start);
                }
                stream[slot(length - 1)].copy_from_slice(item);
            }
            if self.add_rank {
                // [..item, length]: element e of frame f at e * length + f.
                for e in 0..width {
                    out.extend((0..length).map(|f| stream[f * frame + start + e]));
                }
            } else {
                // Concatenated along the last dimension of size `last`.
                let last = shape.last().copied().filter(|_| shape.len() > 1).unwrap_or(1);
                for row in 0..width / last.max(1) {
                    for f in 0..length {
                        let from = f * frame + start + row * last;
                        out.extend_from_slice(&stream[from..from + last]);
                    }
                }
            }
        }
        let mut out_shape = shape;
        let concatenates = !self.add_rank && out_shape.len() > 1;
        match out_shape.last_mut() {
            Some(last) if concatenates => *last *= length,
            _ => out_shape.push(length),
        }
        Ok((out, out_shape))
    }
}
