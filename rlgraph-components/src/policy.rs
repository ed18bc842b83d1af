//! Policies: a neural network, an action adapter (a dense layer sized for the action space)
//! and a distribution, for one discrete (IntBox: Categorical) or continuous (FloatBox: Normal,
//! or squashed into shared finite bounds) action space, or one of each per leaf of a Dict or
//! Tuple action space (a joint distribution). The dueling Q-network policy is in
//! [`mod@crate::dueling_policy`].

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Initializer, Param, Result, Tree, VarDecl};

use crate::action_adapter::{action_adapter, AdapterSpec};
use crate::distributions::{distribution, Kind};
use crate::layers::{dense, DenseSpec};
use crate::nest::join_like;
use crate::network::neural_network;

/// The policy variable that holds a state-independent log-std.
const LOG_STD: &str = "log-std";

/// How the adapter's outputs become distribution parameters for an action space.
#[derive(Clone, Debug, PartialEq)]
struct ActionShape {
    kind: Kind,
    /// The action's own shape (no batch rank).
    shape: Vec<usize>,
    /// Categories per action element (Categorical only).
    categories: usize,
    /// The Normal's log-std is the policy's variable `log-std`, starting at this value, rather
    /// than half the adapter's outputs.
    free_log_std: Option<f64>,
}

/// The distribution a policy puts on FloatBox actions with finite bounds shared by every
/// element (RLgraph's `bounded_distribution_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BoundedDistribution {
    /// A Normal squashed into the bounds by `tanh` (SAC's).
    #[default]
    Squashed,
    /// A Beta scaled to the bounds.
    Beta,
    /// A plain Normal, whose samples may leave the bounds: environments then clip them
    /// (Gymnasium's `ClipAction`, as SB3's and CleanRL's continuous PPO do), and the agent
    /// learns from what it sampled.
    Normal,
}

impl BoundedDistribution {
    /// The distribution RLgraph's `bounded_distribution_type` names: `squashed` (or
    /// `squashed-normal`), `beta` or `normal`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "squashed" | "squashed-normal" | "squashed_normal" => Some(BoundedDistribution::Squashed),
            "beta" => Some(BoundedDistribution::Beta),
            "normal" => Some(BoundedDistribution::Normal),
            _ => None,
        }
    }
}

/// Which distribution a policy puts on bounded continuous and on discrete actions, and how
/// its action adapter is built.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyOptions {
    /// The distribution of bounded FloatBox actions.
    pub bounded: BoundedDistribution,
    /// With a value, a Normal policy's log-std is one trainable number per action element,
    /// starting at this value, independent of the state (SB3's `log_std_init`, CleanRL's
    /// `actor_logstd`); without, it is half the action adapter's outputs.
    pub state_independent_log_std: Option<f64>,
    /// IntBox actions get a Gumbel-softmax of this temperature rather than a Categorical;
    /// its actions are then probability vectors over the categories.
    pub gumbel_softmax_temperature: Option<f64>,
    /// RLgraph's `action_adapter_spec` (see [`action_adapter`]); for container actions it may
    /// be a dict of such specs keyed by the action space's keys.
    pub action_adapter: Option<AdapterSpec>,
}

