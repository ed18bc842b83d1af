//! Image preprocessors on NHWC batches, as Atari frames come: grayscale, crop, bilinear
//! resize, and transpose. Each has API method `call(inputs)` (and a `reset` that does
//! nothing, so a preprocessor stack can reset every member alike).

use rlgraph_core::spaces::{BoolBox, FloatBounds, FloatBox, Space};
use rlgraph_core::{Backend, Component, DType, GraphFn, HostData, HostTensor, Param, Result};

/// RLgraph's (and ITU-R 601's) luma weights for red, green, blue.
pub const GRAYSCALE_WEIGHTS: [f64; 3] = [0.299, 0.587, 0.114];

/// A one-input preprocessor: `call(inputs)` runs `kernel` on the tensor and the number of
/// leading batch/time dimensions; `out` gives the output space.
fn image_op<B: Backend>(
    name: &str,
    kernel: impl Fn(&B::Tensor, usize) -> Result<B::Tensor> + Send + Sync + 'static,
    out: impl Fn(&Space) -> Result<Space> + Send + Sync + 'static,
    check: impl Fn(&[usize]) -> std::result::Result<(), String> + Send + Sync + 'static,
) -> Component<B> {
    let label = format!("a float or int image whose shape fits {name}");
    Component::new(name)
        .with_kind("image-preprocessor")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .api("reset", vec![], |_, _| Ok(vec![]))
        .check_inputs(move |s| {
            let space = s.get("inputs")?;
            let shape = space.shape().map(<[usize]>::to_vec).unwrap_or_default();
            check(&shape).map_err(|why| s.mismatch("inputs", format!("{label} ({why})")))
        })
        .graph_fn(
            GraphFn::tensors("apply", move |ctx, xs| {
                let lead = ctx.input_space(0).and_then(Space::ranks).map_or(0, |r| r.count());
                Ok(vec![kernel(xs[0], lead)?])
            })
            .infer(move |_, s| Ok(vec![out(&s[0])?])),
        )
}

fn float_space(shape: Vec<usize>, like: &Space) -> Space {
    Space::from(FloatBox::new(shape)).with_ranks(like.ranks().unwrap_or_default())
}

fn item_shape(s: &Space) -> Vec<usize> {
    s.shape().map(<[usize]>::to_vec).unwrap_or_default()
}

/// Luma from the last (colour) dimension of size 3: `0.299 r + 0.587 g + 0.114 b`, as
/// floats. `keep_rank` keeps a colour dimension of size 1.
pub fn grayscale<B: Backend>(name: &str, keep_rank: bool) -> Component<B> {
    image_op::<B>(
        name,
        move |x, _| {
            let shape = B::shape(x);
            let rest: usize = shape[..shape.len() - 1].iter().product();
            let flat = B::reshape(&B::cast(x, DType::F32)?, &[rest, 3])?;
            let w = B::from_host(
                &HostTensor {
                    shape: vec![3, 1],
                    data: HostData::F32(GRAYSCALE_WEIGHTS.iter().map(|&w| w as f32).collect()),
                },
                B::device(x),
            )?;
            let mut out = shape[..shape.len() - 1].to_vec();
            if keep_rank {
                out.push(1);
            }
            B::reshape(&B::matmul(&flat, &w)?, &out)
        },
        move |s| {
            let mut shape = item_shape(s);
            shape.pop();
            if keep_rank {
                shape.push(1);
            }
            Ok(float_space(shape, s))
        },
        |shape| match shape.last() {
            Some(3) => Ok(()),
            _ => Err(format!("the last dimension must be 3 colours, got shape {shape:?}")),
        },
    )
}

/// The window `[y, y + height) x [x, x + width)` of `[H, W, C]` images.
pub fn image_crop<B: Backend>(name: &str, x: usize, y: usize, width: usize, height: usize) -> Component<B> {
    let component = name.to_string();
    image_op::<B>(
        name,
        move |t, _| {
            let rank = B::shape(t).len();
            let rows = B::narrow(t, rank - 3, y, height)?;
            B::narrow(&rows, rank - 2, x, width)
        },
        move |s| {
            let mut shape = item_shape(s);
            let n = shape.len();
            shape[n - 3] = height;
            shape[n - 2] = width;
            Ok(s.with_shape_like(shape))
        },
        move |shape| match shape {
            [.., h, w, _] if y + height <= *h && x + width <= *w => Ok(()),
            _ => Err(format!(
                "{component}: the window x {x}..{}, y {y}..{} must lie inside [H, W, C] images, got {shape:?}",
                x + width,
                y + height
            )),
        },
    )
}

/// The two source indices and weights of each output position of a bilinear resize from
/// `n_in` to `n_out` samples, the way PyTorch's `interpolate(mode="bilinear",
/// align_corners=False)` and OpenCV's `INTER_LINEAR` place them: `src = (i + 0.5) n_in /
/// n_out - 0.5`, clamped at 0.
pub fn bilinear_taps(n_in: usize, n_out: usize) -> Vec<(usize, usize, f64)> {
    let scale = n_in as f64 / n_out as f64;
    (0..n_out)
        .map(|i| {
            let src = ((i as f64 + 0.5) * scale - 0.5).max(0.0);
            let i0 = (src.floor() as usize).min(n_in - 1);
            let i1 = (i0 + 1).min(n_in - 1);
            (i0, i1, src - i0 as f64)
        })
        .collect()
}

