//! Optimizers (SGD, Adam, RMSProp, Adagrad, Adadelta) as components: `step(variables, loss)`, or
//! `calculate_gradients(variables, loss)` then `apply_gradients(variables, grads)`.
//!
//! `variables` is another component's `variables()` output (a Dict keyed by scope path with
//! `.` for `/`). Update rules follow PyTorch's definitions (state starts at zero, epsilon
//! outside the square root); the optimizer's state lives in its own non-trainable variables,
//! so it is saved and restored with everything else.

use serde_json::Value as Json;

use rlgraph_core::backend::{RmsPropSlots, RmsPropStep};
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{
    AdamScalars, AdamStep, Backend, Component, CoreError, DType, Device, GraphFn, Initializer, KernelCtx, Param,
    Result, Tree, VarDecl,
};

use crate::spec::{normalize_type, Spec};
use crate::spec_keys;
use crate::synchronizable::handles;
use crate::time_dependent::TimeDependent;

/// Which update rule.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// `w -= lr * g`.
    Sgd,
    /// Kingma & Ba: moments `m`, `v` with bias correction; `w -= lr * m^ / (sqrt(v^) + eps)`.
    Adam {
        /// First-moment decay.
        beta1: f64,
        /// Second-moment decay.
        beta2: f64,
        /// Added to the denominator.
        epsilon: f64,
    },
    /// `v = rho v + (1 - rho) g^2; w -= lr * g / (sqrt(v) + eps)`; centered, also
    /// `m = rho m + (1 - rho) g` and `w -= lr * g / (sqrt(v - m^2) + eps)` (Graves 2013,
    /// PyTorch's `centered=True`); with momentum, `b = momentum b + g / (...)` and
    /// `w -= lr * b`, as PyTorch's `RMSprop` (the MinAtar reference's DQN uses all three).
    RmsProp {
        /// Decay of the squared-gradient average.
        decay: f64,
        /// Added to the denominator.
        epsilon: f64,
        /// Whether the gradient's variance, not its second moment, scales the step.
        centered: bool,
        /// The scaled steps' momentum (0: none).
        momentum: f64,
    },
    /// `G += g^2; w -= lr * g / (sqrt(G) + eps)`.
    Adagrad {
        /// The accumulator's first value.
        initial_accumulator: f64,
        /// Added to the denominator.
        epsilon: f64,
    },
    /// Adadelta (Zeiler 2012): step sizes from running averages of squared gradients and
    /// squared updates, scaled by the learning rate.
    Adadelta {
        /// Decay of both running averages.
        rho: f64,
        /// Added inside both square roots.
        epsilon: f64,
    },
}

/// An optimizer's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct OptimizerSpec {
    /// The update rule.
    pub rule: Rule,
    /// The step size, possibly changing with the time percentage.
    pub learning_rate: TimeDependent,
    /// If set, gradients are scaled down together so their global norm is at most this.
    pub clip_grad_norm: Option<f64>,
}

impl OptimizerSpec {
    /// Adam at a constant `learning_rate`, with Kingma and Ba's (and RLgraph's) moment decays
    /// 0.9 and 0.999 and epsilon 1e-8, and no gradient clipping.
    pub fn adam(learning_rate: f64) -> Self {
        OptimizerSpec {
            rule: Rule::Adam {
                beta1: 0.9,
                beta2: 0.999,
                epsilon: 1e-8,
            },
            learning_rate: TimeDependent::Constant(learning_rate),
            clip_grad_norm: None,
        }
    }