impl ActionShape {
    fn with_options(action_space: &Space, options: &PolicyOptions) -> Result<Self> {
        let shape = action_space.shape().unwrap_or(&[]).to_vec();
        match action_space {
            _ if options.state_independent_log_std.is_some() && !normal_actions(action_space, options) => {
                Err(CoreError::Config {
                    at: "log_std_init".into(),
                    reason: format!(
                        "a state-independent log-std belongs to a Normal policy (FloatBox actions, unbounded or \
                         with bounded_distribution_type \"normal\" or \"squashed\"), not to actions in {action_space}"
                    ),
                })
            }
            Space::Int(_) => {
                let n = action_space.num_categories().ok_or_else(|| unsupported(action_space))?;
                Ok(ActionShape {
                    kind: match options.gumbel_softmax_temperature {
                        Some(temperature) => Kind::GumbelSoftmax { temperature },
                        None => Kind::Categorical,
                    },
                    shape,
                    categories: n as usize,
                    free_log_std: None,
                })
            }
            // RLgraph's BernoulliDistributionAdapter: one logit per element, sigmoid to a
            // probability.
            Space::Bool(_) => Ok(ActionShape {
                kind: Kind::Bernoulli,
                shape,
                categories: 0,
                free_log_std: None,
            }),
            Space::Float(_) => Ok(ActionShape {
                kind: match (squashed_bounds(action_space), options.bounded) {
                    (Some((low, high)), BoundedDistribution::Beta) => Kind::Beta { low, high },
                    (Some((low, high)), BoundedDistribution::Squashed) => Kind::SquashedNormal { low, high },
                    _ => Kind::Normal,
                },
                shape,
                categories: 0,
                free_log_std: options.state_independent_log_std,
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
            Kind::Normal | Kind::SquashedNormal { .. } if self.free_log_std.is_some() => self.elements(),
            Kind::Normal | Kind::SquashedNormal { .. } | Kind::Beta { .. } => 2 * self.elements(),
            Kind::Bernoulli => self.elements(),
            _ => self.elements() * self.categories,
        }
    }
}

/// Whether `options` put a Normal (plain or squashed) on `action_space`'s actions.
fn normal_actions(action_space: &Space, options: &PolicyOptions) -> bool {
    matches!(action_space, Space::Float(_))
        && !(options.bounded == BoundedDistribution::Beta && squashed_bounds(action_space).is_some())
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
        reason: format!(
            "policies support a bounded IntBox, a FloatBox, a BoolBox, or a Dict or Tuple of them, not {space}"
        ),
    }
}

/// A policy named `name` over `action_space`, with API methods `get_nn_outputs`,
/// `get_adapter_outputs` (the distribution parameters), `get_action`,
/// `get_deterministic_action`, `get_action_and_log_likelihood`, `get_log_likelihood` and
/// `get_entropy`, all taking `nn_inputs` (and `actions` where they need them).
pub fn policy<B: Backend>(name: &str, layers: Vec<Component<B>>, action_space: &Space) -> Result<Component<B>> {
    policy_with(name, layers, action_space, PolicyOptions::default())
}

/// A [`policy`] with other distributions for bounded or discrete actions.
///
/// Over one discrete action (a Categorical or Gumbel-softmax), every method also takes an
/// optional last input `action_mask` (`[batch, categories]`, non-zero where the action is
/// valid; see [`crate::action_mask`]): the masked logits are [`crate::action_mask::MASKED_VALUE`],
/// so sampling, the greedy action, log-likelihoods and the entropy see the valid actions only.
pub fn policy_with<B: Backend>(
    name: &str,
    layers: Vec<Component<B>>,
    action_space: &Space,
    options: PolicyOptions,
) -> Result<Component<B>> {
    if action_space.is_container() {
        return joint_policy(name, layers, action_space, options);
    }
    let a = ActionShape::with_options(action_space, &options)?;
    let units = a.units();
    let kind = a.kind;
    let maskable = matches!(kind, Kind::Categorical | Kind::GumbelSoftmax { .. }) && a.shape.is_empty();
    let categories = a.categories;
    let mask = || Param::optional("action_mask");
    let c = Component::new(name)
        .with_kind("policy")
        .with_sub(neural_network("neural-network", layers))
        .with_sub(action_adapter::<B>(
            "action-adapter",
            units,
            options.action_adapter.as_ref(),
        )?)
        .with_sub(distribution("distribution", kind))
        .api("get_nn_outputs", vec![Param::new("nn_inputs")], |ctx, args| {
            ctx.call("neural-network", "call", &[args.get(0)?])
        })
        .api(
            "get_adapter_outputs",
            vec![Param::new("nn_inputs"), mask()],
            |ctx, args| {
                let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
                let out = ctx.call("action-adapter", "call", &h)?;
                let p = ctx.graph_fn1("parameters", &out)?;
                match args.opt(1) {
                    Some(m) => ctx.graph_fn("mask", &[p, m]),
                    None => Ok(vec![p]),
                }
            },
        )
        .check_inputs(move |s| match s.try_get("action_mask") {
            Some(_) if !maskable => Err(s.mismatch(
                "action_mask",
                "no mask: action masks apply to one discrete action (a Categorical or Gumbel-softmax policy of shape [])",
            )),
            Some(m) if !(m.has_batch_rank() && m.shape() == Some(&[categories][..])) => Err(s.mismatch(
                "action_mask",
                format!("a batch of masks of shape [{categories}], one element per action"),
            )),
            _ => Ok(()),
        })
        .graph_fn(parameters_fn::<B>("parameters", a.clone()))
        .graph_fn(crate::action_mask::apply_mask_fn::<B>("mask"));
    let c = match a.free_log_std {
        Some(init) => {
            let shape = a.shape.clone();
            c.variables(move |_| Ok(vec![VarDecl::new(LOG_STD, shape.clone(), Initializer::Constant(init))]))
        }
        None => c,
    };
    // The distribution parameters of `nn_inputs`, masked where the method was given a mask
    // (its input `mask_at`).
    let params = |ctx: &mut rlgraph_core::ApiCtx<'_, B>, args: &rlgraph_core::Args, mask_at: usize| {
        let mut inputs = vec![args.get(0)?];
        inputs.extend(args.opt(mask_at));
        Ok::<_, CoreError>(ctx.call_own("get_adapter_outputs", &inputs)?[0])
    };
    Ok(
        c.api("get_action", vec![Param::new("nn_inputs"), mask()], move |ctx, args| {
            let p = params(ctx, args, 1)?;
            ctx.call("distribution", "sample_stochastic", &[p])
        })
        .api(
            "get_deterministic_action",
            vec![Param::new("nn_inputs"), mask()],
            move |ctx, args| {
                let p = params(ctx, args, 1)?;
                ctx.call("distribution", "sample_deterministic", &[p])
            },
        )
        .api(
            "get_action_and_log_likelihood",
            vec![Param::new("nn_inputs"), mask()],
            move |ctx, args| {
                let p = params(ctx, args, 1)?;
                ctx.call("distribution", "sample_and_log_prob", &[p])
            },
        )
        .api(
            "get_log_likelihood",
            vec![Param::new("nn_inputs"), Param::new("actions"), mask()],
            move |ctx, args| {
                let p = params(ctx, args, 2)?;
                ctx.call("distribution", "log_prob", &[p, args.get(1)?])
            },
        )
        .api(
            "get_entropy",
            vec![Param::new("nn_inputs"), mask()],
            move |ctx, args| {
                let p = params(ctx, args, 1)?;
                ctx.call("distribution", "entropy", &[p])
            },
        ),
    )
}

