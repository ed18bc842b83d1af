//! Distributions over actions: Categorical (from logits), Bernoulli (from probabilities),
//! Normal (from a `(mean, stddev)` Tuple), SquashedNormal (a Normal through `tanh`, scaled
//! into `[low, high]`, as SAC uses for bounded actions), Beta (from an `(alpha, beta)` Tuple,
//! scaled into `[low, high]`) and GumbelSoftmax (the Concrete relaxation of a Categorical,
//! over probability vectors). Each samples stochastically (from the executor's
//! seeded RNG) or deterministically, and gives log-probabilities, entropy and KL divergence,
//! elementwise over the action dimensions as RLgraph's do.

use std::f64::consts::PI;

use rlgraph_core::spaces::{BoolBox, FloatBox, IntBox, Space};
use rlgraph_core::{Backend, Component, CoreError, DType, GraphFn, KernelCtx, Param, Result, Tree};

use crate::special_functions::{digamma, ln_beta};

/// Which distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Parameters: logits `[..., n]`; values: category indices `[...]`.
    Categorical,
    /// Parameters: probabilities `[...]`; values: bools `[...]`.
    Bernoulli,
    /// Parameters: a Tuple `(mean, stddev)` of equal shapes; values: floats of that shape.
    Normal,
    /// `low + (tanh(u) + 1) (high - low) / 2` with `u ~ Normal(mean, stddev)`. Parameters
    /// as Normal's. Entropy is the underlying Normal's (the squashed one has no closed form);
    /// the KL divergence is exact (a bijection leaves it unchanged). Unlike RLgraph's, the
    /// log-likelihood includes the Jacobian of the rescaling to `[low, high]`
    /// (`-ln((high - low) / 2)` per element), so it is a true density over the actions; the
    /// difference is a constant, which no gradient sees.
    SquashedNormal {
        /// The smallest action.
        low: f64,
        /// The largest action.
        high: f64,
    },
    /// `low + (high - low) y` with `y ~ Beta(alpha, beta)`. Parameters: a Tuple
    /// `(alpha, beta)` of positive floats. Sampling is not reparameterized. Unlike RLgraph's,
    /// the log-likelihood includes the Jacobian of the rescaling (`-ln(high - low)` per
    /// element): a constant, which no gradient sees.
    Beta {
        /// The smallest action.
        low: f64,
        /// The largest action.
        high: f64,
    },
    /// The Concrete / Gumbel-softmax distribution (Maddison et al. 2017; Jang et al. 2017):
    /// parameters are logits `[..., n]`, values probability vectors `softmax((logits + G) /
    /// temperature)`. The deterministic sample is the one-hot argmax; entropy and KL are the
    /// underlying Categorical's.
    GumbelSoftmax {
        /// The relaxation temperature (towards 0: one-hot samples).
        temperature: f64,
    },
}

/// Keeps `tanh` away from +-1, where `atanh` and `log(1 - y^2)` blow up.
const SQUASH_EPS: f64 = 1e-6;

/// A scalar of `like`'s dtype and device.
pub(crate) fn scalar<B: Backend>(like: &B::Tensor, v: f64) -> Result<B::Tensor> {
    B::scalar(v, B::dtype(like), B::device(like))
}

fn last_dim<B: Backend>(t: &B::Tensor) -> usize {
    B::shape(t).len().saturating_sub(1)
}

/// `log softmax(logits)` over the last dimension, computed stably.
pub(crate) fn log_softmax<B: Backend>(logits: &B::Tensor) -> Result<B::Tensor> {
    let d = last_dim::<B>(logits);
    let shifted = B::sub(logits, &B::max(logits, d, true)?)?;
    B::sub(&shifted, &B::log(&B::sum(&B::exp(&shifted)?, &[d], true)?)?)
}

fn normal_params<B: Backend>(p: &Tree<B::Tensor>) -> Result<(&B::Tensor, &B::Tensor)> {
    match p {
        Tree::Tuple(v) if v.len() == 2 => match (v[0].as_leaf(), v[1].as_leaf()) {
            (Some(m), Some(s)) => Ok((m, s)),
            _ => Err(bad("Normal parameters must be a Tuple of two tensors (mean, stddev)")),
        },
        _ => Err(bad("Normal parameters must be a Tuple (mean, stddev)")),
    }
}

