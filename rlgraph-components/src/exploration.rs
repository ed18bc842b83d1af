//! Exploration: epsilon-greedy with a decaying epsilon, and Gaussian and Ornstein-Uhlenbeck
//! action noise. All randomness comes from the executor's seeded RNG.

use rlgraph_core::spaces::{BoolBox, FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, DType, GraphFn, Initializer, Param, VarDecl};

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
                let mask = explore_mask::<B>(ctx, xs[0], xs[1], &eps_b)?;
                let shape = B::shape(xs[0]);
                let random = B::uniform(&shape, 0.0, num_actions as f64, DType::F64, ctx.device(), ctx.rng())?;
                // Flooring a U(0, n) draw gives a uniform category; clamp guards the edge n.
                let random = B::cast(&B::clamp(&random, 0.0, num_actions as f64 - 1.0)?, DType::I64)?;
                let mask = B::reshape(&mask, &broadcastable(&shape))?;
                Ok(vec![B::where_cond(&mask, &random, xs[0])?])
            })
            .infer_same(),
        )
}

/// `[batch, 1, 1, ...]` for a sample of `shape`, so a per-item mask broadcasts over it.
fn broadcastable(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    if let Some(first) = s.first_mut() {
        *first = shape.first().copied().unwrap_or(1);
    }
    s
}

fn explore_mask<B: Backend>(
    ctx: &mut rlgraph_core::KernelCtx<'_, B>,
    sample: &B::Tensor,
    t: &B::Tensor,
    epsilon: &TimeDependent,
) -> rlgraph_core::Result<B::Tensor> {
    let batch = B::shape(sample).first().copied().ok_or_else(|| CoreError::Component {
        component: ctx.component().into(),
        method: Some("do_explore".into()),
        reason: "the sample needs a batch dimension".into(),
    })?;
    let ts = B::to_host(t)?.data.to_f64();
    let eps: Vec<f64> = (0..batch)
        .map(|i| epsilon.value(ts.get(i).or(ts.first()).copied().unwrap_or(0.0)))
        .collect();
    let eps = B::from_host(&rlgraph_core::HostTensor::f64([batch], eps)?, ctx.device())?;
    let u = B::uniform(&[batch], 0.0, 1.0, DType::F64, ctx.device(), ctx.rng())?;
    B::lt(&u, &eps)
}

/// Gaussian action noise: `get_noise(sample)` draws `N(mean, stddev)` of the sample's shape.
pub fn gaussian_noise<B: Backend>(name: &str, mean: f64, stddev: f64) -> Component<B> {
    Component::new(name)
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
