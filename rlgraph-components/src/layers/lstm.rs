//! The LSTM layer (Hochreiter and Schmidhuber 1997), with TensorFlow's `LSTMCell` gate layout
//! and forget bias, as RLgraph's `LSTMLayer`: sequences batch-major or time-major, initial
//! internal states in and final ones out, per-sequence lengths, and a stateful mode that
//! carries the state from call to call until `reset`.

use rlgraph_core::spaces::{FloatBox, IntBox, Ranks, Space};
use rlgraph_core::{
    Backend, Component, CoreError, DType, GraphFn, Initializer, KernelCtx, Param, Result, Tree, VarDecl,
};

/// The settings of an LSTM layer (RLgraph's names).
#[derive(Clone, Debug, PartialEq)]
pub struct LstmSpec {
    /// Hidden units (the size of `c` and `h`).
    pub units: usize,
    /// Added to the forget gate's pre-activation (1.0 keeps memory early in training).
    pub forget_bias: f64,
    /// Return every step's output (`[.., T, units]`), or only the last valid one (`[B, units]`).
    pub return_sequences: bool,
    /// Keep the final state between calls (for this many sequences per batch) and start from
    /// it when no initial state is given; `reset()` zeroes it.
    pub stateful_batch: Option<usize>,
    /// The layout the inputs must have (`None`: whatever their space says).
    pub time_major: Option<bool>,
}

impl LstmSpec {
    /// An LSTM of `units` with forget bias 1 that returns sequences and keeps no state.
    pub fn new(units: usize) -> Self {
        LstmSpec {
            units,
            forget_bias: 1.0,
            return_sequences: true,
            stateful_batch: None,
            time_major: None,
        }
    }
}

fn component_error(ctx: &KernelCtx<'_, impl Backend>, reason: String) -> CoreError {
    CoreError::Component {
        component: ctx.component().into(),
        method: Some("call".into()),
        reason,
    }
}

/// One LSTM step: `z = [x, h] W + b`, gates `i, j, f, o` (TensorFlow's order);
/// `c' = sigmoid(f + forget_bias) c + sigmoid(i) tanh(j)`, `h' = sigmoid(o) tanh(c')`.
fn step<B: Backend>(
    x: &B::Tensor,
    c: &B::Tensor,
    h: &B::Tensor,
    kernel: &B::Tensor,
    bias: &B::Tensor,
    units: usize,
    forget_bias: f64,
) -> Result<(B::Tensor, B::Tensor)> {
    let z = B::add(&B::matmul(&B::concat(&[x.clone(), h.clone()], 1)?, kernel)?, bias)?;
    let gate = |k: usize| B::narrow(&z, 1, k * units, units);
    let (i, j, f, o) = (gate(0)?, gate(1)?, gate(2)?, gate(3)?);
    let c_new = B::add(
        &B::mul(&B::sigmoid(&B::affine(&f, 1.0, forget_bias)?)?, c)?,
        &B::mul(&B::sigmoid(&i)?, &B::tanh(&j)?)?,
    )?;
    let h_new = B::mul(&B::sigmoid(&o)?, &B::tanh(&c_new)?)?;
    Ok((c_new, h_new))
}

/// The cell's `kernel` (`[features + units, 4 * units]`, over `[x, h]`) and `bias`, for the
/// features of the input `inputs`.
fn cell_variables(spaces: &rlgraph_core::InputSpaces, units: usize) -> Result<Vec<VarDecl>> {
    let features = spaces
        .get("inputs")?
        .shape()
        .and_then(|s| s.first().copied())
        .unwrap_or(0);
    Ok(vec![
        VarDecl::new("kernel", [features + units, 4 * units], Initializer::GlorotUniform),
        VarDecl::new("bias", [4 * units], Initializer::Zeros),
    ])
}