    /// Parses RLgraph's `optimizer_spec`: `{"type": "adam", "learning_rate": 0.001, ...}`.
    pub fn parse(spec: &Json, at: &str) -> Result<Self> {
        let s = Spec::new(spec, at)?;
        let kind = s.str_or("type", "sgd")?;
        let lr = match s.get("learning_rate") {
            Some(j) => TimeDependent::parse(j, &s.at("learning_rate"))?.within(
                0.0,
                f64::MAX,
                &s.at("learning_rate"),
                "a learning rate is a finite number of at least 0",
            )?,
            None => TimeDependent::Constant(0.001),
        };
        let rule = match normalize_type(kind).trim_end_matches("optimizer") {
            "sgd" | "gradientdescent" => {
                s.only(spec_keys::SGD.keys)?;
                Rule::Sgd
            }
            "adam" => {
                s.only(spec_keys::ADAM.keys)?;
                Rule::Adam {
                    beta1: s.f64_or("beta1", s.f64_or("beta_1", 0.9)?)?,
                    beta2: s.f64_or("beta2", s.f64_or("beta_2", 0.999)?)?,
                    epsilon: s.f64_or("epsilon", 1e-8)?,
                }
            }
            "rmsprop" => {
                s.only(spec_keys::RMSPROP.keys)?;
                if s.get("decay").is_some() && s.get("alpha").is_some() {
                    return Err(CoreError::Config {
                        at: s.at("alpha"),
                        reason: "alpha is PyTorch's name for decay; give one of them".into(),
                    });
                }
                Rule::RmsProp {
                    decay: s.f64_or("decay", s.f64_or("alpha", 0.99)?)?,
                    epsilon: s.f64_or("epsilon", 1e-8)?,
                    centered: s.bool_or("centered", false)?,
                    momentum: match s.f64_or("momentum", 0.0)? {
                        m if (0.0..1.0).contains(&m) => m,
                        m => {
                            return Err(CoreError::Config {
                                at: s.at("momentum"),
                                reason: format!("expected a momentum from 0 up to (not including) 1, got {m}"),
                            })
                        }
                    },
                }
            }
            "adagrad" => {
                s.only(spec_keys::ADAGRAD.keys)?;
                Rule::Adagrad {
                    initial_accumulator: s.f64_or("initial_accumulator_value", 0.0)?,
                    epsilon: s.f64_or("epsilon", 1e-10)?,
                }
            }
            "adadelta" => {
                s.only(spec_keys::ADADELTA.keys)?;
                // TensorFlow's defaults, which RLgraph configs were written against.
                Rule::Adadelta {
                    rho: s.f64_or("rho", 0.95)?,
                    epsilon: s.f64_or("epsilon", 1e-8)?,
                }
            }
            other => {
                return Err(CoreError::Config {
                    at: s.at("type"),
                    reason: format!(
                        "unknown or not yet supported optimizer {kind:?} ({other}); known: sgd, adam, rmsprop, adagrad, adadelta"
                    ),
                })
            }
        };
        let clip = match s.get("clip_grad_norm") {
            None | Some(Json::Null) => None,
            Some(j) => Some(j.as_f64().ok_or_else(|| CoreError::Config {
                at: s.at("clip_grad_norm"),
                reason: "expected a number".into(),
            })?),
        };
        Ok(OptimizerSpec {
            rule,
            learning_rate: lr,
            clip_grad_norm: clip,
        })
    }

    /// The state variables each optimized variable needs, by prefix.
    fn slots(&self) -> Vec<&'static str> {
        match self.rule {
            Rule::Sgd => vec![],
            Rule::Adam { .. } => vec!["m", "v"],
            Rule::RmsProp { centered, momentum, .. } => {
                let mut slots = vec!["v"];
                if centered {
                    slots.push("mg");
                }
                if momentum > 0.0 {
                    slots.push("mom");
                }
                slots
            }
            Rule::Adagrad { .. } => vec!["g2"],
            Rule::Adadelta { .. } => vec!["g2", "dx2"],
        }
    }
}

fn time_value<B: Backend>(t: Option<&B::Tensor>) -> Result<f64> {
    match t {
        Some(t) => Ok(B::to_host(t)?.data.to_f64().first().copied().unwrap_or(0.0)),
        None => Ok(0.0),
    }
}

/// The global norm of `grads`: each gradient's sum of squares on its device, brought to the
/// host in one download where they share a device (one wait for a GPU, not one per
/// variable), and added there in f64 in the variables' order.
fn global_norm<B: Backend>(grads: &[B::Tensor]) -> Result<f64> {
    let sums = grads
        .iter()
        .map(|g| B::reshape(&B::sum_all(&B::square(g)?)?, &[1]))
        .collect::<Result<Vec<_>>>()?;
    let one_device = sums.windows(2).all(|w| B::device(&w[0]) == B::device(&w[1]));
    let total: f64 = if one_device && !sums.is_empty() {
        B::to_host(&B::concat(&sums, 0)?)?.data.to_f64().iter().sum()
    } else {
        // A device map can spread the variables over devices, which no single tensor spans.
        let mut total = 0.0;
        for s in &sums {
            total += B::to_host(s)?.data.to_f64()[0];
        }
        total
    };
    Ok(total.sqrt())
}

