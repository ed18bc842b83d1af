//! The soft actor-critic losses (Haarnoja et al. 2018): twin-Q critic loss, actor loss, and
//! the temperature loss that tunes alpha toward a target entropy.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, GraphFn, Initializer, Param, Tree, VarDecl};

use super::{not_terminal, per_item_space};

/// The settings of the SAC losses.
#[derive(Clone, Debug, PartialEq)]
pub struct SacLossSpec {
    /// Gamma.
    pub discount: f64,
    /// Alpha at the start (stored as the trainable variable `log_alpha`).
    pub initial_alpha: f64,
    /// The entropy alpha is tuned toward (`-dim(A)` for continuous actions, by convention).
    /// `None`, RLgraph's default, keeps alpha fixed: the alpha loss is zero.
    pub target_entropy: Option<f64>,
}

impl Default for SacLossSpec {
    fn default() -> Self {
        SacLossSpec {
            discount: 0.99,
            initial_alpha: 1.0,
            target_entropy: None,
        }
    }
}

const PARAMS: [&str; 10] = [
    "rewards",
    "terminals",
    "q1",
    "q2",
    "qt1_next",
    "qt2_next",
    "log_probs_next",
    "log_probs_sampled",
    "q1_sampled",
    "q2_sampled",
];

/// SAC's losses in one component with the trainable variable `log_alpha`. Parameters (all
/// `[B]`): `rewards`, `terminals`; `q1`, `q2` (both critics at the stored actions);
/// `qt1_next`, `qt2_next` (target critics at `a' ~ pi(s')`), `log_probs_next` (of `a'`);
/// `log_probs_sampled`, `q1_sampled`, `q2_sampled` (at `a~ ~ pi(s)`).
///
/// - critic: `0.5 ((q1 - y)^2 + (q2 - y)^2)` with
///   `y = r + gamma (1 - d) (min(qt1', qt2') - alpha log pi(a'|s'))`, a constant;
/// - actor: `alpha log pi(a~|s) - min(q1~, q2~)` (step only the policy's variables with it);
/// - alpha: `-log_alpha (log pi(a~|s) + target_entropy)`, which raises alpha while the
///   policy's entropy is below the target; zero without a target entropy (RLgraph's
///   `target_entropy=None`: alpha stays at `initial_alpha`).
///
/// `loss_per_item` returns `(actor, critic, alpha)` per item; `loss` returns
/// `(actor, actor_per_item, critic, critic_per_item, alpha, alpha_per_item)`; `get_alpha`
/// returns alpha.
pub fn sac_loss<B: Backend>(name: &str, spec: SacLossSpec) -> Component<B> {
    let params: Vec<Param> = PARAMS.into_iter().map(Param::new).collect();
    let init = spec.initial_alpha.ln();
    Component::new(name)
        .with_kind("sac-loss")
        .api("loss_per_item", params.clone(), |ctx, args| {
            ctx.graph_fn("per_item", &args.present())
        })
        .api("loss", params, |ctx, args| {
            let per = ctx.graph_fn("per_item", &args.present())?;
            let mut out = vec![];
            for p in per {
                out.push(ctx.graph_fn1("average", &[p])?);
                out.push(p);
            }
            Ok(out)
        })
        .api("loss_average", vec![Param::new("loss_per_item")], |ctx, args| {
            Ok(vec![ctx.graph_fn1("average", &[args.get(0)?])?])
        })
        .api("get_alpha", vec![], |ctx, _| Ok(vec![ctx.graph_fn1("alpha", &[])?]))
        .variables(move |_| {
            Ok(vec![VarDecl::new(
                "log_alpha",
                Vec::<usize>::new(),
                Initializer::Constant(init),
            )])
        })
        .graph_fn(
            GraphFn::new("per_item", move |ctx, args| {
                let x = |i: usize| -> rlgraph_core::Result<&B::Tensor> {
                    args[i].as_leaf().ok_or_else(|| {
                        super::bad_input(ctx.component(), format!("{} must be a single tensor", PARAMS[i]))
                    })
                };
                let log_alpha = ctx.var("log_alpha")?;
                let alpha = B::exp(&B::detach(log_alpha))?;
                let (rewards, q1, q2) = (x(0)?, x(2)?, x(3)?);
                let alive = not_terminal::<B>(x(1)?, q1)?;
                let next = B::sub(&B::minimum(x(4)?, x(5)?)?, &B::mul(&alpha, x(6)?)?)?;
                let y = B::detach(&B::add(
                    rewards,
                    &B::affine(&B::mul(&alive, &next)?, spec.discount, 0.0)?,
                )?);
                let critic = B::affine(
                    &B::add(&B::square(&B::sub(q1, &y)?)?, &B::square(&B::sub(q2, &y)?)?)?,
                    0.5,
                    0.0,
                )?;
                let lp = x(7)?;
                let actor = B::sub(&B::mul(&alpha, lp)?, &B::minimum(x(8)?, x(9)?)?)?;
                let alpha_loss = match spec.target_entropy {
                    Some(target) => B::neg(&B::mul(log_alpha, &B::affine(&B::detach(lp), 1.0, target)?)?)?,
                    None => B::affine(lp, 0.0, 0.0)?,
                };
                Ok(vec![Tree::Leaf(actor), Tree::Leaf(critic), Tree::Leaf(alpha_loss)])
            })
            .outputs(3)
            .infer(|_, _| Ok(vec![per_item_space(); 3])),
        )
        .graph_fn(
            GraphFn::tensors("average", |_, xs| Ok(vec![B::mean_all(xs[0])?]))
                .infer(|_, _| Ok(vec![Space::from(FloatBox::new(Vec::<usize>::new()))])),
        )
        .graph_fn(
            GraphFn::tensors("alpha", |ctx, _| Ok(vec![B::exp(ctx.var("log_alpha")?)?]))
                .infer(|_, _| Ok(vec![Space::from(FloatBox::new(Vec::<usize>::new()))])),
        )
}