/// An LSTM layer named `name`. `call(inputs, initial_c_and_h_states, sequence_length)`:
/// `inputs` `[B, T, F]` (or time-major `[T, B, F]`, as the space's ranks say); the optional
/// initial state a Tuple `(c, h)` of `[B, units]`; the optional `sequence_length` `[B]` ints,
/// past which a sequence's outputs are zero and its state stays. Returns the outputs and the
/// final `(c, h)`.
pub fn lstm<B: Backend>(name: &str, spec: LstmSpec) -> Component<B> {
    let units = spec.units;
    let decl = spec.clone();
    let run = spec.clone();
    let layout = spec.time_major;
    Component::new(name)
        .with_kind("lstm")
        .api(
            "call",
            vec![
                Param::new("inputs"),
                Param::optional("initial_c_and_h_states"),
                Param::optional("sequence_length"),
            ],
            |ctx, args| {
                // Absent optional inputs become empty Tuples, so the kernel sees fixed slots.
                let mut xs = vec![args.get(0)?];
                for i in 1..3 {
                    xs.push(match args.opt(i) {
                        Some(op) => op,
                        None => ctx.graph_fn1("nothing", &[])?,
                    });
                }
                ctx.graph_fn("lstm", &xs)
            },
        )
        .api("reset", vec![], |ctx, _| ctx.graph_fn("reset", &[]))
        .check_inputs(move |s| {
            let x = s.get("inputs")?;
            let ok = matches!(x, Space::Float(_))
                && x.shape().is_some_and(|sh| sh.len() == 1)
                && x.ranks().is_some_and(|r| r.batch && r.time);
            if !ok {
                return Err(s.mismatch("inputs", "float sequences [B, T, features] with batch and time ranks"));
            }
            match (layout, x.ranks()) {
                (Some(want), Some(r)) if r.time_major != want => Err(s.mismatch(
                    "inputs",
                    if want {
                        "time-major sequences (time_major: true)"
                    } else {
                        "batch-major sequences (time_major: false)"
                    },
                )),
                _ => Ok(()),
            }
        })
        .variables(move |spaces| {
            let mut v = cell_variables(spaces, units)?;
            if let Some(b) = decl.stateful_batch {
                v.push(VarDecl::new("state_c", [b, units], Initializer::Zeros).frozen());
                v.push(VarDecl::new("state_h", [b, units], Initializer::Zeros).frozen());
            }
            Ok(v)
        })
        .graph_fn(
            GraphFn::new("nothing", |_, _| Ok(vec![Tree::Tuple(vec![])])).infer(|_, _| Ok(vec![Space::tuple(vec![])])),
        )
        .graph_fn(
            GraphFn::new("reset", move |ctx, _| {
                for name in ["state_c", "state_h"] {
                    if let Ok(var) = ctx.var_handle(name) {
                        B::var_set(var, &B::detach(&B::affine(B::var_tensor(var), 0.0, 0.0)?))?;
                    }
                }
                Ok(vec![Tree::Leaf(B::scalar(0.0, DType::F32, ctx.device())?)])
            })
            .infer(|_, _| Ok(vec![Space::from(FloatBox::new(Vec::<usize>::new()))])),
        )
        .graph_fn(
            GraphFn::new("lstm", move |ctx: &mut KernelCtx<'_, B>, xs: &[Tree<B::Tensor>]| {
                let time_major = ctx.input_space(0).and_then(Space::ranks).is_some_and(|r| r.time_major);
                let x = xs[0]
                    .as_leaf()
                    .ok_or_else(|| component_error(ctx, "inputs must be one tensor".into()))?;
                let x = if time_major { x.clone() } else { B::transpose(x, 0, 1)? };
                let shape = B::shape(&x);
                let (t_len, batch) = (shape[0], shape[1]);
                let dev = ctx.device();
                let (mut c, mut h) = match &xs[1] {
                    Tree::Tuple(v) if v.len() == 2 => match (v[0].as_leaf(), v[1].as_leaf()) {
                        (Some(c), Some(h)) => (c.clone(), h.clone()),
                        _ => return Err(component_error(ctx, "initial_c_and_h_states must be (c, h)".into())),
                    },
                    Tree::Tuple(v) if v.is_empty() => match run.stateful_batch {
                        Some(b) if b == batch => (ctx.var("state_c")?.clone(), ctx.var("state_h")?.clone()),
                        Some(b) => {
                            return Err(component_error(
                                ctx,
                                format!("the stateful LSTM keeps {b} sequences, got a batch of {batch}"),
                            ))
                        }
                        None => {
                            let zeros = B::full(&[batch, units], 0.0, DType::F32, dev)?;
                            (zeros.clone(), zeros)
                        }
                    },
                    _ => return Err(component_error(ctx, "initial_c_and_h_states must be (c, h)".into())),
                };
                let lengths = match &xs[2] {
                    Tree::Leaf(l) => Some(B::to_host(l)?.data.to_f64()),
                    _ => None,
                };
                let (kernel, bias) = (ctx.var("kernel")?.clone(), ctx.var("bias")?.clone());
                let mut outputs = Vec::with_capacity(t_len);
                let mut last = B::full(&[batch, units], 0.0, DType::F32, dev)?;
                for t in 0..t_len {
                    let x_t = B::squeeze(&B::narrow(&x, 0, t, 1)?, 0)?;
                    let (c_new, h_new) = step::<B>(&x_t, &c, &h, &kernel, &bias, units, run.forget_bias)?;
                    match &lengths {
                        Some(len) => {
                            // 1 for sequences still running at step t, 0 past their end.
                            let alive: Vec<f64> = len.iter().map(|&l| f64::from(u8::from((t as f64) < l))).collect();
                            let mut draws = alive.iter().flat_map(|&a| std::iter::repeat_n(a, units));
                            let m = B::from_draws(&[batch, units], DType::F32, dev, || draws.next().unwrap_or(0.0))?;
                            let keep = B::affine(&m, -1.0, 1.0)?;
                            c = B::add(&B::mul(&m, &c_new)?, &B::mul(&keep, &c)?)?;
                            h = B::add(&B::mul(&m, &h_new)?, &B::mul(&keep, &h)?)?;
                            let out = B::mul(&m, &h_new)?;
                            last = B::add(&B::mul(&m, &out)?, &B::mul(&keep, &last)?)?;
                            outputs.push(out);
                        }
                        None => {
                            c = c_new;
                            h = h_new;
                            last = h.clone();
                            outputs.push(h.clone());
                        }
                    }
                }
                if run.stateful_batch.is_some() {
                    B::var_set(ctx.var_handle("state_c")?, &B::detach(&c))?;
                    B::var_set(ctx.var_handle("state_h")?, &B::detach(&h))?;
                }
                let out = if run.return_sequences {
                    let stacked = B::concat(
                        &outputs.iter().map(|o| B::unsqueeze(o, 0)).collect::<Result<Vec<_>>>()?,
                        0,
                    )?;
                    if time_major {
                        stacked
                    } else {
                        B::transpose(&stacked, 0, 1)?
                    }
                } else {
                    last
                };
                Ok(vec![Tree::Leaf(out), Tree::Tuple(vec![Tree::Leaf(c), Tree::Leaf(h)])])
            })
            .outputs(2)
            .infer(move |_, s| {
                let ranks = s[0].ranks().unwrap_or_default();
                let out = Space::from(FloatBox::new([units]));
                let out = if spec.return_sequences {
                    out.with_ranks(ranks)
                } else {
                    out.with_ranks(Ranks {
                        batch: true,
                        time: false,
                        time_major: false,
                    })
                };
                let state = Space::from(FloatBox::new([units])).with_batch_rank(true);
                Ok(vec![out, Space::tuple(vec![state.clone(), state])])
            }),
        )
}