fn bad(reason: &str) -> CoreError {
    CoreError::Component {
        component: "distribution".into(),
        method: None,
        reason: reason.into(),
    }
}

fn leaf<B: Backend>(p: &Tree<B::Tensor>) -> Result<&B::Tensor> {
    p.as_leaf().ok_or_else(|| bad("parameters must be a single tensor"))
}

/// `mean + stddev * n` with `n ~ N(0, 1)` from the executor's RNG (the mean when
/// deterministic); differentiable in both parameters.
fn normal_sample<B: Backend>(
    ctx: &mut KernelCtx<'_, B>,
    p: &Tree<B::Tensor>,
    deterministic: bool,
) -> Result<B::Tensor> {
    let (mean, std) = normal_params::<B>(p)?;
    if deterministic {
        return Ok(mean.clone());
    }
    let n = B::normal(&B::shape(mean), 0.0, 1.0, B::dtype(mean), ctx.device(), ctx.rng())?;
    B::add(mean, &B::mul(std, &n)?)
}

/// `Beta(a, b)` draws on the host from the executor's RNG (Gamma ratios, rand_distr's
/// algorithm), as a tensor like `a`.
fn beta_draws<B: Backend>(ctx: &mut KernelCtx<'_, B>, a: &B::Tensor, b: &B::Tensor) -> Result<B::Tensor> {
    use rand_distr::Distribution;
    let (av, bv) = (B::to_host(a)?.data.to_f64(), B::to_host(b)?.data.to_f64());
    let mut draws = Vec::with_capacity(av.len());
    for (&x, &y) in av.iter().zip(&bv) {
        let beta = rand_distr::Beta::new(x, y)
            .map_err(|e| bad(&format!("Beta parameters must be positive, got ({x}, {y}): {e}")))?;
        draws.push(beta.sample(ctx.rng()));
    }
    let mut it = draws.into_iter();
    B::from_draws(&B::shape(a), B::dtype(a), ctx.device(), || it.next().unwrap_or(0.5))
}

/// `-z^2/2 - ln(sigma) - ln(2 pi)/2` elementwise.
fn normal_log_prob<B: Backend>(p: &Tree<B::Tensor>, values: &B::Tensor) -> Result<B::Tensor> {
    let (mean, std) = normal_params::<B>(p)?;
    let z = B::div(&B::sub(values, mean)?, std)?;
    B::sub(
        &B::affine(&B::square(&z)?, -0.5, -0.5 * (2.0 * PI).ln())?,
        &B::log(std)?,
    )
}

/// `low + (tanh(u) + 1) (high - low) / 2`.
fn squash<B: Backend>(u: &B::Tensor, low: f64, high: f64) -> Result<B::Tensor> {
    let half = (high - low) / 2.0;
    B::affine(&B::tanh(u)?, half, low + half)
}

/// The change of variables: `log N(u) - log(1 - y^2) - log((high - low) / 2)` with
/// `y = tanh(u)`.
fn squashed_log_prob<B: Backend>(
    p: &Tree<B::Tensor>,
    u: &B::Tensor,
    y: &B::Tensor,
    low: f64,
    high: f64,
) -> Result<B::Tensor> {
    let jacobian = B::log(&B::affine(&B::square(y)?, -1.0, 1.0 + SQUASH_EPS)?)?;
    B::affine(
        &B::sub(&normal_log_prob::<B>(p, u)?, &jacobian)?,
        1.0,
        -((high - low) / 2.0).ln(),
    )
}