/// `x` resized along `dim` from its size to `n_out` by linear interpolation.
fn resize_dim<B: Backend>(x: &B::Tensor, dim: usize, n_out: usize) -> Result<B::Tensor> {
    let shape = B::shape(x);
    let taps = bilinear_taps(shape[dim], n_out);
    let dev = B::device(x);
    let index = |f: fn(&(usize, usize, f64)) -> usize| {
        B::from_host(
            &HostTensor {
                shape: vec![n_out],
                data: HostData::I64(taps.iter().map(|t| f(t) as i64).collect()),
            },
            dev,
        )
    };
    let x0 = B::index_select(x, dim, &index(|t| t.0)?)?;
    let x1 = B::index_select(x, dim, &index(|t| t.1)?)?;
    let mut w_shape = vec![1; shape.len()];
    w_shape[dim] = n_out;
    let mut out_shape = shape.clone();
    out_shape[dim] = n_out;
    let w1 = B::broadcast_to(
        &B::from_host(
            &HostTensor {
                shape: w_shape,
                data: HostData::F32(taps.iter().map(|t| t.2 as f32).collect()),
            },
            dev,
        )?,
        &out_shape,
    )?;
    // x0 + w1 (x1 - x0)
    B::add(&x0, &B::mul(&w1, &B::sub(&x1, &x0)?)?)
}

/// `[H, W, C]` images resized to `height x width` by bilinear interpolation, matching PyTorch's
/// `F.interpolate(mode="bilinear", align_corners=False)` (and OpenCV's `INTER_LINEAR`
/// upsampling); the result is float.
pub fn image_resize<B: Backend>(name: &str, width: usize, height: usize) -> Component<B> {
    image_op::<B>(
        name,
        move |x, _| {
            let rank = B::shape(x).len();
            let x = B::cast(x, DType::F32)?;
            let rows = resize_dim::<B>(&x, rank - 3, height)?;
            resize_dim::<B>(&rows, rank - 2, width)
        },
        move |s| {
            let mut shape = item_shape(s);
            let n = shape.len();
            shape[n - 3] = height;
            shape[n - 2] = width;
            Ok(float_space(shape, s))
        },
        |shape| match shape {
            [.., h, w, _] if *h > 0 && *w > 0 => Ok(()),
            _ => Err(format!("needs [H, W, C] images, got {shape:?}")),
        },
    )
}

/// The item dimensions permuted by `perm` (a permutation of `0..rank` of one item, the
/// batch and time ranks staying in front); by default the item dimensions reversed, as
/// numpy's `transpose`.
pub fn transpose<B: Backend>(name: &str, perm: Option<Vec<usize>>) -> Component<B> {
    let (p_kernel, p_out, p_check) = (perm.clone(), perm.clone(), perm);
    let order = |perm: &Option<Vec<usize>>, rank: usize| perm.clone().unwrap_or_else(|| (0..rank).rev().collect());
    let component = name.to_string();
    image_op::<B>(
        name,
        move |x, lead| {
            let rank = B::shape(x).len();
            // Batch and time dimensions stay in front; the item's are permuted, in one copy.
            let dims: Vec<usize> = (0..lead)
                .chain(order(&p_kernel, rank - lead).iter().map(|&d| d + lead))
                .collect();
            B::permute(x, &dims)
        },
        move |s| {
            let shape = item_shape(s);
            let perm = order(&p_out, shape.len());
            Ok(s.with_shape_like(perm.iter().map(|&d| shape[d]).collect()))
        },
        move |shape| match &p_check {
            Some(p) => {
                let mut sorted = p.clone();
                sorted.sort_unstable();
                if sorted == (0..shape.len()).collect::<Vec<_>>() {
                    Ok(())
                } else {
                    Err(format!(
                        "{component}: perm {p:?} is not a permutation of the item dimensions {shape:?}"
                    ))
                }
            }
            None => Ok(()),
        },
    )
}

/// A helper for spaces: the same kind, dtype and ranks with another item shape.
trait WithShapeLike {
    fn with_shape_like(&self, shape: Vec<usize>) -> Space;
}

impl WithShapeLike for Space {
    fn with_shape_like(&self, shape: Vec<usize>) -> Space {
        let ranks = self.ranks().unwrap_or_default();
        match self {
            Space::Float(f) => match f.bounds() {
                FloatBounds::Scalar { low, high } => FloatBox::bounded(shape.clone(), *low, *high)
                    .map_or_else(|_| Space::from(FloatBox::new(shape)), Space::from)
                    .with_ranks(ranks),
                _ => Space::from(FloatBox::new(shape)).with_ranks(ranks),
            },
            Space::Int(i) => Space::from(i.clone().with_shape(shape)).with_ranks(ranks),
            Space::Bool(_) => Space::from(BoolBox::new(shape)).with_ranks(ranks),
            other => other.clone(),
        }
    }
}