/// The graph function `name` that turns an action adapter's flat outputs into the
/// distribution parameters of `shape`: `(mean, stddev)` for the Normals, `(alpha, beta)` for
/// the Beta, probabilities for the Bernoulli, logits otherwise.
fn parameters_fn<B: Backend>(name: &str, shape: ActionShape) -> GraphFn<B> {
    let (to_params, infer_params) = (shape.clone(), shape);
    GraphFn::new(name, move |ctx, xs| {
        let out = xs[0].as_leaf().ok_or_else(|| CoreError::Component {
            component: "policy".into(),
            method: None,
            reason: "adapter output must be a tensor".into(),
        })?;
        let batch = B::shape(out)[0];
        let mut shape = vec![batch];
        shape.extend_from_slice(&to_params.shape);
        Ok(vec![match to_params.kind {
            Kind::Beta { .. } => {
                // alpha, beta = softplus(x) + 1 > 1: unimodal Betas (RLgraph's adapter).
                let n = to_params.elements();
                let positive = |t: B::Tensor| -> Result<B::Tensor> {
                    let soft = B::log(&B::affine(&B::exp(&B::clamp(&t, -30.0, 30.0)?)?, 1.0, 1.0)?)?;
                    B::reshape(&B::affine(&soft, 1.0, 1.0)?, &shape)
                };
                Tree::Tuple(vec![
                    Tree::Leaf(positive(B::narrow(out, 1, 0, n)?)?),
                    Tree::Leaf(positive(B::narrow(out, 1, n, n)?)?),
                ])
            }
            Kind::Normal | Kind::SquashedNormal { .. } if to_params.free_log_std.is_some() => {
                let mean = B::reshape(out, &shape)?;
                let std = B::exp(&B::clamp(ctx.var(LOG_STD)?, -20.0, 2.0)?)?;
                Tree::Tuple(vec![Tree::Leaf(mean), Tree::Leaf(B::broadcast_to(&std, &shape)?)])
            }
            Kind::Normal | Kind::SquashedNormal { .. } => {
                let n = to_params.elements();
                let mean = B::reshape(&B::narrow(out, 1, 0, n)?, &shape)?;
                // exp of a clamped log-std keeps the scale finite and positive.
                let std = B::exp(&B::clamp(&B::narrow(out, 1, n, n)?, -20.0, 2.0)?)?;
                Tree::Tuple(vec![Tree::Leaf(mean), Tree::Leaf(B::reshape(&std, &shape)?)])
            }
            Kind::Bernoulli => Tree::Leaf(B::sigmoid(&B::reshape(out, &shape)?)?),
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
            Kind::Normal | Kind::SquashedNormal { .. } | Kind::Beta { .. } => {
                let s = Space::from(FloatBox::new(shape)).with_ranks(ranks);
                Space::tuple(vec![s.clone(), s])
            }
            Kind::Bernoulli => Space::from(FloatBox::bounded(shape, 0.0, 1.0)?).with_ranks(ranks),
            _ => {
                shape.push(infer_params.categories);
                Space::from(FloatBox::new(shape)).with_ranks(ranks)
            }
        }])
    })
}