impl Kind {
    /// A sample: stochastic from `ctx`'s RNG, or the mode when `deterministic`.
    pub fn sample<B: Backend>(
        &self,
        ctx: &mut KernelCtx<'_, B>,
        p: &Tree<B::Tensor>,
        deterministic: bool,
    ) -> Result<B::Tensor> {
        match self {
            Kind::Categorical => {
                let logits = leaf::<B>(p)?;
                let d = last_dim::<B>(logits);
                if deterministic {
                    return B::argmax(logits, d, false);
                }
                // Gumbel-max: argmax(logits + G) with G = -ln(-ln U) samples the softmax.
                let u = B::uniform(&B::shape(logits), 1e-12, 1.0, B::dtype(logits), ctx.device(), ctx.rng())?;
                let gumbel = B::neg(&B::log(&B::neg(&B::log(&u)?)?)?)?;
                B::argmax(&B::add(logits, &gumbel)?, d, false)
            }
            Kind::Bernoulli => {
                let probs = leaf::<B>(p)?;
                if deterministic {
                    return B::gt(probs, &scalar::<B>(probs, 0.5)?);
                }
                let u = B::uniform(&B::shape(probs), 0.0, 1.0, B::dtype(probs), ctx.device(), ctx.rng())?;
                B::lt(&u, probs)
            }
            Kind::Normal => normal_sample(ctx, p, deterministic),
            Kind::SquashedNormal { low, high } => squash::<B>(&normal_sample(ctx, p, deterministic)?, *low, *high),
            Kind::Beta { low, high } => {
                let (a, b) = normal_params::<B>(p)?;
                let y = if deterministic {
                    B::div(a, &B::add(a, b)?)?
                } else {
                    beta_draws::<B>(ctx, a, b)?
                };
                B::affine(&y, high - low, *low)
            }
            Kind::GumbelSoftmax { temperature } => {
                let logits = leaf::<B>(p)?;
                let d = last_dim::<B>(logits);
                if deterministic {
                    let n = B::shape(logits)[d];
                    return B::one_hot(&B::argmax(logits, d, false)?, n, B::dtype(logits));
                }
                let u = B::uniform(&B::shape(logits), 1e-12, 1.0, B::dtype(logits), ctx.device(), ctx.rng())?;
                let gumbel = B::neg(&B::log(&B::neg(&B::log(&u)?)?)?)?;
                let z = B::affine(&B::add(logits, &gumbel)?, 1.0 / temperature, 0.0)?;
                B::exp(&log_softmax::<B>(&z)?)
            }
        }
    }

    /// A sample and its log-probability. For the squashed Normal both come from the same
    /// pre-squash draw, which is exact and keeps the reparameterized gradient.
    pub fn sample_and_log_prob<B: Backend>(
        &self,
        ctx: &mut KernelCtx<'_, B>,
        p: &Tree<B::Tensor>,
        deterministic: bool,
    ) -> Result<(B::Tensor, B::Tensor)> {
        match *self {
            Kind::SquashedNormal { low, high } => {
                let u = normal_sample(ctx, p, deterministic)?;
                let lp = squashed_log_prob::<B>(p, &u, &B::tanh(&u)?, low, high)?;
                Ok((squash::<B>(&u, low, high)?, lp))
            }
            _ => {
                let a = self.sample(ctx, p, deterministic)?;
                let lp = self.log_prob::<B>(p, &a)?;
                Ok((a, lp))
            }
        }
    }

