//! Local response normalization over the channel (last) dimension, as RLgraph's
//! `LocalResponseNormalizationLayer` and TensorFlow's `tf.nn.local_response_normalization`
//! define it.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, DType, GraphFn, HostData, HostTensor, Param};

/// The settings of [`local_response_norm`], with RLgraph's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LrnSpec {
    /// How many neighbouring channels on each side enter the sum.
    pub depth_radius: usize,
    /// Added to the scaled sum before the power.
    pub bias: f64,
    /// Scales the sum of squares.
    pub alpha: f64,
    /// The power the denominator is raised to.
    pub beta: f64,
}

impl Default for LrnSpec {
    fn default() -> Self {
        LrnSpec {
            depth_radius: 5,
            bias: 1.0,
            alpha: 1.0,
            beta: 0.5,
        }
    }
}

/// `call(inputs)`: `x[.., d] / (bias + alpha * sum(x[.., d - r ..= d + r]^2))^beta`, the sum
/// running over the channels within `depth_radius` of `d`; the result is float.
pub fn local_response_norm<B: Backend>(name: &str, spec: LrnSpec) -> Component<B> {
    Component::new(name)
        .with_kind("local-response-normalization")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .check_inputs(|s| {
            s.expect("inputs", "a float or int space with a channel dimension", |sp| {
                matches!(sp, Space::Float(_) | Space::Int(_)) && sp.shape().is_some_and(|d| !d.is_empty())
            })
        })
        .graph_fn(
            GraphFn::tensors("apply", move |_, xs| {
                let x = B::cast(xs[0], DType::F32)?;
                let shape = B::shape(&x);
                let c = shape.last().copied().unwrap_or(1);
                let rest: usize = shape[..shape.len().saturating_sub(1)].iter().product();
                // The windowed sum over channels is one product with a banded matrix of ones.
                let band: Vec<f32> = (0..c * c)
                    .map(|k| f32::from(u8::from((k / c).abs_diff(k % c) <= spec.depth_radius)))
                    .collect();
                let band = B::from_host(
                    &HostTensor {
                        shape: vec![c, c],
                        data: HostData::F32(band),
                    },
                    B::device(&x),
                )?;
                let squares = B::reshape(&B::mul(&x, &x)?, &[rest, c])?;
                let sums = B::reshape(&B::matmul(&squares, &band)?, &shape)?;
                // (bias + alpha s)^beta as exp(beta ln(..)): bias > 0 keeps the log finite.
                let denom = B::exp(&B::affine(
                    &B::log(&B::affine(&sums, spec.alpha, spec.bias)?)?,
                    spec.beta,
                    0.0,
                )?)?;
                Ok(vec![B::div(&x, &denom)?])
            })
            .infer(|_, s| {
                Ok(vec![Space::from(FloatBox::new(s[0].shape().unwrap_or(&[]).to_vec()))
                    .with_ranks(s[0].ranks().unwrap_or_default())])
            }),
        )
}