/// A policy over a Dict or Tuple action space: one action adapter and distribution per leaf
/// (`action-adapter-0`, `distribution-0`, ... in flat-key order) on one shared network, and
/// the joint distribution of independent leaves (RLgraph's `JointCumulativeDistribution`).
/// Actions come as values of the container space; log-likelihoods and entropies are one
/// number per batch item, summed over leaves and their elements.
fn joint_policy<B: Backend>(
    name: &str,
    layers: Vec<Component<B>>,
    action_space: &Space,
    options: PolicyOptions,
) -> Result<Component<B>> {
    if options.state_independent_log_std.is_some() {
        return Err(CoreError::Config {
            at: "log_std_init".into(),
            reason: format!("a state-independent log-std is built for one FloatBox action, not for {action_space}"),
        });
    }
    let leaves: Vec<(String, Space)> = action_space
        .flatten()
        .into_iter()
        .map(|(k, s)| (k, s.with_batch_rank(false)))
        .collect();
    let shapes = leaves
        .iter()
        .map(|(k, s)| {
            ActionShape::with_options(s, &options).map_err(|_| CoreError::Config {
                at: format!("action_space{k}"),
                reason: format!("policies support bounded IntBox or FloatBox leaves, not {s}"),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let n = leaves.len();
    let mut c = Component::new(name)
        .with_kind("joint-policy")
        .with_sub(neural_network("neural-network", layers));
    let adapters = options.action_adapter.as_ref();
    let keys: Vec<&str> = leaves.iter().map(|(k, _)| k.trim_start_matches('/')).collect();
    if let Some(a) = adapters {
        a.check_keys(&keys)?;
    }
    for (i, shape) in shapes.iter().enumerate() {
        let adapter = adapters.and_then(|a| a.for_action(keys[i]));
        c = c
            .with_sub(action_adapter::<B>(
                &format!("action-adapter-{i}"),
                shape.units(),
                adapter.as_ref(),
            )?)
            .with_sub(distribution(&format!("distribution-{i}"), shape.kind))
            .graph_fn(parameters_fn::<B>(&format!("parameters-{i}"), shape.clone()));
    }
    let c = c
        .graph_fn(join_like::<B>("join", &action_space.with_batch_rank(false)))
        .graph_fn(
            GraphFn::new("split", move |_, xs: &[Tree<B::Tensor>]| {
                Ok(xs[0]
                    .flatten()
                    .into_iter()
                    .map(|(_, t)| Tree::Leaf(t.clone()))
                    .collect())
            })
            .outputs(n)
            .infer(|_, s| {
                let ranks = s[0].flatten().first().and_then(|(_, l)| l.ranks()).unwrap_or_default();
                Ok(s[0].flatten().into_iter().map(|(_, l)| l.with_ranks(ranks)).collect())
            }),
        )
        .graph_fn(sum_item_dims::<B>("per_item"))
        .graph_fn(
            GraphFn::tensors("sum", |_, xs: &[&B::Tensor]| {
                let mut total = xs[0].clone();
                for x in &xs[1..] {
                    total = B::add(&total, x)?;
                }
                Ok(vec![total])
            })
            .infer(|_, s| Ok(vec![s[0].clone()])),
        );
    // Per-leaf parameters from the shared network output.
    fn params<B: Backend>(
        ctx: &mut rlgraph_core::ApiCtx<'_, B>,
        x: rlgraph_core::Op,
        n: usize,
    ) -> Result<Vec<rlgraph_core::Op>> {
        let h = ctx.call("neural-network", "call", &[x])?;
        (0..n)
            .map(|i| {
                let out = ctx.call(&format!("action-adapter-{i}"), "call", &h[..1])?;
                ctx.graph_fn1(&format!("parameters-{i}"), &out)
            })
            .collect()
    }
    // The per-item sum over leaves of a per-leaf result.
    fn summed<B: Backend>(
        ctx: &mut rlgraph_core::ApiCtx<'_, B>,
        per_leaf: Vec<rlgraph_core::Op>,
    ) -> Result<rlgraph_core::Op> {
        let items = per_leaf
            .into_iter()
            .map(|op| ctx.graph_fn1("per_item", &[op]))
            .collect::<Result<Vec<_>>>()?;
        ctx.graph_fn1("sum", &items)
    }
    let sample = move |method: &'static str| {
        move |ctx: &mut rlgraph_core::ApiCtx<'_, B>, args: &rlgraph_core::Args| {
            let p = params(ctx, args.get(0)?, n)?;
            let actions = (0..n)
                .map(|i| Ok(ctx.call(&format!("distribution-{i}"), method, &[p[i]])?[0]))
                .collect::<Result<Vec<_>>>()?;
            Ok(vec![ctx.graph_fn1("join", &actions)?])
        }
    };
    Ok(c.api("get_nn_outputs", vec![Param::new("nn_inputs")], |ctx, args| {
        ctx.call("neural-network", "call", &[args.get(0)?])
    })
    .api(
        "get_adapter_outputs",
        vec![Param::new("nn_inputs")],
        move |ctx, args| {
            let p = params(ctx, args.get(0)?, n)?;
            Ok(vec![ctx.graph_fn1("join", &p)?])
        },
    )
    .api("get_action", vec![Param::new("nn_inputs")], sample("sample_stochastic"))
    .api(
        "get_deterministic_action",
        vec![Param::new("nn_inputs")],
        sample("sample_deterministic"),
    )
    .api(
        "get_action_and_log_likelihood",
        vec![Param::new("nn_inputs")],
        move |ctx, args| {
            let p = params(ctx, args.get(0)?, n)?;
            let (mut actions, mut lps) = (vec![], vec![]);
            for (i, pi) in p.iter().enumerate() {
                let out = ctx.call(&format!("distribution-{i}"), "sample_and_log_prob", &[*pi])?;
                actions.push(out[0]);
                lps.push(out[1]);
            }
            let joined = ctx.graph_fn1("join", &actions)?;
            Ok(vec![joined, summed(ctx, lps)?])
        },
    )
    .api(
        "get_log_likelihood",
        vec![Param::new("nn_inputs"), Param::new("actions")],
        move |ctx, args| {
            let p = params(ctx, args.get(0)?, n)?;
            let actions = ctx.graph_fn("split", &[args.get(1)?])?;
            let lps = (0..n)
                .map(|i| Ok(ctx.call(&format!("distribution-{i}"), "log_prob", &[p[i], actions[i]])?[0]))
                .collect::<Result<Vec<_>>>()?;
            Ok(vec![summed(ctx, lps)?])
        },
    )
    .api("get_entropy", vec![Param::new("nn_inputs")], move |ctx, args| {
        let p = params(ctx, args.get(0)?, n)?;
        let hs = (0..n)
            .map(|i| Ok(ctx.call(&format!("distribution-{i}"), "entropy", &[p[i]])?[0]))
            .collect::<Result<Vec<_>>>()?;
        Ok(vec![summed(ctx, hs)?])
    }))
}

/// A graph function `name` that sums every dimension after the batch dimension: one number
/// per item (a multi-dimensional action's log-likelihood is the sum over its independent
/// dimensions).
pub fn sum_item_dims<B: Backend>(name: &str) -> GraphFn<B> {
    GraphFn::tensors(name, |_, xs| {
        let rank = B::shape(xs[0]).len();
        Ok(vec![if rank > 1 {
            B::sum(xs[0], &(1..rank).collect::<Vec<_>>(), false)?
        } else {
            xs[0].clone()
        }])
    })
    .infer(|_, s| {
        Ok(vec![
            Space::from(FloatBox::new(Vec::<usize>::new())).with_ranks(s[0].ranks().unwrap_or_default())
        ])
    })
}

/// A state-value network named `name`: `value_output(nn_inputs)` = `dense(1)(network(x))`,
/// one value per batch item.
pub fn value_function<B: Backend>(name: &str, layers: Vec<Component<B>>) -> Component<B> {
    Component::new(name)
        .with_kind("value-function")
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
    options: PolicyOptions,
) -> Result<Component<B>> {
    Ok(policy_with(name, layers, action_space, options)?
        .with_sub(dense("value-function-node", DenseSpec::new(1)))
        .api("get_state_values", vec![Param::new("nn_inputs")], |ctx, args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            let v = ctx.call("value-function-node", "call", &h)?;
            ctx.graph_fn("squeeze", &v)
        })
        .graph_fn(squeeze_last::<B>()))
}