    /// The log-probability (density for Normal) of `values`, elementwise.
    pub fn log_prob<B: Backend>(&self, p: &Tree<B::Tensor>, values: &B::Tensor) -> Result<B::Tensor> {
        match self {
            Kind::Categorical => {
                let logits = leaf::<B>(p)?;
                let d = last_dim::<B>(logits);
                let idx = B::unsqueeze(&B::cast(values, DType::I64)?, d)?;
                B::squeeze(&B::gather(&log_softmax::<B>(logits)?, d, &idx)?, d)
            }
            Kind::Bernoulli => {
                let probs = leaf::<B>(p)?;
                let v = B::cast(values, B::dtype(probs))?;
                let not_v = B::affine(&v, -1.0, 1.0)?;
                B::add(
                    &B::mul(&v, &B::log(probs)?)?,
                    &B::mul(&not_v, &B::log(&B::affine(probs, -1.0, 1.0)?)?)?,
                )
            }
            Kind::Normal => normal_log_prob::<B>(p, values),
            Kind::SquashedNormal { low, high } => {
                // y = 2 (a - low) / (high - low) - 1 in (-1, 1); u = atanh(y).
                let y = B::clamp(
                    &B::affine(values, 2.0 / (high - low), -2.0 * low / (high - low) - 1.0)?,
                    -1.0 + SQUASH_EPS,
                    1.0 - SQUASH_EPS,
                )?;
                let u = B::affine(
                    &B::log(&B::div(&B::affine(&y, 1.0, 1.0)?, &B::affine(&y, -1.0, 1.0)?)?)?,
                    0.5,
                    0.0,
                )?;
                squashed_log_prob::<B>(p, &u, &y, *low, *high)
            }
            Kind::Beta { low, high } => {
                // (a - 1) ln y + (b - 1) ln(1 - y) - ln B(a, b) - ln(high - low)
                let (a, b) = normal_params::<B>(p)?;
                let y = B::clamp(
                    &B::affine(values, 1.0 / (high - low), -low / (high - low))?,
                    1e-7,
                    1.0 - 1e-7,
                )?;
                let t1 = B::mul(&B::affine(a, 1.0, -1.0)?, &B::log(&y)?)?;
                let t2 = B::mul(&B::affine(b, 1.0, -1.0)?, &B::log(&B::affine(&y, -1.0, 1.0)?)?)?;
                B::affine(
                    &B::sub(&B::add(&t1, &t2)?, &ln_beta::<B>(a, b)?)?,
                    1.0,
                    -(high - low).ln(),
                )
            }
            Kind::GumbelSoftmax { temperature } => {
                // ln((n-1)!) + (n-1) ln t + sum_i (ln pi_i - (t + 1) ln y_i)
                //   - n ln(sum_i pi_i y_i^-t)
                let logits = leaf::<B>(p)?;
                let d = last_dim::<B>(logits);
                let n = B::shape(logits)[d];
                let log_pi = log_softmax::<B>(logits)?;
                let log_y = B::log(&B::clamp(values, 1e-12, 1.0)?)?;
                let terms = B::sum(
                    &B::sub(&log_pi, &B::affine(&log_y, temperature + 1.0, 0.0)?)?,
                    &[d],
                    false,
                )?;
                let mix = B::sum(
                    &B::exp(&B::sub(&log_pi, &B::affine(&log_y, *temperature, 0.0)?)?)?,
                    &[d],
                    false,
                )?;
                let ln_fact: f64 = (1..n).map(|k| (k as f64).ln()).sum();
                B::affine(
                    &B::sub(&terms, &B::affine(&B::log(&mix)?, n as f64, 0.0)?)?,
                    1.0,
                    ln_fact + (n as f64 - 1.0) * temperature.ln(),
                )
            }
        }
    }

    /// The entropy, elementwise (per distribution for Categorical).
    pub fn entropy<B: Backend>(&self, p: &Tree<B::Tensor>) -> Result<B::Tensor> {
        match self {
            Kind::Categorical => {
                let logits = leaf::<B>(p)?;
                let lp = log_softmax::<B>(logits)?;
                B::neg(&B::sum(&B::mul(&B::exp(&lp)?, &lp)?, &[last_dim::<B>(logits)], false)?)
            }
            Kind::Bernoulli => {
                let probs = leaf::<B>(p)?;
                let q = B::affine(probs, -1.0, 1.0)?;
                B::neg(&B::add(&B::mul(probs, &B::log(probs)?)?, &B::mul(&q, &B::log(&q)?)?)?)
            }
            Kind::Normal | Kind::SquashedNormal { .. } => {
                let (_, std) = normal_params::<B>(p)?;
                B::affine(&B::log(std)?, 1.0, 0.5 + 0.5 * (2.0 * PI).ln())
            }
            Kind::Beta { low, high } => {
                // ln B(a, b) - (a - 1) psi(a) - (b - 1) psi(b) + (a + b - 2) psi(a + b), plus
                // ln(high - low) for the scaling.
                let (a, b) = normal_params::<B>(p)?;
                let ab = B::add(a, b)?;
                let h = B::sub(
                    &B::sub(
                        &ln_beta::<B>(a, b)?,
                        &B::mul(&B::affine(a, 1.0, -1.0)?, &digamma::<B>(a)?)?,
                    )?,
                    &B::mul(&B::affine(b, 1.0, -1.0)?, &digamma::<B>(b)?)?,
                )?;
                B::affine(
                    &B::add(&h, &B::mul(&B::affine(&ab, 1.0, -2.0)?, &digamma::<B>(&ab)?)?)?,
                    1.0,
                    (high - low).ln(),
                )
            }
            Kind::GumbelSoftmax { .. } => Kind::Categorical.entropy::<B>(p),
        }
    }