/// The space of `sequence_length` inputs: one int per sequence.
pub fn sequence_length_space() -> Space {
    Space::from(IntBox::unbounded()).with_batch_rank(true)
}

/// An LSTM named `name` that an agent carries from step to step, over flat batches (no time
/// rank, so the layers, policies and losses around it need none either).
/// `unroll(inputs, memory, starts)`: `inputs` `[N * T, F]` are `N` sequences of `T` steps one
/// after another; `memory` the Tuple `(c, h)` of `[N, units]` each sequence starts from; the
/// optional `starts` `[N * T]` are 1 where an episode starts, which zeroes the memory before
/// that step, as the actor zeroed it when it acted. Returns every step's output `[N * T,
/// units]` and the final `(c, h)`. Acting is the case `T = 1`. Its variables are
/// [`lstm`]'s, named alike.
pub fn lstm_unroll<B: Backend>(name: &str, units: usize, forget_bias: f64) -> Component<B> {
    Component::new(name)
        .with_kind("lstm")
        .api(
            "unroll",
            vec![Param::new("inputs"), Param::new("memory"), Param::optional("starts")],
            |ctx, args| {
                let starts = match args.opt(2) {
                    Some(op) => op,
                    None => ctx.graph_fn1("nothing", &[])?,
                };
                ctx.graph_fn("unroll", &[args.get(0)?, args.get(1)?, starts])
            },
        )
        .check_inputs(move |s| {
            let x = s.get("inputs")?;
            let ok = matches!(x, Space::Float(_))
                && x.shape().is_some_and(|sh| sh.len() == 1)
                && x.ranks().is_some_and(|r| r.batch && !r.time);
            if !ok {
                return Err(s.mismatch("inputs", "float vectors [N * T, features] with a batch rank only"));
            }
            let memory = s.get("memory")?;
            if *memory != memory_space(units) {
                return Err(s.mismatch(
                    "memory",
                    format!("the Tuple (c, h) of two float [{units}] with a batch rank"),
                ));
            }
            Ok(())
        })
        .variables(move |spaces| cell_variables(spaces, units))
        .graph_fn(
            GraphFn::new("nothing", |_, _| Ok(vec![Tree::Tuple(vec![])])).infer(|_, _| Ok(vec![Space::tuple(vec![])])),
        )
        .graph_fn(
            GraphFn::new("unroll", move |ctx: &mut KernelCtx<'_, B>, xs: &[Tree<B::Tensor>]| {
                let bad = |ctx: &KernelCtx<'_, B>, reason: String| CoreError::Component {
                    component: ctx.component().into(),
                    method: Some("unroll".into()),
                    reason,
                };
                let (Some(x), Tree::Tuple(m)) = (xs[0].as_leaf(), &xs[1]) else {
                    return Err(bad(ctx, "inputs must be one tensor and memory a Tuple (c, h)".into()));
                };
                let (Some(c0), Some(h0)) = (m.first().and_then(Tree::as_leaf), m.get(1).and_then(Tree::as_leaf)) else {
                    return Err(bad(ctx, "memory must be the Tuple (c, h)".into()));
                };
                let (rows, n) = (B::shape(x)[0], B::shape(c0)[0]);
                if n == 0 || rows % n != 0 {
                    return Err(bad(
                        ctx,
                        format!("{rows} input rows do not split into the memory's {n} sequences of equal length"),
                    ));
                }
                let t_len = rows / n;
                let features = B::shape(x).get(1).copied().unwrap_or(0);
                let x = B::reshape(x, &[n, t_len, features])?;
                // 1 - starts: the share of the memory each step keeps.
                let keep = match &xs[2] {
                    Tree::Leaf(s) => {
                        if B::shape(s) != [rows] {
                            return Err(bad(ctx, format!("starts must be [{rows}], got {:?}", B::shape(s))));
                        }
                        let s = B::cast(s, DType::F32)?;
                        Some(B::reshape(&B::affine(&s, -1.0, 1.0)?, &[n, t_len])?)
                    }
                    _ => None,
                };
                let (kernel, bias) = (ctx.var("kernel")?.clone(), ctx.var("bias")?.clone());
                let (mut c, mut h) = (c0.clone(), h0.clone());
                let mut outputs = Vec::with_capacity(t_len);
                for t in 0..t_len {
                    if let Some(keep) = &keep {
                        let k = B::narrow(keep, 1, t, 1)?;
                        c = B::mul(&c, &k)?;
                        h = B::mul(&h, &k)?;
                    }
                    let x_t = B::squeeze(&B::narrow(&x, 1, t, 1)?, 1)?;
                    (c, h) = step::<B>(&x_t, &c, &h, &kernel, &bias, units, forget_bias)?;
                    outputs.push(B::unsqueeze(&h, 1)?);
                }
                let out = B::reshape(&B::concat(&outputs, 1)?, &[rows, units])?;
                Ok(vec![Tree::Leaf(out), Tree::Tuple(vec![Tree::Leaf(c), Tree::Leaf(h)])])
            })
            .outputs(2)
            .infer(move |_, _| {
                let out = Space::from(FloatBox::new([units])).with_batch_rank(true);
                Ok(vec![out, memory_space(units)])
            }),
        )
}

/// The space of an [`lstm_unroll`]'s memory: the Tuple `(c, h)`, each `[N, units]`.
pub fn memory_space(units: usize) -> Space {
    let state = Space::from(FloatBox::new([units])).with_batch_rank(true);
    Space::tuple(vec![state.clone(), state])
}
