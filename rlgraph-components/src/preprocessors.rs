//! Preprocessors (clip, convert_type, divide, multiply, normalize; the image and stateful
//! ones live in their own files) and the `PreprocessorStack` that chains them, each with API
//! methods `call(inputs)` and `reset()`.

use serde_json::Value as Json;

use rlgraph_core::spaces::{BoolBox, Dtype, FloatBox, IntBox, Space};
use rlgraph_core::{Backend, Component, CoreError, DType, GraphFn, Param, Result};

use crate::image_preprocessors::{
    grayscale, image_binary, image_crop, image_resize, transpose, Interpolation, GRAYSCALE_WEIGHTS,
};
use crate::spec::{normalize_type, Spec};
use crate::spec_keys;
use crate::stateful_preprocessors::{moving_standardize, sequence};

fn elementwise<B: Backend>(
    name: &str,
    f: impl Fn(&B::Tensor) -> Result<B::Tensor> + Send + Sync + 'static,
    out: fn(&Space) -> Space,
) -> Component<B> {
    Component::new(name)
        .with_kind("preprocessor")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .api("reset", vec![], |_, _| Ok(vec![]))
        .graph_fn(GraphFn::tensors("apply", move |_, xs| Ok(vec![f(xs[0])?])).infer(move |_, s| Ok(vec![out(&s[0])])))
}

/// A uint8 space (`[0, 256)`) of the same shape and ranks.
fn bytes_like(s: &Space) -> Space {
    IntBox::new(256)
        .and_then(|b| b.with_dtype(Dtype::Uint8))
        .map(|b| Space::from(b.with_shape(s.shape().unwrap_or(&[]).to_vec())).with_ranks(s.ranks().unwrap_or_default()))
        .unwrap_or_else(|_| s.clone())
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

/// Every leaf of a Dict or Tuple input, flattened past the batch rank and cast to float,
/// concatenated in flat-key order into one feature vector (a single tensor is flattened the
/// same way). It turns a container observation, such as a Gymnasium Dict, into what a dense
/// network takes.
pub fn concat_leaves<B: Backend>(name: &str) -> Component<B> {
    let kernel = |_: &mut rlgraph_core::KernelCtx<'_, B>, xs: &[rlgraph_core::Tree<B::Tensor>]| {
        let mut parts = vec![];
        for (_, leaf) in xs.first().map(|x| x.flatten()).unwrap_or_default() {
            let shape = B::shape(leaf);
            let batch = shape.first().copied().unwrap_or(1);
            let features = shape.iter().skip(1).product::<usize>();
            parts.push(B::reshape(&B::cast(leaf, DType::F32)?, &[batch, features])?);
        }
        Ok(vec![rlgraph_core::Tree::Leaf(B::concat(&parts, 1)?)])
    };
    let infer = |_: &rlgraph_core::InferCtx<'_>, s: &[Space]| {
        let input = s.first().cloned().unwrap_or_else(|| Space::from(FloatBox::new([0])));
        let leaves = input.flatten();
        let features = leaves
            .iter()
            .map(|(_, l)| l.shape().unwrap_or(&[]).iter().product::<usize>())
            .sum::<usize>();
        let ranks = leaves.first().and_then(|(_, l)| l.ranks()).unwrap_or_default();
        Ok(vec![Space::from(FloatBox::new([features])).with_ranks(ranks)])
    };
    Component::new(name)
        .with_kind("preprocessor")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("concat", &[args.get(0)?])
        })
        .api("reset", vec![], |_, _| Ok(vec![]))
        .graph_fn(GraphFn::new("concat", kernel).infer(infer))
}

