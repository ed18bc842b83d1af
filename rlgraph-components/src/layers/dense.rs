//! The dense (fully connected) layer: `y = act(x W + b)` over the last dimension.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Initializer, Param, VarDecl};

use crate::activation::Activation;

/// The settings of a dense layer.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseSpec {
    /// The number of output units.
    pub units: usize,
    /// The activation applied after the affine map.
    pub activation: Activation,
    /// Whether to add a bias.
    pub use_bias: bool,
    /// How the kernel `[inputs, units]` starts (Glorot uniform by default, as RLgraph).
    pub weights: Initializer,
    /// How the bias `[units]` starts (zeros by default).
    pub biases: Initializer,
}

impl DenseSpec {
    /// `units` outputs, linear, with bias, Glorot-uniform kernel and zero bias.
    pub fn new(units: usize) -> Self {
        DenseSpec {
            units,
            activation: Activation::Linear,
            use_bias: true,
            weights: Initializer::GlorotUniform,
            biases: Initializer::Zeros,
        }
    }
}

/// A dense layer named `name`, with one API method `call(inputs)`.
///
/// The input must be a float space with a last dimension (rank 1 or more); leading
/// dimensions (batch, time, more) are kept.
pub fn dense<B: Backend>(name: &str, spec: DenseSpec) -> Component<B> {
    let units = spec.units;
    let width = units * spec.activation.width_factor();
    let (act, use_bias) = (spec.activation, spec.use_bias);
    let (weights, biases) = (spec.weights.clone(), spec.biases.clone());
    Component::new(name)
        .with_kind("dense")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .check_inputs(|spaces| {
            crate::layers::float32_inputs(spaces, "dense")?;
            if let Some(Space::Int(b)) = spaces.try_get("inputs") {
                // Discrete states (a grid world's cell) reach a network as one-hot vectors.
                let n = b.num_categories().map_or("N".to_string(), |n| n.to_string());
                return Err(spaces.mismatch(
                    "inputs",
                    format!(
                        "a FloatBox of rank 1 or more (features last); integer states are one-hot encoded \
                         first, by a reshape preprocessor in the agent's config: \
                         \"preprocessing_spec\": [{{\"type\": \"reshape\", \"flatten\": true, \
                         \"flatten_categories\": {n}}}]"
                    ),
                ));
            }
            spaces.expect("inputs", "a FloatBox of rank 1 or more (features last)", |s| {
                matches!(s, Space::Float(_)) && s.rank().unwrap_or(0) >= 1
            })
        })
        .variables(move |spaces| {
            let inputs = spaces
                .get("inputs")?
                .shape()
                .and_then(|s| s.last().copied())
                .unwrap_or(0);
            let mut vars = vec![VarDecl::new("kernel", [inputs, units], weights.clone())];
            if use_bias {
                vars.push(VarDecl::new("bias", [units], biases.clone()));
            }
            Ok(vars)
        })
        .graph_fn(
            GraphFn::tensors("apply", move |ctx, xs| {
                let x = xs[0];
                let shape = B::shape(x);
                let features = shape.last().copied().unwrap_or(0);
                // Fold all leading dimensions into one for the matmul, then unfold them. At rank
                // 2 (the common case) both reshapes are skipped: each costs a dispatch on tch.
                let folded = shape.len() != 2;
                let rows: usize = shape[..shape.len().saturating_sub(1)].iter().product();
                let flat;
                let x = if folded {
                    flat = B::reshape(x, &[rows, features])?;
                    &flat
                } else {
                    x
                };
                // tanh after a bias is one backend op: a fused kernel skips the pre-activation.
                let fused = use_bias && act == Activation::Tanh;
                let mut y = if fused {
                    B::linear_tanh(x, ctx.var("kernel")?, ctx.var("bias")?)?
                } else if use_bias {
                    B::linear(x, ctx.var("kernel")?, ctx.var("bias")?)?
                } else {
                    B::matmul(x, ctx.var("kernel")?)?
                };
                if folded {
                    let mut out_shape = shape.clone();
                    if let Some(last) = out_shape.last_mut() {
                        *last = units;
                    }
                    y = B::reshape(&y, &out_shape)?;
                }
                Ok([if fused { y } else { act.apply::<B>(&y)? }])
            })
            .infer(move |ctx, spaces| {
                let s = &spaces[0];
                let mut shape = s.shape().unwrap_or(&[]).to_vec();
                match shape.last_mut() {
                    Some(last) => *last = width,
                    None => {
                        return Err(CoreError::Component {
                            component: ctx.component().into(),
                            method: Some("apply".into()),
                            reason: "dense needs inputs with a last (feature) dimension".into(),
                        })
                    }
                }
                Ok(vec![
                    Space::from(FloatBox::new(shape)).with_ranks(s.ranks().unwrap_or_default())
                ])
            }),
        )
}