    /// `KL(p || q)`, elementwise (per distribution for Categorical).
    pub fn kl<B: Backend>(&self, p: &Tree<B::Tensor>, q: &Tree<B::Tensor>) -> Result<B::Tensor> {
        match self {
            Kind::GumbelSoftmax { .. } => Kind::Categorical.kl::<B>(p, q),
            Kind::Beta { .. } => {
                // ln B(a2, b2) - ln B(a1, b1) + (a1 - a2) psi(a1) + (b1 - b2) psi(b1)
                //   + (a2 - a1 + b2 - b1) psi(a1 + b1)
                let ((a1, b1), (a2, b2)) = (normal_params::<B>(p)?, normal_params::<B>(q)?);
                let s1 = B::add(a1, b1)?;
                let t = B::sub(&ln_beta::<B>(a2, b2)?, &ln_beta::<B>(a1, b1)?)?;
                let t = B::add(&t, &B::mul(&B::sub(a1, a2)?, &digamma::<B>(a1)?)?)?;
                let t = B::add(&t, &B::mul(&B::sub(b1, b2)?, &digamma::<B>(b1)?)?)?;
                B::add(&t, &B::mul(&B::sub(&B::add(a2, b2)?, &s1)?, &digamma::<B>(&s1)?)?)
            }
            Kind::Categorical => {
                let (lp, lq) = (log_softmax::<B>(leaf::<B>(p)?)?, log_softmax::<B>(leaf::<B>(q)?)?);
                B::sum(
                    &B::mul(&B::exp(&lp)?, &B::sub(&lp, &lq)?)?,
                    &[last_dim::<B>(&lp)],
                    false,
                )
            }
            Kind::Bernoulli => {
                let (a, b) = (leaf::<B>(p)?, leaf::<B>(q)?);
                let (na, nb) = (B::affine(a, -1.0, 1.0)?, B::affine(b, -1.0, 1.0)?);
                let t1 = B::mul(a, &B::sub(&B::log(a)?, &B::log(b)?)?)?;
                let t2 = B::mul(&na, &B::sub(&B::log(&na)?, &B::log(&nb)?)?)?;
                B::add(&t1, &t2)
            }
            Kind::Normal | Kind::SquashedNormal { .. } => {
                let ((m1, s1), (m2, s2)) = (normal_params::<B>(p)?, normal_params::<B>(q)?);
                // ln(s2/s1) + (s1^2 + (m1 - m2)^2) / (2 s2^2) - 1/2
                let ratio = B::log(&B::div(s2, s1)?)?;
                let num = B::add(&B::square(s1)?, &B::square(&B::sub(m1, m2)?)?)?;
                let frac = B::div(&num, &B::affine(&B::square(s2)?, 2.0, 0.0)?)?;
                B::affine(&B::add(&ratio, &frac)?, 1.0, -0.5)
            }
        }
    }

    /// The space of values, given the parameters' space.
    fn value_space(&self, params: &Space) -> Result<Space> {
        let ranks = params
            .flatten()
            .first()
            .and_then(|(_, s)| s.ranks())
            .unwrap_or_default();
        let shape = |s: &Space| s.shape().unwrap_or(&[]).to_vec();
        Ok(match (self, params) {
            (Kind::Categorical, Space::Float(_)) => {
                let mut core = shape(params);
                let n = core
                    .pop()
                    .ok_or_else(|| bad("Categorical logits need a last (category) dimension"))?;
                Space::from(IntBox::new(n as i64)?.with_shape(core)).with_ranks(ranks)
            }
            (Kind::Bernoulli, Space::Float(_)) => Space::from(BoolBox::new(shape(params))).with_ranks(ranks),
            (Kind::Normal, Space::Tuple(t)) if t.items().len() == 2 => {
                Space::from(FloatBox::new(shape(&t.items()[0]))).with_ranks(ranks)
            }
            (Kind::GumbelSoftmax { .. }, Space::Float(_)) if !shape(params).is_empty() => {
                Space::from(FloatBox::bounded(shape(params), 0.0, 1.0)?).with_ranks(ranks)
            }
            (Kind::Beta { low, high }, Space::Tuple(t)) if t.items().len() == 2 => {
                Space::from(FloatBox::bounded(shape(&t.items()[0]), *low, *high)?).with_ranks(ranks)
            }
            (Kind::SquashedNormal { low, high }, Space::Tuple(t)) if t.items().len() == 2 => {
                Space::from(FloatBox::bounded(shape(&t.items()[0]), *low, *high)?).with_ranks(ranks)
            }
            _ => return Err(bad("parameters do not fit the distribution")),
        })
    }

