//! The DQN loss (Mnih et al. 2015), with double Q (van Hasselt et al. 2016), Huber loss,
//! n-step discounting, importance weights, and multi-dimensional or container actions. By
//! default container actions follow RLgraph: the TD errors of all action dimensions and
//! components are averaged per item before squaring. [`ContainerLoss::PerAction`] squares
//! each action's TD error first (the branching loss of Tavakoli et al. 2018).

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Component, DType, GraphFn, Param, Result, Tree};

use super::{bad_input, loss_component, mean_per_item, not_terminal, per_batch};
use crate::distributions::scalar;

/// The settings of a DQN loss.
#[derive(Clone, Debug, PartialEq)]
pub struct DqnLossSpec {
    /// Gamma (RLgraph's default 0.98).
    pub discount: f64,
    /// Choose the next action with the online net, value it with the target net.
    pub double_q: bool,
    /// Huber (delta 1) instead of half the squared error.
    pub huber_loss: bool,
    /// Multiply each item's loss by an `importance_weights` input.
    pub importance_weights: bool,
    /// The bootstrap is discounted by `discount^n_step` (rewards are n-step returns).
    pub n_step: u32,
    /// How the TD errors of several action elements (container or multi-dimensional
    /// actions) make one loss per item.
    pub container_loss: ContainerLoss,
    /// RLgraph's `shared_container_action_target`: every action element regresses onto the
    /// mean of their TD targets. Under [`ContainerLoss::AverageTd`] this changes nothing
    /// (the mean of the errors is the same either way), as in RLgraph.
    pub shared_container_action_target: bool,
}

/// How a DQN loss combines the TD errors of several action elements into one loss per item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContainerLoss {
    /// RLgraph's: the TD errors are averaged, then squared (or Huber'd) once. Only the mean
    /// of the chosen Q-values is regressed, so the heads are free to drift apart.
    #[default]
    AverageTd,
    /// Each element's TD error is squared (or Huber'd), then the losses are averaged: every
    /// head is regressed on its own (Tavakoli et al. 2018, "Action Branching Architectures").
    PerAction,
}

impl ContainerLoss {
    /// The names a config uses: `average_td` (RLgraph's default) or `per_action`.
    pub fn parse(name: &str, at: &str) -> Result<Self> {
        match name {
            "average_td" => Ok(ContainerLoss::AverageTd),
            "per_action" => Ok(ContainerLoss::PerAction),
            other => Err(rlgraph_core::CoreError::Config {
                at: at.into(),
                reason: format!("{other:?} is not a container loss; use \"average_td\" (RLgraph's) or \"per_action\""),
            }),
        }
    }
}

impl Default for DqnLossSpec {
    fn default() -> Self {
        DqnLossSpec {
            discount: 0.98,
            double_q: false,
            huber_loss: false,
            importance_weights: false,
            n_step: 1,
            container_loss: ContainerLoss::AverageTd,
            shared_container_action_target: true,
        }
    }
}

/// A DQN loss. Parameters: `q_values_s`, `actions`, `rewards`, `terminals`,
/// `qt_values_sp` (target net at s'), then `q_values_sp` (online net at s', double Q only)
/// and `importance_weights` (only when enabled). Q-values and actions may be containers
/// with the same keys (one Q head per action component).
pub fn dqn_loss<B: Backend>(name: &str, spec: DqnLossSpec) -> Component<B> {
    let mut params: Vec<Param> = ["q_values_s", "actions", "rewards", "terminals", "qt_values_sp"]
        .into_iter()
        .map(Param::new)
        .collect();
    if spec.double_q {
        params.push(Param::new("q_values_sp"));
    }
    if spec.importance_weights {
        params.push(Param::new("importance_weights"));
    }
    loss_component(
        "dqn-loss",
        name,
        params,
        GraphFn::new("per_item", move |ctx, args| {
            per_item::<B>(&spec, ctx.component(), args).map(|t| vec![Tree::Leaf(t)])
        }),
    )
    .check_inputs(|spaces| {
        let scalar_batch = |s: &Space| s.has_batch_rank() && s.shape() == Some(&[][..]);
        if spaces.try_get("terminals").is_some() {
            spaces.expect("terminals", "a BoolBox of scalars with a batch rank", |s| {
                matches!(s, Space::Bool(_)) && scalar_batch(s)
            })?;
        }
        if spaces.try_get("rewards").is_some() {
            spaces.expect("rewards", "a FloatBox of scalars with a batch rank", |s| {
                matches!(s, Space::Float(_)) && scalar_batch(s)
            })?;
        }
        if spaces.try_get("actions").is_some() {
            spaces.expect(
                "actions",
                "an IntBox (or a container of IntBoxes) with a batch rank",
                |s| {
                    s.flatten()
                        .iter()
                        .all(|(_, leaf)| matches!(leaf, Space::Int(_)) && leaf.has_batch_rank())
                },
            )?;
        }
        Ok(())
    })
}

fn leaves<B: Backend>(t: &Tree<B::Tensor>) -> Vec<(String, &B::Tensor)> {
    t.flatten()
}

