//! Exploration: epsilon-greedy with a decaying epsilon, and Gaussian and Ornstein-Uhlenbeck
//! action noise. All randomness comes from the executor's seeded RNG.

use rand::Rng;
use std::collections::BTreeMap;

use rlgraph_core::spaces::{BoolBox, FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, HostData, Initializer, Param, Result, Tree, VarDecl};

use crate::discrete_actions::discrete_actions;
use crate::time_dependent::TimeDependent;

/// Epsilon-greedy exploration over the discrete actions of `action_space` (an IntBox, or a
/// Dict or Tuple of IntBoxes).
///
/// `do_explore(sample, time_percentage)` gives, per batch item of `sample`, whether to explore
/// (`u < epsilon(t)` with `u` uniform); `get_action(actions, time_percentage[, action_mask])`
/// replaces the actions of exploring items by uniformly random ones (with a mask `[batch, n]`,
/// uniformly random valid ones; see [`crate::action_mask`]). As in RLgraph, one decision per item
/// covers every action of a container, and each action draws its own random choice.
/// `time_percentage` is a scalar or one value per batch item.
pub fn epsilon_exploration<B: Backend>(
    name: &str,
    epsilon: TimeDependent,
    action_space: &Space,
) -> Result<Component<B>> {
    let actions = discrete_actions(&action_space.with_batch_rank(false), "epsilon exploration")?;
    let categories: BTreeMap<String, usize> = actions.iter().map(|a| (a.key.clone(), a.categories)).collect();
    let expected = action_space.with_batch_rank(true);
    let (eps_a, eps_b) = (epsilon.clone(), epsilon);
    Ok(Component::new(name)
        .with_kind("epsilon-exploration")
        .api(
            "do_explore",
            vec![Param::new("sample"), Param::new("time_percentage")],
            |ctx, args| ctx.graph_fn("explore_mask", &[args.get(0)?, args.get(1)?]),
        )
        .api(
            "get_action",
            vec![
                Param::new("actions"),
                Param::new("time_percentage"),
                Param::optional("action_mask"),
            ],
            |ctx, args| ctx.graph_fn("epsilon_greedy", &args.present()),
        )
        .check_inputs(move |s| {
            if let Some(a) = s.try_get("actions") {
                let fits = a.has_batch_rank()
                    && discrete_actions(&a.with_batch_rank(false), "epsilon exploration")
                        .ok()
                        .as_deref()
                        == Some(&actions[..]);
                if !fits {
                    return Err(s.mismatch("actions", format!("{} with a batch rank", expected.describe())));
                }
            }
            s.expect("time_percentage", "a FloatBox", |sp| matches!(sp, Space::Float(_)))
        })
        .graph_fn(
            GraphFn::new("explore_mask", move |ctx, xs| {
                let sample = first_leaf::<B>(ctx.component(), &xs[0])?;
                let t = first_leaf::<B>(ctx.component(), &xs[1])?;
                Ok(vec![Tree::Leaf(explore_mask::<B>(ctx, sample, t, &eps_a)?)])
            })
            .infer(|_, _| Ok(vec![Space::from(BoolBox::new([])).with_batch_rank(true)])),
        )
        .graph_fn(
            GraphFn::new("epsilon_greedy", move |ctx, xs| {
                // Per item: u < epsilon(t) explores, with uniform random actions. The draws
                // are made on the host from the kernel's RNG (as `B::uniform` would), and
                // the actions are replaced there: one download and one upload per action,
                // and nothing at all when no item explores (most steps, once epsilon has
                // decayed).
                let sample = first_leaf::<B>(ctx.component(), &xs[0])?;
                let t = first_leaf::<B>(ctx.component(), &xs[1])?;
                let explore = explore_draws::<B>(ctx, sample, t, &eps_b)?;
                if !explore.contains(&true) {
                    return Ok(vec![xs[0].clone()]);
                }
                let component = ctx.component().to_string();
                let valid = match xs.get(2).map(|m| first_leaf::<B>(&component, m)) {
                    Some(mask) => Some(valid_rows::<B>(&component, mask?, explore.len())?),
                    None => None,
                };
                let out =
                    xs[0].try_map(&mut |key, leaf| {
                        let n = categories.get(key.trim_start_matches('/')).copied().ok_or_else(|| {
                            CoreError::Component {
                                component: component.clone(),
                                method: Some("get_action".into()),
                                reason: format!("the action space has no action at {key:?}"),
                            }
                        })?;
                        let mut actions = B::to_host(leaf)?;
                        let per_item = actions.data.len() / explore.len().max(1);
                        let rng = ctx.rng();
                        // Per exploring item: any action, or a uniformly drawn valid one.
                        let mut draw = |item: usize| match valid.as_ref().and_then(|v| v.get(item)) {
                            Some(choices) => choices[rng.random_range(0..choices.len())] as i64,
                            None => rng.random_range(0..n as i64),
                        };
                        match &mut actions.data {
                            HostData::I64(v) => replace_rows(v, per_item, &explore, &mut draw),
                            HostData::U8(v) => replace_rows(v, per_item, &explore, &mut |i| draw(i) as u8),
                            HostData::F32(v) => replace_rows(v, per_item, &explore, &mut |i| draw(i) as f32),
                            HostData::F64(v) => replace_rows(v, per_item, &explore, &mut |i| draw(i) as f64),
                        }
                        B::from_host(&actions, ctx.device())
                    })?;
                Ok(vec![out])
            })
            .infer_same(),
        ))
}

/// Per batch item of a mask `[batch, n]`: the valid actions (non-zero entries); an error for a
/// batch of another size or an item with none.
fn valid_rows<B: Backend>(component: &str, mask: &B::Tensor, batch: usize) -> Result<Vec<Vec<usize>>> {
    let bad = |reason: String| CoreError::Component {
        component: component.into(),
        method: Some("get_action".into()),
        reason,
    };
    let shape = B::shape(mask);
    if shape.len() != 2 || shape[0] != batch {
        return Err(bad(format!(
            "expected an action mask of shape [{batch}, n], got {shape:?}"
        )));
    }
    let host = B::to_host(mask)?.data.to_f64();
    host.chunks(shape[1].max(1))
        .enumerate()
        .map(|(i, row)| {
            let valid = crate::action_mask::valid_actions(row);
            match valid.is_empty() {
                true => Err(bad(format!("item {i}'s action mask allows no action"))),
                false => Ok(valid),
            }
        })
        .collect()
}

/// The first leaf of `tree` (the one whose batch size decides the draws).
fn first_leaf<'t, B: Backend>(component: &str, tree: &'t Tree<B::Tensor>) -> Result<&'t B::Tensor> {
    tree.first_leaf().ok_or_else(|| CoreError::Component {
        component: component.into(),
        method: Some("get_action".into()),
        reason: "an empty container has no batch to explore".into(),
    })
}

/// Overwrites the `per_item` values of each exploring item of `data` with draws for that item.
fn replace_rows<T>(data: &mut [T], per_item: usize, explore: &[bool], draw: &mut impl FnMut(usize) -> T) {
    for (i, row) in data.chunks_mut(per_item.max(1)).enumerate() {
        if explore.get(i).copied().unwrap_or(false) {
            row.iter_mut().for_each(|x| *x = draw(i));
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
