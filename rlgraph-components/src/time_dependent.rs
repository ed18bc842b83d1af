//! Time-dependent parameters (RLgraph's `TimeDependentParameter` and decays): a value that
//! changes with the fraction of training done, `t` in `[0, 1]`.

use serde_json::Value as Json;

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Param, Result};

use crate::spec::{normalize_type, Spec};

/// A schedule over the time percentage `t` (clamped into `[0, 1]`).
#[derive(Clone, Debug, PartialEq)]
pub enum TimeDependent {
    /// Always `value`.
    Constant(f64),
    /// `from - (from - to) * t`.
    Linear {
        /// The value at `t = 0`.
        from: f64,
        /// The value at `t = 1`.
        to: f64,
    },
    /// `(from - to) * (1 - t)^power + to` (power 2 by default).
    Polynomial {
        /// The value at `t = 0`.
        from: f64,
        /// The value at `t = 1`.
        to: f64,
        /// The exponent.
        power: f64,
    },
    /// `from * decay_rate^t`: after all of training the value is `decay_rate` times `from`
    /// (0.1 by default).
    Exponential {
        /// The value at `t = 0`.
        from: f64,
        /// The factor reached at `t = 1`.
        decay_rate: f64,
    },
}

impl TimeDependent {
    /// The value at time percentage `t`.
    pub fn value(&self, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        match *self {
            TimeDependent::Constant(v) => v,
            TimeDependent::Linear { from, to } => from - (from - to) * t,
            TimeDependent::Polynomial { from, to, power } => (from - to) * (1.0 - t).powf(power) + to,
            TimeDependent::Exponential { from, decay_rate } => from * decay_rate.powf(t),
        }
    }

    /// Parses RLgraph's spellings: a number; `[from, to]`; `["linear", from, to]`,
    /// `["polynomial", from, to, power?]`, `["exponential", from, decay_rate?]`; and the dict
    /// form `{"type": "linear_decay", "from": .., "to": ..}` (also `constant_decay` with
    /// `constant_value`, `polynomial_decay` with `power`, `exponential_decay` with `decay_rate`).
    pub fn parse(spec: &Json, at: &str) -> Result<Self> {
        let bad = |reason: String| CoreError::Config { at: at.into(), reason };
        let num = |j: Option<&Json>, what: &str| {
            j.and_then(Json::as_f64)
                .ok_or_else(|| bad(format!("{what} must be a number")))
        };
        match spec {
            Json::Number(n) => n
                .as_f64()
                .map(TimeDependent::Constant)
                .ok_or_else(|| bad("not a finite number".into())),
            Json::Array(items) => match items.first() {
                Some(Json::String(kind)) => {
                    let from = num(items.get(1), "from")?;
                    match normalize_type(kind).trim_end_matches("decay") {
                        "constant" => Ok(TimeDependent::Constant(from)),
                        "linear" => Ok(TimeDependent::Linear {
                            from,
                            to: num(items.get(2), "to")?,
                        }),
                        "polynomial" => Ok(TimeDependent::Polynomial {
                            from,
                            to: num(items.get(2), "to")?,
                            power: items.get(3).and_then(Json::as_f64).unwrap_or(2.0),
                        }),
                        "exponential" => Ok(TimeDependent::Exponential {
                            from,
                            decay_rate: items.get(2).and_then(Json::as_f64).unwrap_or(0.1),
                        }),
                        other => Err(bad(format!(
                            "unknown schedule {other:?}; known: constant, linear, polynomial, exponential"
                        ))),
                    }
                }
                Some(_) if items.len() == 2 => Ok(TimeDependent::Linear {
                    from: num(items.first(), "from")?,
                    to: num(items.get(1), "to")?,
                }),
                _ => Err(bad("expected [from, to] or [\"linear\", from, to]".into())),
            },
            Json::Object(_) => {
                let s = Spec::new(spec, at)?;
                let kind = s.str_or("type", "constant")?;
                match normalize_type(kind).trim_end_matches("decay") {
                    "constant" => {
                        s.only(&["constant_value", "value"])?;
                        Ok(TimeDependent::Constant(s.f64_or("constant_value", s.f64_or("value", 0.0)?)?))
                    }
                    "linear" => {
                        s.only(&["from", "to"])?;
                        Ok(TimeDependent::Linear { from: s.f64_or("from", 1.0)?, to: s.f64_or("to", 0.0)? })
                    }
                    "polynomial" => {
                        s.only(&["from", "to", "power"])?;
                        Ok(TimeDependent::Polynomial { from: s.f64_or("from", 1.0)?, to: s.f64_or("to", 0.0)?, power: s.f64_or("power", 2.0)? })
                    }
                    "exponential" => {
                        s.only(&["from", "decay_rate"])?;
                        Ok(TimeDependent::Exponential { from: s.f64_or("from", 1.0)?, decay_rate: s.f64_or("decay_rate", 0.1)? })
                    }
                    other => Err(bad(format!("unknown schedule type {other:?}; known: constant_decay, linear_decay, polynomial_decay, exponential_decay"))),
                }
            }
            other => Err(bad(format!("expected a number, an array or an object, got {other}"))),
        }
    }

    /// A component `name` with API method `get(time_percentage)`, the schedule's value for each
    /// element of a float tensor of time percentages.
    pub fn component<B: Backend>(&self, name: &str) -> Component<B> {
        let schedule = self.clone();
        Component::new(name)
            .with_kind("parameter")
            .api("get", vec![Param::new("time_percentage")], |ctx, args| {
                ctx.graph_fn("value", &[args.get(0)?])
            })
            .check_inputs(|s| s.expect("time_percentage", "a FloatBox", |sp| matches!(sp, Space::Float(_))))
            .graph_fn(
                GraphFn::tensors("value", move |_, xs| {
                    let t = B::clamp(xs[0], 0.0, 1.0)?;
                    Ok(vec![match schedule {
                        TimeDependent::Constant(v) => B::affine(&t, 0.0, v)?,
                        TimeDependent::Linear { from, to } => B::affine(&t, -(from - to), from)?,
                        TimeDependent::Polynomial { from, to, power } => {
                            let one_minus = B::affine(&t, -1.0, 1.0)?;
                            let p = B::full(&B::shape(&t), power, B::dtype(&t), B::device(&t))?;
                            B::affine(&B::pow(&one_minus, &p)?, from - to, to)?
                        }
                        TimeDependent::Exponential { from, decay_rate } => {
                            B::affine(&B::exp(&B::affine(&t, decay_rate.ln(), 0.0)?)?, from, 0.0)?
                        }
                    }])
                })
                .infer(|_, spaces| {
                    Ok(vec![Space::from(FloatBox::new(
                        spaces[0].shape().unwrap_or(&[]).to_vec(),
                    ))
                    .with_ranks(spaces[0].ranks().unwrap_or_default())])
                }),
            )
    }
}