fn per_item<B: Backend>(spec: &DqnLossSpec, component: &str, args: &[Tree<B::Tensor>]) -> Result<B::Tensor> {
    let leaf = |i: usize, what: &str| {
        args.get(i)
            .and_then(|t| t.as_leaf())
            .ok_or_else(|| bad_input(component, format!("{what} must be a single tensor")))
    };
    let q_s = leaves::<B>(&args[0]);
    let actions = leaves::<B>(&args[1]);
    let rewards = leaf(2, "rewards")?;
    let terminals = leaf(3, "terminals")?;
    let qt_sp = leaves::<B>(&args[4]);
    let q_sp = if spec.double_q {
        Some(leaves::<B>(&args[5]))
    } else {
        None
    };
    let weights = if spec.importance_weights {
        Some(leaf(if spec.double_q { 6 } else { 5 }, "importance_weights")?)
    } else {
        None
    };
    let keys = |l: &[(String, &B::Tensor)]| l.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    if keys(&q_s) != keys(&actions)
        || keys(&q_s) != keys(&qt_sp)
        || q_sp.as_ref().is_some_and(|q| keys(q) != keys(&q_s))
    {
        return Err(bad_input(
            component,
            format!(
                "q_values_s {:?}, actions {:?} and the next-state Q-values must have the same structure",
                keys(&q_s),
                keys(&actions)
            ),
        ));
    }
    let gamma_n = spec.discount.powi(spec.n_step as i32);
    // Per action: Q(s, a_taken) and the (constant) TD target, both [batch, ..shape].
    let mut taken = vec![];
    let mut targets = vec![];
    for (i, ((_, q), (_, a))) in q_s.iter().zip(&actions).enumerate() {
        let last = B::shape(q).len() - 1;
        let a = B::unsqueeze(&B::cast(a, DType::I64)?, last)?;
        let q_s_a = B::squeeze(&B::gather(q, last, &a)?, last)?;
        let qt = qt_sp[i].1;
        let qt_sp_ap = match &q_sp {
            Some(online) => {
                let best = B::argmax(online[i].1, last, true)?;
                B::squeeze(&B::gather(qt, last, &best)?, last)?
            }
            None => B::max(qt, last, false)?,
        };
        let rank = B::shape(&q_s_a).len();
        let alive = per_batch::<B>(&not_terminal::<B>(terminals, &q_s_a)?, rank)?;
        let target = B::add(
            &per_batch::<B>(rewards, rank)?,
            &B::mul(&B::affine(&alive, gamma_n, 0.0)?, &qt_sp_ap)?,
        )?;
        // The target is a constant: no gradient flows into the target net (or through s').
        targets.push(B::detach(&target));
        taken.push(q_s_a);
    }
    let n = taken.len();
    if n == 0 {
        return Err(bad_input(component, "no Q-values".into()));
    }
    let mean_of = |xs: Vec<B::Tensor>| -> Result<B::Tensor> {
        let mut sum = xs[0].clone();
        for x in &xs[1..] {
            sum = B::add(&sum, x)?;
        }
        B::affine(&sum, 1.0 / xs.len() as f64, 0.0)
    };
    let loss = match spec.container_loss {
        ContainerLoss::AverageTd => {
            let deltas = taken
                .iter()
                .zip(&targets)
                .map(|(q, y)| mean_per_item::<B>(&B::sub(y, q)?))
                .collect::<Result<Vec<_>>>()?;
            td_loss::<B>(&mean_of(deltas)?, spec.huber_loss)?
        }
        ContainerLoss::PerAction => {
            let shared = if spec.shared_container_action_target && n > 1 {
                let per_item = targets
                    .iter()
                    .map(|y| mean_per_item::<B>(y))
                    .collect::<Result<Vec<_>>>()?;
                Some(mean_of(per_item)?)
            } else {
                None
            };
            let losses = taken
                .iter()
                .zip(&targets)
                .map(|(q, y)| {
                    let y = match &shared {
                        Some(m) => per_batch::<B>(m, B::shape(q).len())?,
                        None => y.clone(),
                    };
                    mean_per_item::<B>(&td_loss::<B>(&B::sub(&y, q)?, spec.huber_loss)?)
                })
                .collect::<Result<Vec<_>>>()?;
            mean_of(losses)?
        }
    };
    match weights {
        Some(w) => B::mul(&loss, &B::cast(w, B::dtype(&loss))?),
        None => Ok(loss),
    }
}

/// Half the squared TD error, or its Huber loss (delta 1), elementwise.
fn td_loss<B: Backend>(delta: &B::Tensor, huber: bool) -> Result<B::Tensor> {
    let quadratic = B::affine(&B::square(delta)?, 0.5, 0.0)?;
    if !huber {
        return Ok(quadratic);
    }
    let abs = B::abs(delta)?;
    B::where_cond(
        &B::lt(&abs, &scalar::<B>(&abs, 1.0)?)?,
        &quadratic,
        &B::affine(&abs, 1.0, -0.5)?,
    )
}
