//! Exploration: epsilon-greedy with a decaying epsilon, and Gaussian and Ornstein-Uhlenbeck
//! action noise. All randomness comes from the executor's seeded RNG.

use rand::Rng;
use rlgraph_core::spaces::{BoolBox, FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, HostData, Initializer, Param, VarDecl};

use crate::time_dependent::TimeDependent;

/// Epsilon-greedy exploration over `num_actions` discrete actions.
///
/// `do_explore(sample, time_percentage)` gives, per batch item of `sample`, whether to explore
/// (`u < epsilon(t)` with `u` uniform); `get_action(actions, time_percentage)` replaces the
/// actions of exploring items by uniformly random ones. `time_percentage` is a scalar or one
/// value per batch item.
pub fn epsilon_exploration<B: Backend>(name: &str, epsilon: TimeDependent, num_actions: usize) -> Component<B> {
    let (eps_a, eps_b) = (epsilon.clone(), epsilon);
    Component::new(name)
        .with_kind("epsilon-exploration")
        .api(
            "do_explore",
            vec![Param::new("sample"), Param::new("time_percentage")],
            |ctx, args| ctx.graph_fn("explore_mask", &[args.get(0)?, args.get(1)?]),
        )
        .api(
            "get_action",
            vec![Param::new("actions"), Param::new("time_percentage")],
            |ctx, args| ctx.graph_fn("epsilon_greedy", &[args.get(0)?, args.get(1)?]),
        )
        .check_inputs(move |s| {
            if let Some(a) = s.try_get("actions") {
                if a.num_categories() != Some(num_actions as u64) || !a.has_batch_rank() {
                    return Err(s.mismatch("actions", format!("a batched IntBox with {num_actions} categories")));
                }
            }
            s.expect("time_percentage", "a FloatBox", |sp| matches!(sp, Space::Float(_)))
        })
        .graph_fn(
            GraphFn::tensors("explore_mask", move |ctx, xs| {
                Ok(vec![explore_mask::<B>(ctx, xs[0], xs[1], &eps_a)?])
            })
            .infer(|_, _| Ok(vec![Space::from(BoolBox::new([])).with_batch_rank(true)])),
        )
        .graph_fn(
            GraphFn::tensors("epsilon_greedy", move |ctx, xs| {
                // Per item: u < epsilon(t) explores, with uniform random actions. The draws
                // are made on the host from the kernel's RNG (as `B::uniform` would), and
                // the actions are replaced there: one download and one upload, and nothing
                // at all when no item explores (most steps, once epsilon has decayed).
                let explore = explore_draws::<B>(ctx, xs[0], xs[1], &eps_b)?;
                if !explore.contains(&true) {
                    return Ok(vec![xs[0].clone()]);
                }
                let mut actions = B::to_host(xs[0])?;
                let per_item = actions.data.len() / explore.len().max(1);
                let rng = ctx.rng();
                let mut draw = || rng.random_range(0..num_actions as i64);
                match &mut actions.data {
                    HostData::I64(v) => replace_rows(v, per_item, &explore, &mut draw),
                    HostData::U8(v) => replace_rows(v, per_item, &explore, &mut || draw() as u8),
                    HostData::F32(v) => replace_rows(v, per_item, &explore, &mut || draw() as f32),
                    HostData::F64(v) => replace_rows(v, per_item, &explore, &mut || draw() as f64),
                }
                Ok(vec![B::from_host(&actions, ctx.device())?])
            })
            .infer_same(),
        )
}

/// Overwrites the `per_item` values of each exploring item of `data` with draws.
fn replace_rows<T>(data: &mut [T], per_item: usize, explore: &[bool], draw: &mut impl FnMut() -> T) {
    for (i, row) in data.chunks_mut(per_item.max(1)).enumerate() {
        if explore.get(i).copied().unwrap_or(false) {
            row.iter_mut().for_each(|x| *x = draw());
        }
    }
}

/// Per batch item of `sample`: whether to explore (`u < epsilon(t)`, `u` uniform on the
/// host from the kernel's RNG).
fn explore_draws<B: Backend>(
    ctx: &mut rlgraph_core::KernelCtx<'_, B>,
    sample: &B::Tensor,
    t: &B::Tensor,
    epsilon: &TimeDependent,
) -> rlgraph_core::Result<Vec<bool>> {
    let batch = B::shape(sample).first().copied().ok_or_else(|| CoreError::Component {
        component: ctx.component().into(),
        method: Some("do_explore".into()),
        reason: "the sample needs a batch dimension".into(),
    })?;
    let ts = B::to_host(t)?.data.to_f64();
    let eps: Vec<f64> = (0..batch)
        .map(|i| epsilon.value(ts.get(i).or(ts.first()).copied().unwrap_or(0.0)))
        .collect();
    let rng = ctx.rng();
    Ok(eps.iter().map(|&e| rng.random::<f64>() < e).collect())
}

fn explore_mask<B: Backend>(
    ctx: &mut rlgraph_core::KernelCtx<'_, B>,
    sample: &B::Tensor,
    t: &B::Tensor,
    epsilon: &TimeDependent,
) -> rlgraph_core::Result<B::Tensor> {
    let explore = explore_draws::<B>(ctx, sample, t, epsilon)?;
    let mask: Vec<u8> = explore.iter().map(|&e| e as u8).collect();
    B::from_host(&rlgraph_core::HostTensor::u8([mask.len()], mask)?, ctx.device())
}

/// Gaussian action noise: `get_noise(sample)` draws `N(mean, stddev)` of the sample's shape.
pub fn gaussian_noise<B: Backend>(name: &str, mean: f64, stddev: f64) -> Component<B> {
    Component::new(name)
        .with_kind("gaussian-noise")
        .api("get_noise", vec![Param::new("sample")], |ctx, args| {
            ctx.graph_fn("noise", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("noise", move |ctx, xs| {
                Ok(vec![B::normal(
                    &B::shape(xs[0]),
                    mean,
                    stddev,
                    B::dtype(xs[0]),
                    ctx.device(),
                    ctx.rng(),
                )?])
            })
            .infer_same(),
        )
}

/// Ornstein-Uhlenbeck action noise of `shape`: `x += theta (mu - x) + sigma N(0, 1)` per call
/// of `get_noise()`, starting at `mu`. The state is a variable, so it is checkpointed.
pub fn ornstein_uhlenbeck_noise<B: Backend>(
    name: &str,
    shape: Vec<usize>,
    theta: f64,
    mu: f64,
    sigma: f64,
) -> Component<B> {
    let out = Space::from(FloatBox::new(shape.clone()));
    Component::new(name)
        .with_kind("ornstein-uhlenbeck-noise")
        .api("get_noise", vec![], |ctx, _| ctx.graph_fn("step", &[]))
        .variables(move |_| {
            Ok(vec![
                VarDecl::new("ou_state", shape.clone(), Initializer::Constant(mu)).frozen()
            ])
        })
        .graph_fn(
            GraphFn::tensors("step", move |ctx, _| {
                let state = ctx.var_handle("ou_state")?;
                let x = B::detach(B::var_tensor(state));
                let n = B::normal(&B::shape(&x), 0.0, 1.0, B::dtype(&x), ctx.device(), ctx.rng())?;
                // x + theta (mu - x) = (1 - theta) x + theta mu
                let next = B::add(&B::affine(&x, 1.0 - theta, theta * mu)?, &B::affine(&n, sigma, 0.0)?)?;
                B::var_set(state, &next)?;
                Ok(vec![next])
            })
            .infer(move |_, _| Ok(vec![out.clone()])),
        )
}