    /// The space of elementwise results (log-probabilities, entropies, KL).
    fn result_space(&self, params: &Space) -> Result<Space> {
        let v = self.value_space(params)?;
        Ok(Space::from(FloatBox::new(v.shape().unwrap_or(&[]).to_vec())).with_ranks(v.ranks().unwrap_or_default()))
    }
}

/// A distribution component `name` with API methods `sample_stochastic(parameters)`,
/// `sample_deterministic(parameters)`, `log_prob(parameters, values)`, `entropy(parameters)`
/// and `kl_divergence(parameters, other_parameters)`.
pub fn distribution<B: Backend>(name: &str, kind: Kind) -> Component<B> {
    let one = |n: &'static str| {
        move |ctx: &mut rlgraph_core::ApiCtx<'_, B>, args: &rlgraph_core::Args| ctx.graph_fn(n, &args.present())
    };
    Component::new(name)
        .with_kind("distribution")
        .api(
            "sample_stochastic",
            vec![Param::new("parameters")],
            one("sample_stochastic"),
        )
        .api(
            "sample_deterministic",
            vec![Param::new("parameters")],
            one("sample_deterministic"),
        )
        .api(
            "log_prob",
            vec![Param::new("parameters"), Param::new("values")],
            one("log_prob"),
        )
        .api("sample_and_log_prob", vec![Param::new("parameters")], |ctx, args| {
            ctx.graph_fn("sample_and_log_prob", &[args.get(0)?])
        })
        .api("entropy", vec![Param::new("parameters")], one("entropy"))
        .api(
            "kl_divergence",
            vec![Param::new("parameters"), Param::new("other_parameters")],
            one("kl_divergence"),
        )
        .check_inputs(move |s| {
            let p = s.get("parameters")?;
            kind.value_space(p).map(|_| ()).map_err(|_| {
                s.mismatch(
                    "parameters",
                    match kind {
                        Kind::Categorical => "float logits with a category dimension",
                        Kind::Bernoulli => "float probabilities",
                        Kind::Normal | Kind::SquashedNormal { .. } => "a Tuple (mean, stddev) of floats",
                        Kind::Beta { .. } => "a Tuple (alpha, beta) of positive floats",
                        Kind::GumbelSoftmax { .. } => "float logits with a category dimension",
                    },
                )
            })
        })
        .graph_fn(
            GraphFn::new("sample_stochastic", move |ctx, xs| {
                Ok(vec![Tree::Leaf(kind.sample(ctx, &xs[0], false)?)])
            })
            .infer(move |_, s| Ok(vec![kind.value_space(&s[0])?])),
        )
        .graph_fn(
            GraphFn::new("sample_deterministic", move |ctx, xs| {
                Ok(vec![Tree::Leaf(kind.sample(ctx, &xs[0], true)?)])
            })
            .infer(move |_, s| Ok(vec![kind.value_space(&s[0])?])),
        )
        .graph_fn(
            GraphFn::new("sample_and_log_prob", move |ctx, xs| {
                let (a, lp) = kind.sample_and_log_prob(ctx, &xs[0], false)?;
                Ok(vec![Tree::Leaf(a), Tree::Leaf(lp)])
            })
            .outputs(2)
            .infer(move |_, s| Ok(vec![kind.value_space(&s[0])?, kind.result_space(&s[0])?])),
        )
        .graph_fn(
            GraphFn::new("log_prob", move |_, xs| {
                Ok(vec![Tree::Leaf(kind.log_prob::<B>(&xs[0], leaf::<B>(&xs[1])?)?)])
            })
            .infer(move |_, s| Ok(vec![kind.result_space(&s[0])?])),
        )
        .graph_fn(
            GraphFn::new("entropy", move |_, xs| Ok(vec![Tree::Leaf(kind.entropy::<B>(&xs[0])?)]))
                .infer(move |_, s| Ok(vec![kind.result_space(&s[0])?])),
        )
        .graph_fn(
            GraphFn::new("kl_divergence", move |_, xs| {
                Ok(vec![Tree::Leaf(kind.kl::<B>(&xs[0], &xs[1])?)])
            })
            .infer(move |_, s| Ok(vec![kind.result_space(&s[0])?])),
        )
}
