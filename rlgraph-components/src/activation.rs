//! Activation functions, as RLgraph names them, written once over `Backend`.

use serde_json::Value as Json;

use rlgraph_core::{Backend, CoreError, Result};

/// An activation function applied elementwise (softmax and crelu over the last dimension).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Activation {
    /// `x`.
    Linear,
    /// `max(x, 0)`.
    Relu,
    /// `x` for `x > 0`, else `e^x - 1`.
    Elu,
    /// `scale * elu_alpha(x)` with Klambauer et al.'s constants.
    Selu,
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `e^x / sum(e^x)` over the last dimension.
    Softmax,
    /// `ln(1 + e^x)`.
    Softplus,
    /// `x / (1 + |x|)`.
    Softsign,
    /// `x * sigmoid(x)`.
    Swish,
    /// `x` for `x > 0`, else `alpha * x` (alpha 0.2 by default, as RLgraph).
    LRelu(f64),
    /// `[relu(x), relu(-x)]` concatenated on the last dimension (doubles it).
    CRelu,
}

const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

impl Activation {
    /// Parses RLgraph's names (`"relu"`, `"lrelu"`, `"leaky_relu"`, `None`/`"linear"`, ...);
    /// `params` are RLgraph's `activation_params` (lrelu's alpha).
    pub fn parse(name: Option<&str>, params: Option<&Json>, at: &str) -> Result<Self> {
        let alpha = params
            .and_then(|p| p.as_array().and_then(|a| a.first()).or(Some(p)))
            .and_then(Json::as_f64);
        let name = name.map(|n| n.to_ascii_lowercase().replace(['-', '_'], ""));
        Ok(match name.as_deref() {
            None | Some("linear") | Some("none") | Some("identity") => Activation::Linear,
            Some("relu") => Activation::Relu,
            Some("elu") => Activation::Elu,
            Some("selu") => Activation::Selu,
            Some("sigmoid") => Activation::Sigmoid,
            Some("tanh") => Activation::Tanh,
            Some("softmax") => Activation::Softmax,
            Some("softplus") => Activation::Softplus,
            Some("softsign") => Activation::Softsign,
            Some("swish") => Activation::Swish,
            Some("lrelu") | Some("leakyrelu") => Activation::LRelu(alpha.unwrap_or(0.2)),
            Some("crelu") => Activation::CRelu,
            Some(other) => {
                return Err(CoreError::Config {
                    at: at.into(),
                    reason: format!(
                        "unknown activation {other:?}; known: linear, relu, elu, selu, sigmoid, tanh, softmax, softplus, softsign, swish, lrelu, crelu"
                    ),
                })
            }
        })
    }

    /// How much the activation multiplies the last dimension (2 for crelu, else 1).
    pub fn width_factor(&self) -> usize {
        if *self == Activation::CRelu {
            2
        } else {
            1
        }
    }

    /// Applies the activation to `x`.
    pub fn apply<B: Backend>(&self, x: &B::Tensor) -> Result<B::Tensor> {
        let zero = || B::scalar(0.0, B::dtype(x), B::device(x));
        // e^min(x, 0) - 1: the exponent never overflows, so neither does its gradient.
        let expm1_neg =
            |x: &B::Tensor| -> Result<B::Tensor> { B::affine(&B::exp(&B::minimum(x, &zero()?)?)?, 1.0, -1.0) };
        match self {
            Activation::Linear => Ok(x.clone()),
            Activation::Relu => B::relu(x),
            Activation::Elu => B::where_cond(&B::gt(x, &zero()?)?, x, &expm1_neg(x)?),
            Activation::Selu => B::affine(
                &B::where_cond(&B::gt(x, &zero()?)?, x, &B::affine(&expm1_neg(x)?, SELU_ALPHA, 0.0)?)?,
                SELU_SCALE,
                0.0,
            ),
            Activation::Sigmoid => B::sigmoid(x),
            Activation::Tanh => B::tanh(x),
            Activation::Softmax => {
                let last = B::shape(x).len().saturating_sub(1);
                let shifted = B::sub(x, &B::max(x, last, true)?)?;
                let e = B::exp(&shifted)?;
                B::div(&e, &B::sum(&e, &[last], true)?)
            }
            // relu(x) + ln(1 + e^-|x|), which never overflows.
            Activation::Softplus => B::add(
                &B::relu(x)?,
                &B::log(&B::affine(&B::exp(&B::neg(&B::abs(x)?)?)?, 1.0, 1.0)?)?,
            ),
            Activation::Softsign => B::div(x, &B::affine(&B::abs(x)?, 1.0, 1.0)?),
            Activation::Swish => B::mul(x, &B::sigmoid(x)?),
            Activation::LRelu(alpha) => B::where_cond(&B::gt(x, &zero()?)?, x, &B::affine(x, *alpha, 0.0)?),
            Activation::CRelu => {
                let last = B::shape(x).len().saturating_sub(1);
                B::concat(&[B::relu(x)?, B::relu(&B::neg(x)?)?], last)
            }
        }
    }
}
