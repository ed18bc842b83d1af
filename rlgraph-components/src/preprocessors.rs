//! Preprocessors (clip, convert_type, divide, multiply, normalize) and the `PreprocessorStack`
//! that chains them, each with API method `call(inputs)`.

use serde_json::Value as Json;

use rlgraph_core::spaces::{BoolBox, Dtype, FloatBox, IntBox, Space};
use rlgraph_core::{Backend, Component, CoreError, DType, GraphFn, Param, Result};

use crate::spec::{normalize_type, Spec};

fn elementwise<B: Backend>(
    name: &str,
    f: impl Fn(&B::Tensor) -> Result<B::Tensor> + Send + Sync + 'static,
    out: fn(&Space) -> Space,
) -> Component<B> {
    Component::new(name)
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .graph_fn(GraphFn::tensors("apply", move |_, xs| Ok(vec![f(xs[0])?])).infer(move |_, s| Ok(vec![out(&s[0])])))
}

/// An unbounded float space of the same shape and ranks.
fn float_like(s: &Space) -> Space {
    Space::from(FloatBox::new(s.shape().unwrap_or(&[]).to_vec())).with_ranks(s.ranks().unwrap_or_default())
}

/// `min(max(x, low), high)`.
pub fn clip<B: Backend>(name: &str, low: f64, high: f64) -> Component<B> {
    elementwise::<B>(name, move |x| B::clamp(x, low, high), |s| s.clone())
}

/// `x / divisor` (as floats).
pub fn divide<B: Backend>(name: &str, divisor: f64) -> Component<B> {
    elementwise::<B>(
        name,
        move |x| B::affine(&B::cast(x, DType::F32)?, 1.0 / divisor, 0.0),
        float_like,
    )
}

/// `x * factor` (as floats).
pub fn multiply<B: Backend>(name: &str, factor: f64) -> Component<B> {
    elementwise::<B>(
        name,
        move |x| B::affine(&B::cast(x, DType::F32)?, factor, 0.0),
        float_like,
    )
}

/// Each item (everything but the batch dimension) scaled to `[0, 1]`: `(x - min) / (max - min)`.
pub fn normalize<B: Backend>(name: &str) -> Component<B> {
    elementwise::<B>(
        name,
        |x| {
            let shape = B::shape(x);
            let batch = shape.first().copied().unwrap_or(1);
            let flat = B::reshape(&B::cast(x, DType::F32)?, &[batch, shape.iter().skip(1).product()])?;
            let (lo, hi) = (B::min(&flat, 1, true)?, B::max(&flat, 1, true)?);
            // A constant item has max == min; the tiny epsilon keeps it at 0 rather than NaN.
            let range = B::affine(&B::sub(&hi, &lo)?, 1.0, 1e-8)?;
            B::reshape(&B::div(&B::sub(&flat, &lo)?, &range)?, &shape)
        },
        float_like,
    )
}

/// Converts the element type: `"float"`, `"int"`, `"bool"` or `"uint8"`.
pub fn convert_type<B: Backend>(name: &str, to: Dtype) -> Component<B> {
    let (dtype, out): (DType, fn(&Space) -> Space) = match to {
        Dtype::Float32 | Dtype::Float64 => (DType::F32, float_like),
        Dtype::Bool => (DType::U8, |s| {
            Space::from(BoolBox::new(s.shape().unwrap_or(&[]).to_vec())).with_ranks(s.ranks().unwrap_or_default())
        }),
        Dtype::Uint8 => (DType::U8, |s| {
            IntBox::new(256)
                .and_then(|b| b.with_dtype(Dtype::Uint8))
                .map(|b| {
                    Space::from(b.with_shape(s.shape().unwrap_or(&[]).to_vec()))
                        .with_ranks(s.ranks().unwrap_or_default())
                })
                .unwrap_or_else(|_| s.clone())
        }),
        _ => (DType::I64, |s| {
            Space::from(IntBox::unbounded().with_shape(s.shape().unwrap_or(&[]).to_vec()))
                .with_ranks(s.ranks().unwrap_or_default())
        }),
    };
    elementwise::<B>(
        name,
        move |x| {
            if to == Dtype::Bool {
                B::cast(&B::gt(&B::abs(x)?, &B::scalar(0.0, B::dtype(x), B::device(x))?)?, dtype)
            } else {
                B::cast(x, dtype)
            }
        },
        out,
    )
}

/// A stack of preprocessors applied in order: `preprocess(inputs)`; `reset()` clears the state
/// of stateful preprocessors (none of today's keep any, so it does nothing yet).
pub fn preprocessor_stack<B: Backend>(name: &str, layers: Vec<Component<B>>) -> Component<B> {
    let names: Vec<String> = layers.iter().map(|l| l.name().to_string()).collect();
    layers
        .into_iter()
        .fold(Component::new(name), Component::with_sub)
        .api("preprocess", vec![Param::new("inputs")], move |ctx, args| {
            let mut x = args.get(0)?;
            for n in &names {
                x = ctx.call(n, "call", &[x])?[0];
            }
            Ok(vec![x])
        })
        .api("reset", vec![], |_, _| Ok(vec![]))
}

/// Builds a preprocessor from its RLgraph spec, or `None` if the type is not a preprocessor.
pub fn preprocessor_from_spec<B: Backend>(kind: &str, spec: &Json, at: &str) -> Option<Result<Component<B>>> {
    let build = || -> Result<Component<B>> {
        let s = Spec::new(spec, at)?;
        let scope = |d: &'static str| s.str_or("scope", d);
        Ok(match normalize_type(kind).as_str() {
            "clip" => {
                s.only(&["min", "max", "scope"])?;
                clip(
                    scope("clip")?,
                    s.f64_or("min", f64::NEG_INFINITY)?,
                    s.f64_or("max", f64::INFINITY)?,
                )
            }
            "divide" => {
                s.only(&["divisor", "scope"])?;
                divide(scope("divide")?, s.f64_or("divisor", 1.0)?)
            }
            "multiply" => {
                s.only(&["factor", "scope"])?;
                multiply(scope("multiply")?, s.f64_or("factor", 1.0)?)
            }
            "normalize" => {
                s.only(&["scope"])?;
                normalize(scope("normalize")?)
            }
            _ => {
                s.only(&["to_dtype", "scope"])?;
                let name = s.str_or("to_dtype", "float")?;
                let to = Dtype::parse(name).ok_or_else(|| CoreError::Config {
                    at: s.at("to_dtype"),
                    reason: format!("unknown dtype {name:?}"),
                })?;
                convert_type(scope("convert-type")?, to)
            }
        })
    };
    matches!(
        normalize_type(kind).as_str(),
        "clip" | "divide" | "multiply" | "normalize" | "converttype"
    )
    .then(build)
}