/// Converts the element type: `"float"`, `"int"`, `"bool"` or `"uint8"`.
pub fn convert_type<B: Backend>(name: &str, to: Dtype) -> Component<B> {
    let (dtype, out): (DType, fn(&Space) -> Space) = match to {
        Dtype::Float32 | Dtype::Float64 => (DType::F32, float_like),
        Dtype::Bool => (DType::U8, |s| {
            Space::from(BoolBox::new(s.shape().unwrap_or(&[]).to_vec())).with_ranks(s.ranks().unwrap_or_default())
        }),
        Dtype::Uint8 => (DType::U8, bytes_like),
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

/// Values rounded to the nearest integer (halves up) and saturated into `[0, 255]`, as bytes:
/// how this project keeps preprocessed Atari frames (grayscale, resized) as the uint8 they
/// are in RLgraph's and OpenCV's Python path, for storage and transfer. Integer inputs are
/// only saturated.
pub fn round_to_uint8<B: Backend>(name: &str) -> Component<B> {
    elementwise::<B>(
        name,
        |x| {
            let rounded = match B::dtype(x) {
                DType::F32 | DType::F64 => B::floor(&B::affine(x, 1.0, 0.5)?)?,
                _ => x.clone(),
            };
            B::cast(&B::clamp(&rounded, 0.0, 255.0)?, DType::U8)
        },
        bytes_like,
    )
}

/// A stack of preprocessors applied in order: `preprocess(inputs)`; `reset()` clears the state
/// of the stateful ones (frame stacks, running statistics) and returns one dummy output per
/// stateful member, so the resets run.
pub fn preprocessor_stack<B: Backend>(name: &str, layers: Vec<Component<B>>) -> Component<B> {
    let names: Vec<String> = layers.iter().map(|l| l.name().to_string()).collect();
    // Every preprocessor has a reset; other layers put in a stack (dense, say) keep no state.
    let reset_names: Vec<String> = layers
        .iter()
        .filter(|l| l.api_methods().iter().any(|m| m.name == "reset"))
        .map(|l| l.name().to_string())
        .collect();
    layers
        .into_iter()
        .fold(
            Component::new(name).with_kind("preprocessor-stack"),
            Component::with_sub,
        )
        .api("preprocess", vec![Param::new("inputs")], move |ctx, args| {
            let mut x = args.get(0)?;
            for n in &names {
                x = ctx.call(n, "call", &[x])?[0];
            }
            Ok(vec![x])
        })
        .api("reset", vec![], move |ctx, _| {
            let mut outs = vec![];
            for n in &reset_names {
                outs.extend(ctx.call(n, "reset", &[])?);
            }
            Ok(outs)
        })
}

/// Builds a preprocessor from its RLgraph spec, or `None` if the type is not a preprocessor.
pub fn preprocessor_from_spec<B: Backend>(kind: &str, spec: &Json, at: &str) -> Option<Result<Component<B>>> {
    let build = || -> Result<Option<Component<B>>> {
        let s = Spec::new(spec, at)?;
        let scope = |d: &'static str| s.str_or("scope", d);
        Ok(Some(match normalize_type(kind).as_str() {
            "clip" => {
                s.only(spec_keys::CLIP.keys)?;
                let (min, max) = (s.f64_or("min", f64::NEG_INFINITY)?, s.f64_or("max", f64::INFINITY)?);
                if min > max {
                    return Err(CoreError::Config {
                        at: s.at("min"),
                        reason: format!("min {min} is above max {max}; give min <= max"),
                    });
                }
                clip(scope("clip")?, min, max)
            }
            "divide" => {
                s.only(spec_keys::DIVIDE.keys)?;
                let divisor = s.f64_or("divisor", 1.0)?;
                if divisor == 0.0 {
                    return Err(CoreError::Config {
                        at: s.at("divisor"),
                        reason: "dividing by 0 makes every input infinite or NaN; give a non-zero divisor".into(),
                    });
                }
                divide(scope("divide")?, divisor)
            }
            "multiply" => {
                s.only(spec_keys::MULTIPLY.keys)?;
                multiply(scope("multiply")?, s.f64_or("factor", 1.0)?)
            }
            "normalize" => {
                s.only(spec_keys::NORMALIZE.keys)?;
                normalize(scope("normalize")?)
            }
            "roundtouint8" => {
                s.only(spec_keys::ROUND_TO_UINT8.keys)?;
                round_to_uint8(scope("round-to-uint8")?)
            }
            "grayscale" => {
                s.only(spec_keys::GRAYSCALE.keys)?;
                let weights = match s.get("weights") {
                    None | Some(Json::Null) => GRAYSCALE_WEIGHTS.to_vec(),
                    Some(w) => w
                        .as_array()
                        .and_then(|a| a.iter().map(Json::as_f64).collect::<Option<Vec<f64>>>())
                        .filter(|w| !w.is_empty())
                        .ok_or_else(|| CoreError::Config {
                            at: s.at("weights"),
                            reason: format!("expected a non-empty list of numbers, one per colour, got {w}"),
                        })?,
                };
                grayscale(scope("grayscale")?, weights, s.bool_or("keep_rank", false)?)
            }
            "imagecrop" => {
                s.only(spec_keys::IMAGE_CROP.keys)?;
                image_crop(
                    scope("image-crop")?,
                    s.usize_or("x", 0)?,
                    s.usize_or("y", 0)?,
                    s.positive("width")?,
                    s.positive("height")?,
                )
            }
            "imageresize" => {
                s.only(spec_keys::IMAGE_RESIZE.keys)?;
                let name = s.str_or("interpolation", "area")?;
                let how = Interpolation::parse(name).ok_or_else(|| CoreError::Config {
                    at: s.at("interpolation"),
                    reason: format!(
                        "unknown interpolation {name:?}; known: area (RLgraph's default), bilinear (RLgraph's, TensorFlow 1's placement), bilinear_half_pixel (PyTorch's and OpenCV's), nearest"
                    ),
                })?;
                image_resize(scope("image-resize")?, s.positive("width")?, s.positive("height")?, how)
            }
            "imagebinary" => {
                s.only(spec_keys::IMAGE_BINARY.keys)?;
                image_binary(
                    scope("image-binary")?,
                    s.f64_or("threshold", 0.0)?,
                    s.bool_or("keep_rank", false)?,
                )
            }
            "transpose" => {
                s.only(spec_keys::TRANSPOSE.keys)?;
                let perm = match s.get("perm") {
                    None => None,
                    Some(p) => Some(
                        p.as_array()
                            .and_then(|a| a.iter().map(|d| d.as_u64().map(|d| d as usize)).collect())
                            .ok_or_else(|| CoreError::Config {
                                at: s.at("perm"),
                                reason: "expected a list of dimension indices".into(),
                            })?,
                    ),
                };
                transpose(scope("transpose")?, perm)
            }
            "movingstandardize" => {
                s.only(spec_keys::MOVING_STANDARDIZE.keys)?;
                moving_standardize(scope("moving-standardize")?)
            }
            "sequence" => {
                s.only(spec_keys::SEQUENCE.keys)?;
                sequence(
                    scope("sequence")?,
                    s.usize_or("sequence_length", 2)?,
                    s.usize_or("batch_size", 1)?,
                    s.bool_or("add_rank", true)?,
                )
            }
            "concat" | "concatleaves" => {
                s.only(spec_keys::CONCAT_LEAVES.keys)?;
                concat_leaves(scope("concat")?)
            }
            "converttype" => {
                s.only(spec_keys::CONVERT_TYPE.keys)?;
                let name = s.str_or("to_dtype", "float")?;
                let to = Dtype::parse(name).ok_or_else(|| CoreError::Config {
                    at: s.at("to_dtype"),
                    reason: format!("unknown dtype {name:?}"),
                })?;
                convert_type(scope("convert-type")?, to)
            }
            _ => return Ok(None),
        }))
    };
    build().transpose()
}
