//! 2-D convolution and max pooling over NHWC images (as Atari frames come), with TensorFlow's
//! `same` / `valid` padding rules, so RLgraph configs mean what they meant there.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, GraphFn, Initializer, InputSpaces, Param, Result, VarDecl};

use crate::activation::Activation;

/// `same` (output `ceil(in / stride)`, zero padding split before/after, the extra one after)
/// or `valid` (no padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// Pad so the output covers every input position.
    Same,
    /// No padding.
    Valid,
}

impl Padding {
    /// Parses `"same"` / `"valid"` (any case).
    pub fn parse(text: &str, at: &str) -> Result<Self> {
        match text.to_ascii_lowercase().as_str() {
            "same" => Ok(Padding::Same),
            "valid" => Ok(Padding::Valid),
            other => Err(CoreError::Config {
                at: at.into(),
                reason: format!("unknown padding {other:?}; use \"same\" or \"valid\""),
            }),
        }
    }

    /// Output length and (before, after) padding for an input of `n`, window `k`, stride `s`.
    pub fn plan(&self, n: usize, k: usize, s: usize) -> (usize, usize, usize) {
        match self {
            Padding::Valid => ((n.saturating_sub(k)) / s + 1, 0, 0),
            Padding::Same => {
                let out = n.div_ceil(s);
                let total = ((out - 1) * s + k).saturating_sub(n);
                (out, total / 2, total - total / 2)
            }
        }
    }
}

/// The settings of a 2-D convolution layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv2dSpec {
    /// Output channels.
    pub filters: usize,
    /// Square kernel side.
    pub kernel_size: usize,
    /// Stride in both directions.
    pub strides: usize,
    /// Padding rule.
    pub padding: Padding,
    /// Activation after the bias.
    pub activation: Activation,
    /// Whether to add a bias per filter.
    pub use_bias: bool,
    /// Kernel initializer (kernel stored as `[filters, in_channels, k, k]`).
    pub weights: Initializer,
    /// Bias initializer.
    pub biases: Initializer,
}

/// NHWC -> NCHW (a view).
fn to_nchw<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    B::permute(x, &[0, 3, 1, 2])
}

/// NCHW -> NHWC (a view).
fn to_nhwc<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    B::permute(x, &[0, 2, 3, 1])
}

/// Pads H and W (dims 2 and 3 of NCHW) with `fill` as `plan` says.
fn pad_hw<B: Backend>(x: &B::Tensor, pads: [(usize, usize); 2], fill: f64) -> Result<B::Tensor> {
    if pads == [(0, 0); 2] {
        return Ok(x.clone());
    }
    let padded = B::pad_zeros(&B::pad_zeros(x, 2, pads[0].0, pads[0].1)?, 3, pads[1].0, pads[1].1)?;
    if fill == 0.0 {
        return Ok(padded);
    }
    let ones = B::full(&B::shape(x), 1.0, B::dtype(x), B::device(x))?;
    let inside = B::pad_zeros(&B::pad_zeros(&ones, 2, pads[0].0, pads[0].1)?, 3, pads[1].0, pads[1].1)?;
    let fill = B::scalar(fill, B::dtype(x), B::device(x))?;
    B::where_cond(
        &B::gt(&inside, &B::scalar(0.5, B::dtype(x), B::device(x))?)?,
        &padded,
        &fill,
    )
}

/// Runs `op` on NHWC input `x` as NCHW, after padding H and W with `fill` as `padding` says
/// for window `k` and stride `s`; leading dimensions beyond the image's three are kept. `op`
/// answers NCHW, or NHWC where `nhwc_out`.
fn on_padded_nchw<B: Backend>(
    x: &B::Tensor,
    (k, s): (usize, usize),
    padding: Padding,
    (fill, nhwc_out): (f64, bool),
    op: impl FnOnce(&B::Tensor) -> Result<B::Tensor>,
) -> Result<B::Tensor> {
    let shape = B::shape(x);
    let lead = shape.len().saturating_sub(3);
    let rows: usize = shape[..lead].iter().product();
    let (h, w, c) = (shape[lead], shape[lead + 1], shape[lead + 2]);
    // Only extra leading (batch and time) dimensions need folding; a reshape is a dispatch.
    let nchw = if lead == 1 {
        to_nchw::<B>(x)?
    } else {
        to_nchw::<B>(&B::reshape(x, &[rows, h, w, c])?)?
    };
    let (_, hb, ha) = padding.plan(h, k, s);
    let (_, wb, wa) = padding.plan(w, k, s);
    let y = op(&pad_hw::<B>(&nchw, [(hb, ha), (wb, wa)], fill)?)?;
    let y = if nhwc_out { y } else { to_nhwc::<B>(&y)? };
    if lead == 1 {
        return Ok(y);
    }
    let mut full = shape[..lead].to_vec();
    full.extend_from_slice(&B::shape(&y)[1..]);
    B::reshape(&y, &full)
}