/// `grads` scaled to a global norm of at most `max_norm`. On the CPU the norm is added on the
/// host in f64 and the gradients scaled only when it is over. On a GPU the norm is one sum
/// over all gradients end to end, and the scale,
/// `max_norm / max(norm, max_norm)`, stays on the device and every gradient is multiplied by
/// it: a download would make each update wait for the device to finish the one before.
fn clip_by_global_norm<B: Backend>(grads: Vec<B::Tensor>, max_norm: f64) -> Result<Vec<B::Tensor>> {
    let first = match grads.first() {
        Some(g) => g,
        None => return Ok(grads),
    };
    let (device, dtype) = (B::device(first), B::dtype(first));
    let alike = grads.iter().all(|g| B::device(g) == device && B::dtype(g) == dtype);
    if device != Device::Cpu && alike {
        // All gradients as one vector: three kernels for the norm instead of two per variable.
        let flat = grads
            .iter()
            .map(|g| B::reshape(g, &[B::shape(g).iter().product()]))
            .collect::<Result<Vec<_>>>()?;
        let norm = B::sqrt(&B::sum_all(&B::square(&B::concat(&flat, 0)?)?)?)?;
        let bound = B::scalar(max_norm, dtype, device)?;
        let scale = B::div(&bound, &B::maximum(&norm, &bound)?)?;
        return grads.iter().map(|g| B::mul(g, &scale)).collect();
    }
    let norm = global_norm::<B>(&grads)?;
    if norm > max_norm {
        return grads.iter().map(|g| B::affine(g, max_norm / norm, 0.0)).collect();
    }
    Ok(grads)
}

/// Applies one update of `spec` with gradients `grads` to `vars`, using the optimizer's state,
/// at time percentage `t` (0 when absent).
fn apply<B: Backend>(
    ctx: &KernelCtx<'_, B>,
    spec: &OptimizerSpec,
    vars: &[(String, &B::Var)],
    grads: Vec<B::Tensor>,
    t: Option<&B::Tensor>,
) -> Result<()> {
    let mut grads = grads;
    if let Some(max_norm) = spec.clip_grad_norm {
        grads = clip_by_global_norm::<B>(grads, max_norm)?;
    }
    let step_var = ctx.var_handle("step")?;
    if let Rule::Adam { beta1, beta2, epsilon } = spec.rule {
        // Only where every variable shares the step's device: a device map may spread them.
        let device = B::device(B::var_tensor(step_var));
        if device != Device::Cpu && vars.iter().all(|(_, v)| B::device(B::var_tensor(v)) == device) {
            return adam_on_device(ctx, spec, vars, grads, t, [beta1, beta2, epsilon]);
        }
    }
    let lr = spec.learning_rate.value(time_value::<B>(t)?);
    let step = B::to_host(B::var_tensor(step_var))?.data.to_f64()[0] + 1.0;
    B::var_set(step_var, &B::affine(B::var_tensor(step_var), 1.0, 1.0)?)?;
    for ((name, var), g) in vars.iter().zip(grads) {
        let slot = |p: &str| ctx.var_handle(&format!("{p}-{name}"));
        let delta = match spec.rule {
            Rule::Sgd => B::affine(&g, lr, 0.0)?,
            Rule::Adam { beta1, beta2, epsilon } => {
                let h = AdamStep::at(step, lr, beta1, beta2, epsilon);
                // One call per variable, which writes the variable itself: a backend may fuse
                // the dozen elementwise ops.
                B::adam_step(var, slot("m")?, slot("v")?, &g, &h)?;
                continue;
            }
            Rule::RmsProp {
                decay,
                epsilon,
                centered,
                momentum,
            } => {
                let slots = RmsPropSlots {
                    v: slot("v")?,
                    mg: centered.then(|| slot("mg")).transpose()?,
                    mom: (momentum > 0.0).then(|| slot("mom")).transpose()?,
                };
                let h = RmsPropStep {
                    lr,
                    decay,
                    epsilon,
                    momentum,
                };
                // As Adam's: one call per variable, which a backend may fuse.
                B::rmsprop_step(var, slots, &g, &h)?;
                continue;
            }
            Rule::Adagrad { epsilon, .. } => {
                let acc = slot("g2")?;
                let acc_new = B::add(B::var_tensor(acc), &B::square(&g)?)?;
                B::var_set(acc, &acc_new)?;
                B::affine(&B::div(&g, &B::affine(&B::sqrt(&acc_new)?, 1.0, epsilon)?)?, lr, 0.0)?
            }
            Rule::Adadelta { rho, epsilon } => {
                let (g2, dx2) = (slot("g2")?, slot("dx2")?);
                let g2_new = B::add(
                    &B::affine(B::var_tensor(g2), rho, 0.0)?,
                    &B::affine(&B::square(&g)?, 1.0 - rho, 0.0)?,
                )?;
                let rms_dx = B::sqrt(&B::affine(B::var_tensor(dx2), 1.0, epsilon)?)?;
                let rms_g = B::sqrt(&B::affine(&g2_new, 1.0, epsilon)?)?;
                let update = B::mul(&B::div(&rms_dx, &rms_g)?, &g)?;
                let dx2_new = B::add(
                    &B::affine(B::var_tensor(dx2), rho, 0.0)?,
                    &B::affine(&B::square(&update)?, 1.0 - rho, 0.0)?,
                )?;
                B::var_set(g2, &g2_new)?;
                B::var_set(dx2, &dx2_new)?;
                B::affine(&update, lr, 0.0)?
            }
        };
        B::var_set(var, &B::sub(&B::detach(B::var_tensor(var)), &delta)?)?;
    }
    Ok(())
}

