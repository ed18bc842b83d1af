//! Policies: a neural network, an action adapter (a dense layer sized for the action space)
//! and a distribution, for one discrete (IntBox: Categorical) or continuous (FloatBox: Normal)
//! action space; and the dueling Q-network policy of Wang et al. (2016) for DQN.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Param, Result, Tree};

use crate::activation::Activation;
use crate::distributions::{distribution, Kind};
use crate::layers::{dense, DenseSpec};
use crate::network::neural_network;

/// How the adapter's outputs become distribution parameters for an action space.
#[derive(Clone, Debug, PartialEq)]
struct ActionShape {
    kind: Kind,
    /// The action's own shape (no batch rank).
    shape: Vec<usize>,
    /// Categories per action element (Categorical only).
    categories: usize,
}

impl ActionShape {
    fn of(action_space: &Space) -> Result<Self> {
        let shape = action_space.shape().unwrap_or(&[]).to_vec();
        match action_space {
            Space::Int(_) => {
                let n = action_space.num_categories().ok_or_else(|| unsupported(action_space))?;
                Ok(ActionShape {
                    kind: Kind::Categorical,
                    shape,
                    categories: n as usize,
                })
            }
            Space::Float(_) => Ok(ActionShape {
                kind: squashed_bounds(action_space)
                    .map_or(Kind::Normal, |(low, high)| Kind::SquashedNormal { low, high }),
                shape,
                categories: 0,
            }),
            other => Err(unsupported(other)),
        }
    }

    fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// The adapter's output units.
    fn units(&self) -> usize {
        match self.kind {
            Kind::Normal | Kind::SquashedNormal { .. } => 2 * self.elements(),
            _ => self.elements() * self.categories,
        }
    }
}

/// Finite bounds shared by every element of a FloatBox `space`, which squash the policy's
/// Normal into them (as SAC needs); `None` for other spaces, unbounded boxes and boxes whose
/// elements differ.
pub fn squashed_bounds(space: &Space) -> Option<(f64, f64)> {
    let Space::Float(f) = space else { return None };
    let n: usize = space.shape().unwrap_or(&[]).iter().product();
    let (low, high) = f.bounds_of(0);
    let same = (1..n.max(1)).all(|i| f.bounds_of(i) == (low, high));
    (same && low.is_finite() && high.is_finite()).then_some((low, high))
}

fn unsupported(space: &Space) -> CoreError {
    CoreError::Config {
        at: "action_space".into(),
        reason: format!("policies support a bounded IntBox or a FloatBox action space for now, not {space}"),
    }
}

/// A policy named `name` over `action_space`, with API methods `get_nn_outputs`,
/// `get_adapter_outputs` (the distribution parameters), `get_action`,
/// `get_deterministic_action`, `get_action_and_log_likelihood`, `get_log_likelihood` and
/// `get_entropy`, all taking `nn_inputs` (and `actions` where they need them).
pub fn policy<B: Backend>(name: &str, layers: Vec<Component<B>>, action_space: &Space) -> Result<Component<B>> {
    let a = ActionShape::of(action_space)?;
    let units = a.units();
    let (kind, to_params) = (a.kind, a.clone());
    let infer_params = a.clone();
    let c = Component::new(name)
        .with_sub(neural_network("neural-network", layers))
        .with_sub(dense(
            "action-adapter",
            DenseSpec {
                activation: Activation::Linear,
                ..DenseSpec::new(units)
            },
        ))
        .with_sub(distribution("distribution", kind))
        .api("get_nn_outputs", vec![Param::new("nn_inputs")], |ctx, args| {
            ctx.call("neural-network", "call", &[args.get(0)?])
        })
        .api("get_adapter_outputs", vec![Param::new("nn_inputs")], |ctx, args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            let out = ctx.call("action-adapter", "call", &h)?;
            ctx.graph_fn("parameters", &out)
        })
        .graph_fn(
            GraphFn::new("parameters", move |_, xs| {
                let out = xs[0].as_leaf().ok_or_else(|| CoreError::Component {
                    component: "policy".into(),
                    method: None,
                    reason: "adapter output must be a tensor".into(),
                })?;
                let batch = B::shape(out)[0];
                let mut shape = vec![batch];
                shape.extend_from_slice(&to_params.shape);
                Ok(vec![match to_params.kind {
                    Kind::Normal | Kind::SquashedNormal { .. } => {
                        let n = to_params.elements();
                        let mean = B::reshape(&B::narrow(out, 1, 0, n)?, &shape)?;
                        // exp of a clamped log-std keeps the scale finite and positive.
                        let std = B::exp(&B::clamp(&B::narrow(out, 1, n, n)?, -20.0, 2.0)?)?;
                        Tree::Tuple(vec![Tree::Leaf(mean), Tree::Leaf(B::reshape(&std, &shape)?)])
                    }
                    _ => {
                        shape.push(to_params.categories);
                        Tree::Leaf(B::reshape(out, &shape)?)
                    }
                }])
            })
            .infer(move |_, spaces| {
                let ranks = spaces[0].ranks().unwrap_or_default();
                let mut shape = infer_params.shape.clone();
                Ok(vec![match infer_params.kind {
                    Kind::Normal | Kind::SquashedNormal { .. } => {
                        let s = Space::from(FloatBox::new(shape)).with_ranks(ranks);
                        Space::tuple(vec![s.clone(), s])
                    }
                    _ => {
                        shape.push(infer_params.categories);
                        Space::from(FloatBox::new(shape)).with_ranks(ranks)
                    }
                }])
            }),
        );
    let params = |ctx: &mut rlgraph_core::ApiCtx<'_, B>, x: rlgraph_core::Op| -> Result<rlgraph_core::Op> {
        Ok(ctx.call_own("get_adapter_outputs", &[x])?[0])
    };
    Ok(c.api("get_action", vec![Param::new("nn_inputs")], move |ctx, args| {
        let p = params(ctx, args.get(0)?)?;
        ctx.call("distribution", "sample_stochastic", &[p])
    })
    .api(
        "get_deterministic_action",
        vec![Param::new("nn_inputs")],
        move |ctx, args| {
            let p = params(ctx, args.get(0)?)?;
            ctx.call("distribution", "sample_deterministic", &[p])
        },
    )
    .api(
        "get_action_and_log_likelihood",
        vec![Param::new("nn_inputs")],
        move |ctx, args| {
            let p = params(ctx, args.get(0)?)?;
            ctx.call("distribution", "sample_and_log_prob", &[p])
        },
    )
    .api(
        "get_log_likelihood",
        vec![Param::new("nn_inputs"), Param::new("actions")],
        move |ctx, args| {
            let p = params(ctx, args.get(0)?)?;
            ctx.call("distribution", "log_prob", &[p, args.get(1)?])
        },
    )
    .api("get_entropy", vec![Param::new("nn_inputs")], move |ctx, args| {
        let p = params(ctx, args.get(0)?)?;
        ctx.call("distribution", "entropy", &[p])
    }))
}

