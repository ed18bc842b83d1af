//! Time-dependent parameters (RLgraph's `TimeDependentParameter` and decays): a value that
//! changes with the fraction of training done, `t` in `[0, 1]`.

use serde_json::Value as Json;

use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Param, Result};

use crate::spec::{normalize_type, Spec};
use crate::spec_keys;

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
    /// `to + (from - to) * decay_rate^t`: after all of training `from - to` has shrunk by the
    /// factor `decay_rate` (0.1 by default), RLgraph's `ExponentialDecay`.
    Exponential {
        /// The value at `t = 0`.
        from: f64,
        /// The value approached as `decay_rate^t` goes to zero.
        to: f64,
        /// The factor left of `from - to` at `t = 1`.
        decay_rate: f64,
    },
    /// `schedule` run between the shares `start` and `end` of training, held at its first
    /// value before and its last after: SB3's `learning_starts` and `exploration_fraction`,
    /// spelled `start_time_percentage` and `end_time_percentage` in a decay spec.
    Window {
        /// The time percentage at which `schedule` starts (in `[0, end)`).
        start: f64,
        /// The time percentage at which `schedule` reaches its end (in `(start, 1]`).
        end: f64,
        /// The schedule, over `[start, end]`.
        schedule: Box<TimeDependent>,
    },
}

impl TimeDependent {
    /// The value at time percentage `t`.
    pub fn value(&self, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        match *self {
            TimeDependent::Window {
                start,
                end,
                ref schedule,
            } => schedule.value((t - start) / (end - start)),
            TimeDependent::Constant(v) => v,
            TimeDependent::Linear { from, to } => from - (from - to) * t,
            TimeDependent::Polynomial { from, to, power } => (from - to) * (1.0 - t).powf(power) + to,
            TimeDependent::Exponential { from, to, decay_rate } => to + (from - to) * decay_rate.powf(t),
        }
    }

    /// [`TimeDependent::value`] as backend ops on a 0-d time tensor `t`, so the value stays on
    /// `t`'s device (a recorded update replays it as `t` changes); F32.
    pub fn value_tensor<B: Backend>(&self, t: &B::Tensor) -> Result<B::Tensor> {
        let t = B::clamp(t, 0.0, 1.0)?;
        match *self {
            TimeDependent::Window {
                start,
                end,
                ref schedule,
            } => schedule.value_tensor::<B>(&B::affine(&t, 1.0 / (end - start), -start / (end - start))?),
            TimeDependent::Constant(v) => B::affine(&t, 0.0, v),
            TimeDependent::Linear { from, to } => B::affine(&t, -(from - to), from),
            TimeDependent::Polynomial { from, to, power } => {
                let left = B::affine(&t, -1.0, 1.0)?;
                let powered = B::pow(&left, &B::affine(&t, 0.0, power)?)?;
                B::affine(&powered, from - to, to)
            }
            TimeDependent::Exponential { from, to, decay_rate } => {
                B::affine(&B::exp(&B::affine(&t, decay_rate.ln(), 0.0)?)?, from - to, to)
            }
        }
    }

    /// This schedule, if both its ends are finite and in `[low, high]` (every kind moves
    /// monotonically from one end to the other, so all its values are); otherwise an error at
    /// `at` saying the schedule must be `what`.
    pub fn within(self, low: f64, high: f64, at: &str, what: &str) -> Result<Self> {
        match [self.value(0.0), self.value(1.0)]
            .into_iter()
            .find(|v| !(v.is_finite() && (low..=high).contains(v)))
        {
            Some(v) => Err(CoreError::Config {
                at: at.into(),
                reason: format!("{what}; this schedule reaches {v}"),
            }),
            None => Ok(self),
        }
    }

    /// The value before any training (`t = 0`), which RLgraph returns when `get` is called with
    /// no time percentage (its global step is then still zero).
    pub fn start(&self) -> f64 {
        self.value(0.0)
    }