/// Adam's step on a GPU: the step count, the learning rate and the bias corrections are
/// worked out as 0-d tensors on the device ([`OptimizerOps::adam_step_scaled`]), so an update
/// waits for nothing there and a recorded one replays them as they change. The CPU keeps the
/// host arithmetic of [`AdamStep`], its numbers to the bit.
fn adam_on_device<B: Backend>(
    ctx: &KernelCtx<'_, B>,
    spec: &OptimizerSpec,
    vars: &[(String, &B::Var)],
    grads: Vec<B::Tensor>,
    t: Option<&B::Tensor>,
    [beta1, beta2, epsilon]: [f64; 3],
) -> Result<()> {
    let step_var = ctx.var_handle("step")?;
    let step = B::affine(B::var_tensor(step_var), 1.0, 1.0)?;
    B::var_set(step_var, &step)?;
    let device = B::device(&step);
    let t = match t {
        Some(t) if B::device(t) == device => B::cast(t, DType::F32)?,
        Some(t) => B::cast(&B::to_device(t, device)?, DType::F32)?,
        None => B::scalar(0.0, DType::F32, device)?,
    };
    let step = B::cast(&step, DType::F32)?;
    // 1 / (1 - beta^step), with beta^step = exp(step ln beta).
    let bias = |beta: f64| -> Result<B::Tensor> {
        let one_minus = B::affine(&B::exp(&B::affine(&step, beta.ln(), 0.0)?)?, -1.0, 1.0)?;
        B::div(&B::scalar(1.0, DType::F32, device)?, &one_minus)
    };
    let lr = spec.learning_rate.value_tensor::<B>(&t)?;
    let h = AdamScalars {
        lr_bias1: B::mul(&lr, &bias(beta1)?)?,
        sqrt_bias2: B::sqrt(&bias(beta2)?)?,
        beta1,
        beta2,
        epsilon,
    };
    for ((name, var), g) in vars.iter().zip(grads) {
        let slot = |p: &str| ctx.var_handle(&format!("{p}-{name}"));
        B::adam_step_scaled(var, slot("m")?, slot("v")?, &g, &h)?;
    }
    Ok(())
}