/// The dueling Q-network policy named `name` for `num_actions` discrete actions:
/// `q = v + a - mean(a)`, with a state-value stream (a ReLU layer of `units_state_value_stream`
/// units, then one output) and an advantage stream (the action adapter). API methods:
/// `get_q_values(nn_inputs)` -> (state values, advantages, q-values), and
/// `get_action(nn_inputs)` -> the greedy action.
pub fn dueling_policy<B: Backend>(
    name: &str,
    layers: Vec<Component<B>>,
    num_actions: usize,
    units_state_value_stream: usize,
) -> Component<B> {
    Component::new(name)
        .with_sub(neural_network("neural-network", layers))
        .with_sub(dense(
            "dense-layer-state-value-stream",
            DenseSpec {
                activation: Activation::Relu,
                ..DenseSpec::new(units_state_value_stream)
            },
        ))
        .with_sub(dense("state-value-node", DenseSpec::new(1)))
        .with_sub(dense("action-adapter", DenseSpec::new(num_actions)))
        .api("get_q_values", vec![Param::new("nn_inputs")], |ctx, args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            let v = ctx.call("dense-layer-state-value-stream", "call", &h)?;
            let v = ctx.call("state-value-node", "call", &v)?;
            let a = ctx.call("action-adapter", "call", &h)?;
            ctx.graph_fn("dueling", &[v[0], a[0]])
        })
        .api("get_action", vec![Param::new("nn_inputs")], |ctx, args| {
            let q = ctx.call_own("get_q_values", &[args.get(0)?])?;
            ctx.graph_fn("greedy", &[q[2]])
        })
        .graph_fn(
            GraphFn::tensors("dueling", |_, xs| {
                let (v, a) = (xs[0], xs[1]);
                let q = B::add(v, &B::sub(a, &B::mean(a, &[1], true)?)?)?;
                Ok(vec![B::squeeze(v, 1)?, a.clone(), q])
            })
            .outputs(3)
            .infer(|_, s| {
                let ranks = s[1].ranks().unwrap_or_default();
                Ok(vec![
                    Space::from(FloatBox::new([])).with_ranks(ranks),
                    s[1].clone(),
                    s[1].clone(),
                ])
            }),
        )
        .graph_fn(
            GraphFn::tensors("greedy", |_, xs| Ok(vec![B::argmax(xs[0], 1, false)?])).infer(move |_, s| {
                Ok(vec![Space::from(rlgraph_core::spaces::IntBox::new(
                    num_actions as i64,
                )?)
                .with_ranks(s[0].ranks().unwrap_or_default())])
            }),
        )
}

/// A state-value network named `name`: `value_output(nn_inputs)` = `dense(1)(network(x))`,
/// one value per batch item.
pub fn value_function<B: Backend>(name: &str, layers: Vec<Component<B>>) -> Component<B> {
    Component::new(name)
        .with_sub(neural_network("neural-network", layers))
        .with_sub(dense("value-function-node", DenseSpec::new(1)))
        .api("value_output", vec![Param::new("nn_inputs")], |ctx, args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            let v = ctx.call("value-function-node", "call", &h)?;
            ctx.graph_fn("squeeze", &v)
        })
        .graph_fn(squeeze_last::<B>())
}

fn squeeze_last<B: Backend>() -> GraphFn<B> {
    GraphFn::tensors("squeeze", |_, xs| {
        Ok(vec![B::squeeze(xs[0], B::shape(xs[0]).len() - 1)?])
    })
    .infer(|_, s| {
        Ok(vec![
            Space::from(FloatBox::new([])).with_ranks(s[0].ranks().unwrap_or_default())
        ])
    })
}

/// A [`policy`] whose network also feeds a state-value head (RLgraph's
/// `SharedValueFunctionPolicy`): every policy method, plus `get_state_values(nn_inputs)`.
pub fn shared_value_function_policy<B: Backend>(
    name: &str,
    layers: Vec<Component<B>>,
    action_space: &Space,
) -> Result<Component<B>> {
    Ok(policy(name, layers, action_space)?
        .with_sub(dense("value-function-node", DenseSpec::new(1)))
        .api("get_state_values", vec![Param::new("nn_inputs")], |ctx, args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            let v = ctx.call("value-function-node", "call", &h)?;
            ctx.graph_fn("squeeze", &v)
        })
        .graph_fn(squeeze_last::<B>()))
}