fn image_dims(space: &Space, who: &str) -> std::result::Result<[usize; 3], String> {
    match space.shape() {
        Some(&[h, w, c]) if matches!(space, Space::Float(_)) => Ok([h, w, c]),
        _ => Err(format!(
            "{who} needs NHWC float images: a FloatBox of shape [height, width, channels]"
        )),
    }
}

/// Refuses what no window can slide over: a window or stride of 0, an empty image, and (with
/// `valid` padding) an image smaller than the window.
fn check_window(sp: &InputSpaces, who: &str, k: usize, s: usize, padding: Padding) -> Result<()> {
    if who == "conv2d" {
        crate::layers::float32_inputs(sp, who)?;
    }
    let [h, w, c] = image_dims(sp.get("inputs")?, who).map_err(|e| sp.mismatch("inputs", e))?;
    if k == 0 || s == 0 {
        return Err(CoreError::Component {
            component: sp.component().into(),
            method: None,
            reason: format!("{who} needs a window and strides of at least 1, got window {k} and strides {s}"),
        });
    }
    if h == 0 || w == 0 || c == 0 {
        return Err(sp.mismatch(
            "inputs",
            format!("{who} needs images with at least one pixel and channel"),
        ));
    }
    if padding == Padding::Valid && (k > h || k > w) {
        return Err(sp.mismatch(
            "inputs",
            format!("images of at least {k}x{k} for {who}'s {k}x{k} window with valid padding (or padding \"same\")"),
        ));
    }
    Ok(())
}

/// A 2-D convolution layer named `name`, API method `call(inputs)` on NHWC float images.
pub fn conv2d<B: Backend>(name: &str, spec: Conv2dSpec) -> Component<B> {
    let Conv2dSpec {
        filters,
        kernel_size: k,
        strides: s,
        padding,
        activation,
        use_bias,
        weights,
        biases,
    } = spec;
    Component::new(name)
        .with_kind("conv2d")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .check_inputs(move |sp| check_window(sp, "conv2d", k, s, padding))
        .variables(move |sp| {
            let [_, _, c] = image_dims(sp.get("inputs")?, "conv2d").map_err(|e| sp.mismatch("inputs", e))?;
            let mut v = vec![VarDecl::new("kernel", [filters, c, k, k], weights.clone())];
            if use_bias {
                v.push(VarDecl::new("bias", [filters], biases.clone()));
            }
            Ok(v)
        })
        .graph_fn(
            GraphFn::tensors("apply", move |ctx, xs| {
                // The convolution answers NHWC, which on candle's CPU path is the product's
                // own contiguous layout: the activation and a flatten after it then need no
                // copy. On other backends it is a permuted view.
                let y = on_padded_nchw::<B>(xs[0], (k, s), padding, (0.0, true), |x| {
                    let bias = match use_bias {
                        true => Some(ctx.var("bias")?),
                        false => None,
                    };
                    B::conv2d_nhwc(x, ctx.var("kernel")?, bias, s, 0)
                })?;
                Ok([activation.apply::<B>(&y)?])
            })
            .infer(move |_, spaces| {
                let [h, w, _] = image_dims(&spaces[0], "conv2d").map_err(|e| CoreError::Component {
                    component: "conv2d".into(),
                    method: None,
                    reason: e,
                })?;
                let shape = vec![
                    padding.plan(h, k, s).0,
                    padding.plan(w, k, s).0,
                    filters * activation.width_factor(),
                ];
                Ok(vec![
                    Space::from(FloatBox::new(shape)).with_ranks(spaces[0].ranks().unwrap_or_default())
                ])
            }),
        )
}

/// 2-D max pooling named `name`, API method `call(inputs)` on NHWC float images; `same`
/// padding pads with -infinity, so padding never wins the max.
pub fn max_pool2d<B: Backend>(name: &str, pool_size: usize, strides: usize, padding: Padding) -> Component<B> {
    let (k, s) = (pool_size, strides);
    Component::new(name)
        .with_kind("max-pool2d")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .check_inputs(move |sp| check_window(sp, "max-pool", k, s, padding))
        .graph_fn(
            GraphFn::tensors("apply", move |_, xs| {
                Ok(vec![on_padded_nchw::<B>(
                    xs[0],
                    (k, s),
                    padding,
                    (f64::NEG_INFINITY, false),
                    |x| B::max_pool2d(x, k, s),
                )?])
            })
            .infer(move |_, spaces| {
                let [h, w, c] = image_dims(&spaces[0], "max-pool").map_err(|e| CoreError::Component {
                    component: "max-pool".into(),
                    method: None,
                    reason: e,
                })?;
                Ok(vec![Space::from(FloatBox::new(vec![
                    padding.plan(h, k, s).0,
                    padding.plan(w, k, s).0,
                    c,
                ]))
                .with_ranks(spaces[0].ranks().unwrap_or_default())])
            }),
        )
}