    /// Parses RLgraph's spellings (its `TimeDependentParameter.from_spec`): a bare number
    /// (constant); `[from, to]` (linear); `[kind, from, to]` and `[kind, from, to, extra]` where
    /// kind is `linear`/`lin`, `polynomial`/`poly` (extra: power, 2 by default),
    /// `exponential`/`exp` (extra: decay_rate, 0.1 by default) or `constant`; and the dict form
    /// `{"type": "linear_decay", "from": .., "to": ..}` (`from_`/`to_` too; `constant_decay` with
    /// `constant_value`, `polynomial_decay` with `power`, `exponential_decay` with `decay_rate`).
    /// `from` defaults to 1 and `to` to 0, as in RLgraph. The dict form may add
    /// `end_time_percentage` (this project's key, not RLgraph's): the schedule reaches `to` at
    /// that share of training and holds it, as SB3's `exploration_fraction` decays epsilon;
    /// and `start_time_percentage`: it holds `from` until that share (SB3's
    /// `learning_starts`, the MinAtar reference's replay warm-up).
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
                    if !(2..=4).contains(&items.len()) {
                        return Err(bad(format!(
                            "expected [kind, from, to] or [kind, from, to, power or decay_rate], got {} items",
                            items.len()
                        )));
                    }
                    let from = num(items.get(1), "from")?;
                    let to = match items.get(2) {
                        None => 0.0,
                        j => num(j, "to")?,
                    };
                    // The fourth item is the power of a polynomial or the decay rate of an
                    // exponential schedule.
                    let extra = match items.get(3) {
                        None => None,
                        j => Some(num(j, "the fourth item (power or decay_rate)")?),
                    };
                    Self::build(kind, from, to, extra.unwrap_or(2.0), extra.unwrap_or(0.1)).map_err(&bad)
                }
                Some(_) if items.len() == 2 => Ok(TimeDependent::Linear {
                    from: num(items.first(), "from")?,
                    to: num(items.get(1), "to")?,
                }),
                _ => Err(bad("expected [from, to] or [\"linear\", from, to]".into())),
            },
            Json::Object(_) => {
                let s = Spec::new(spec, at)?;
                // `max_time_steps` and `resolution` only matter to RLgraph's TensorFlow global
                // step; here the caller always passes the time percentage (or none: the start).
                s.only(spec_keys::SCHEDULE.keys)?;
                let written = s.str_or("type", "constant")?;
                let kind = normalize_type(written);
                let from = s.f64_or("from", s.f64_or("from_", 1.0)?)?;
                let from = s.f64_or("constant_value", s.f64_or("value", from)?)?;
                let to = s.f64_or("to", s.f64_or("to_", 0.0)?)?;
                let wrong_for = |key: &str, kinds: &[&str]| -> Result<()> {
                    match s.get(key) {
                        Some(_) if !kinds.iter().any(|k| kind.trim_end_matches("decay") == *k) => {
                            Err(CoreError::Config {
                                at: s.at(key),
                                reason: format!("{key:?} belongs to {} schedules, not {kind:?}", kinds.join("/")),
                            })
                        }
                        _ => Ok(()),
                    }
                };
                wrong_for("power", &spec_keys::POWER_KINDS)?;
                wrong_for("decay_rate", &spec_keys::DECAY_RATE_KINDS)?;
                let schedule = Self::build(written, from, to, s.f64_or("power", 2.0)?, s.f64_or("decay_rate", 0.1)?)
                    .map_err(&bad)?;
                if s.get("end_time_percentage").is_none() && s.get("start_time_percentage").is_none() {
                    return Ok(schedule);
                }
                let share = |key: &str, default: f64| -> Result<f64> {
                    let x = s.f64_or(key, default)?;
                    match (0.0..=1.0).contains(&x) {
                        true => Ok(x),
                        false => Err(CoreError::Config {
                            at: s.at(key),
                            reason: format!(
                                "expected a share of training from 0 to 1 (0.1: a tenth of the way in), got {x}"
                            ),
                        }),
                    }
                };
                let (start, end) = (share("start_time_percentage", 0.0)?, share("end_time_percentage", 1.0)?);
                if end <= start {
                    let key = if s.get("end_time_percentage").is_some() {
                        "end_time_percentage"
                    } else {
                        "start_time_percentage"
                    };
                    return Err(CoreError::Config {
                        at: s.at(key),
                        reason: format!(
                            "the schedule would end (end_time_percentage {end}) before it starts \
                             (start_time_percentage {start}), got {}",
                            s.f64_or(key, 0.0)?
                        ),
                    });
                }
                Ok(TimeDependent::Window {
                    start,
                    end,
                    schedule: Box::new(schedule),
                })
            }
            other => Err(bad(format!("expected a number, an array or an object, got {other}"))),
        }
    }

    /// The schedule `written` names (case, `-`, `_` and a `_decay` suffix ignored); the
    /// error quotes it as written.
    fn build(written: &str, from: f64, to: f64, power: f64, decay_rate: f64) -> std::result::Result<Self, String> {
        match normalize_type(written).trim_end_matches("decay") {
            "constant" | "timedependentparameter" => Ok(TimeDependent::Constant(from)),
            "linear" | "lin" => Ok(TimeDependent::Linear { from, to }),
            "polynomial" | "poly" => Ok(TimeDependent::Polynomial { from, to, power }),
            "exponential" | "exp" => Ok(TimeDependent::Exponential { from, to, decay_rate }),
            _ => Err(format!(
                "unknown schedule {written:?}; known: constant, linear, polynomial, exponential (with or without _decay)"
            )),
        }
    }

    /// A component `name` with API method `get(time_percentage)`, the schedule's value for each
    /// element of a float tensor of time percentages.
    pub fn component<B: Backend>(&self, name: &str) -> Component<B> {
        let schedule = self.clone();
        let start = self.start();
        Component::new(name)
            .with_kind("parameter")
            .api(
                "get",
                vec![Param::optional("time_percentage")],
                move |ctx, args| match args.opt(0) {
                    Some(t) => ctx.graph_fn("value", &[t]),
                    None => Ok(vec![ctx.constant(Value::f32(start as f32))]),
                },
            )
            .check_inputs(|s| match s.try_get("time_percentage") {
                Some(_) => s.expect("time_percentage", "a FloatBox", |sp| matches!(sp, Space::Float(_))),
                None => Ok(()),
            })
            .graph_fn(
                GraphFn::tensors("value", move |_, xs| Ok(vec![on_tensor::<B>(&schedule, xs[0])?])).infer(
                    |_, spaces| {
                        Ok(vec![Space::from(FloatBox::new(
                            spaces[0].shape().unwrap_or(&[]).to_vec(),
                        ))
                        .with_ranks(spaces[0].ranks().unwrap_or_default())])
                    },
                ),
            )
    }
}

/// `schedule`'s value for each element of the time percentages `t` (clamped into `[0, 1]`).
fn on_tensor<B: Backend>(schedule: &TimeDependent, t: &B::Tensor) -> Result<B::Tensor> {
    let t = B::clamp(t, 0.0, 1.0)?;
    match *schedule {
        TimeDependent::Window {
            start,
            end,
            ref schedule,
        } => on_tensor::<B>(schedule, &B::affine(&t, 1.0 / (end - start), -start / (end - start))?),
        TimeDependent::Constant(v) => B::affine(&t, 0.0, v),
        TimeDependent::Linear { from, to } => B::affine(&t, -(from - to), from),
        TimeDependent::Polynomial { from, to, power } => {
            let one_minus = B::affine(&t, -1.0, 1.0)?;
            let p = B::full(&B::shape(&t), power, B::dtype(&t), B::device(&t))?;
            B::affine(&B::pow(&one_minus, &p)?, from - to, to)
        }
        TimeDependent::Exponential { from, to, decay_rate } => {
            B::affine(&B::exp(&B::affine(&t, decay_rate.ln(), 0.0)?)?, from - to, to)
        }
    }
}