/// An optimizer component named `name`.
pub fn optimizer<B: Backend>(name: &str, spec: OptimizerSpec) -> Component<B> {
    let decl_spec = spec.clone();
    let (step_spec, apply_spec) = (spec.clone(), spec);
    let zero_t = || Value::f32(0.0);
    // RLgraph's type names for the rules.
    let kind = match decl_spec.rule {
        Rule::Sgd => "sgd",
        Rule::Adam { .. } => "adam",
        Rule::RmsProp { .. } => "rms-prop",
        Rule::Adagrad { .. } => "adagrad",
        Rule::Adadelta { .. } => "adadelta",
    };
    Component::new(name)
        .with_kind(kind)
        .api(
            "step",
            vec![
                Param::new("variables"),
                Param::new("loss"),
                Param::with_default("time_percentage", zero_t()),
            ],
            |ctx, args| ctx.graph_fn("step", &[args.get(0)?, args.get(1)?, args.get(2)?]),
        )
        .api(
            "calculate_gradients",
            vec![Param::new("variables"), Param::new("loss")],
            |ctx, args| ctx.graph_fn("calculate_gradients", &[args.get(0)?, args.get(1)?]),
        )
        .api(
            "apply_gradients",
            vec![
                Param::new("variables"),
                Param::new("grads"),
                Param::with_default("time_percentage", zero_t()),
            ],
            |ctx, args| ctx.graph_fn("apply_gradients", &[args.get(0)?, args.get(1)?, args.get(2)?]),
        )
        // The gradients come from this component's own calculate_gradients, so they cannot
        // be part of what makes it input-complete.
        .incomplete_ok()
        .check_inputs(|s| {
            s.expect("variables", "the Dict a component's variables() returns", |sp| {
                matches!(sp, Space::Dict(_))
            })
        })
        .variables(move |spaces| {
            let mut decls = vec![VarDecl::new("step", [], Initializer::Zeros).frozen()];
            let init = match decl_spec.rule {
                Rule::Adagrad {
                    initial_accumulator, ..
                } => Initializer::Constant(initial_accumulator),
                _ => Initializer::Zeros,
            };
            for (key, leaf) in spaces.get("variables")?.flatten() {
                let key = key.trim_start_matches('/');
                for slot in decl_spec.slots() {
                    let shape = leaf.shape().unwrap_or(&[]).to_vec();
                    decls.push(
                        VarDecl::new(format!("{slot}-{key}"), shape, init.clone())
                            .frozen()
                            .with_dtype(DType::F32),
                    );
                }
            }
            Ok(decls)
        })
        .graph_fn(
            GraphFn::new("step", move |ctx, xs| {
                let vars = handles(ctx, &xs[0])?;
                let loss = leaf::<B>(&xs[1], "loss")?;
                let handles: Vec<&B::Var> = vars.iter().map(|(_, v)| *v).collect();
                let grads = B::grads(loss, &handles)?;
                apply(ctx, &step_spec, &vars, grads, xs[2].as_leaf())?;
                Ok(vec![Tree::Leaf(B::detach(loss))])
            })
            .infer(|_, _| Ok(vec![FloatBox::new([]).into()])),
        )
        .graph_fn(
            GraphFn::new("calculate_gradients", |ctx, xs| {
                let vars = handles(ctx, &xs[0])?;
                let handles: Vec<&B::Var> = vars.iter().map(|(_, v)| *v).collect();
                let grads = B::grads(leaf::<B>(&xs[1], "loss")?, &handles)?;
                Ok(vec![Tree::Dict(
                    vars.iter()
                        .zip(grads)
                        .map(|((k, _), g)| (k.clone(), Tree::Leaf(g)))
                        .collect(),
                )])
            })
            .infer(|_, spaces| Ok(vec![spaces[0].clone()])),
        )
        .graph_fn(
            GraphFn::new(
                "apply_gradients",
                move |ctx: &mut KernelCtx<'_, B>, xs: &[Tree<B::Tensor>]| {
                    let vars = handles(ctx, &xs[0])?;
                    let grads: Vec<B::Tensor> = xs[1].flatten().into_iter().map(|(_, g)| g.clone()).collect();
                    if grads.len() != vars.len() {
                        return Err(CoreError::Component {
                            component: ctx.component().into(),
                            method: Some("apply_gradients".into()),
                            reason: format!("{} gradients for {} variables", grads.len(), vars.len()),
                        });
                    }
                    apply(ctx, &apply_spec, &vars, grads, xs[2].as_leaf())?;
                    Ok(vec![])
                },
            )
            .outputs(0)
            .infer(|_, _| Ok(vec![])),
        )
}

fn leaf<'t, B: Backend>(t: &'t Tree<B::Tensor>, what: &str) -> Result<&'t B::Tensor> {
    t.as_leaf().ok_or_else(|| CoreError::Component {
        component: "optimizer".into(),
        method: None,
        reason: format!("{what} must be a single tensor"),
    })
}
