//! Image preprocessors on NHWC batches, as Atari frames come: grayscale, crop, resize (area,
//! bilinear or nearest), and transpose. Each has API method `call(inputs)` (and a `reset` that does
//! nothing, so a preprocessor stack can reset every member alike).

use rlgraph_core::spaces::{BoolBox, FloatBounds, FloatBox, IntBox, Space};
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

/// The item shape of `s` with its channel (last) dimension reduced away, or kept as 1.
fn without_channels(s: &Space, keep_rank: bool) -> Vec<usize> {
    let mut shape = item_shape(s);
    shape.pop();
    if keep_rank {
        shape.push(1);
    }
    shape
}

/// The weighted sum over the last (colour) dimension, whose size must be the number of
/// `weights` (RLgraph's default: [`GRAYSCALE_WEIGHTS`], `0.299 r + 0.587 g + 0.114 b`).
/// `keep_rank` keeps a colour dimension of size 1. As in RLgraph, integer images come back
/// as integers of their dtype (the weighted sum cast back, which truncates toward zero);
/// float images stay float.
pub fn grayscale<B: Backend>(name: &str, weights: Vec<f64>, keep_rank: bool) -> Component<B> {
    let n = weights.len();
    // The bounds of an integer image hold when the result is a convex combination.
    let convex = weights.iter().all(|w| *w >= 0.0) && weights.iter().sum::<f64>() <= 1.0 + 1e-9;
    let w32: Vec<f32> = weights.iter().map(|&w| w as f32).collect();
    let label = if weights == GRAYSCALE_WEIGHTS {
        "3 colours".to_string()
    } else {
        format!("{n} colours, one per weight")
    };
    image_op::<B>(
        name,
        move |x, _| {
            let shape = B::shape(x);
            let rest: usize = shape[..shape.len() - 1].iter().product();
            let flat = B::reshape(&B::cast(x, DType::F32)?, &[rest, n])?;
            let w = B::from_host(
                &HostTensor {
                    shape: vec![n, 1],
                    data: HostData::F32(w32.clone()),
                },
                B::device(x),
            )?;
            let mut out = shape[..shape.len() - 1].to_vec();
            if keep_rank {
                out.push(1);
            }
            let gray = B::reshape(&B::matmul(&flat, &w)?, &out)?;
            match B::dtype(x) {
                DType::F32 | DType::F64 => Ok(gray),
                int => B::cast(&gray, int),
            }
        },
        move |s| {
            let shape = without_channels(s, keep_rank);
            Ok(match s {
                Space::Int(_) if convex => s.with_shape_like(shape),
                Space::Int(_) => match s
                    .dtype()
                    .map(|d| IntBox::unbounded().with_shape(shape.clone()).with_dtype(d))
                {
                    Some(Ok(b)) => Space::from(b).with_ranks(s.ranks().unwrap_or_default()),
                    _ => float_space(shape, s),
                },
                _ => float_space(shape, s),
            })
        },
        move |shape| match shape.last() {
            Some(&c) if c == n => Ok(()),
            _ => Err(format!("the last dimension must be {label}, got shape {shape:?}")),
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
        move |shape| {
            // Checked: x, y and the window's size come from a config and may be anything.
            let inside = |start: usize, size: usize, dim: usize| start.checked_add(size).is_some_and(|end| end <= dim);
            match shape {
                [.., h, w, _] if inside(y, height, *h) && inside(x, width, *w) => Ok(()),
                _ => Err(format!(
                    "{component}: the window x {x} + width {width}, y {y} + height {height} must lie inside \
                     [H, W, C] images, got {shape:?}"
                )),
            }
        },
    )
}

/// RLgraph's `ImageBinary`: 1 where the channels of a pixel (the last dimension) sum to more
/// than `threshold`, else 0, in the input's dtype. RLgraph accepts a `threshold` but always
/// compares with 0; here it is used, and its default, 0, gives RLgraph's result. `keep_rank`
/// keeps a channel dimension of size 1.
pub fn image_binary<B: Backend>(name: &str, threshold: f64, keep_rank: bool) -> Component<B> {
    image_op::<B>(
        name,
        move |x, _| {
            let last = B::shape(x).len().saturating_sub(1);
            let sums = B::sum(&B::cast(x, DType::F32)?, &[last], keep_rank)?;
            let on = B::gt(&sums, &B::scalar(threshold, DType::F32, B::device(x))?)?;
            B::cast(&on, B::dtype(x))
        },
        move |s| {
            let shape = without_channels(s, keep_rank);
            Ok(match s {
                Space::Int(_) => s.with_shape_like(shape),
                _ => Space::from(FloatBox::bounded(shape, 0.0, 1.0)?).with_ranks(s.ranks().unwrap_or_default()),
            })
        },
        |shape| match shape.last() {
            Some(_) => Ok(()),
            None => Err("needs a channel (last) dimension".into()),
        },
    )
}

/// How [`image_resize`] samples the source image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Each output pixel is the mean of the source area it covers, partly covered source pixels
    /// weighted by the part (RLgraph's default: OpenCV's `INTER_AREA` and TensorFlow's `AREA`
    /// when shrinking, TensorFlow's `AREA` when enlarging).
    Area,
    /// Linear between the two nearest source pixels, placed as RLgraph's TensorFlow backend
    /// places them (`tf.image.resize_images`, TensorFlow 1's legacy mapping `src = j n_in /
    /// n_out`): output pixel 0 is source pixel 0. RLgraph's own resize test expects this.
    Bilinear,
    /// Linear between the two nearest source pixels with pixel centres aligned, as PyTorch's
    /// `interpolate(mode="bilinear", align_corners=False)` and OpenCV's `INTER_LINEAR`.
    BilinearHalfPixel,
    /// The source pixel at `floor(i * n_in / n_out)`, as OpenCV's `INTER_NEAREST`.
    Nearest,
}

impl Interpolation {
    /// Parses RLgraph's `interpolation` key (`area`, `bilinear`, `nearest`, and this project's
    /// `bilinear_half_pixel`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().replace('-', "_").as_str() {
            "area" => Some(Interpolation::Area),
            "bilinear" | "linear" => Some(Interpolation::Bilinear),
            "bilinear_half_pixel" => Some(Interpolation::BilinearHalfPixel),
            "nearest" => Some(Interpolation::Nearest),
            _ => None,
        }
    }

    /// The `[n_in, n_out]` matrix (row-major) that resizes one axis: output `j` is
    /// `sum_i x[i] * m[i][j]`.
    pub fn matrix(self, n_in: usize, n_out: usize) -> Vec<f64> {
        let mut m = vec![0.0; n_in * n_out];
        match self {
            Interpolation::Bilinear | Interpolation::BilinearHalfPixel => {
                let half_pixel = self == Interpolation::BilinearHalfPixel;
                for (j, (i0, i1, w1)) in bilinear_taps(n_in, n_out, half_pixel).into_iter().enumerate() {
                    m[i0 * n_out + j] += 1.0 - w1;
                    m[i1 * n_out + j] += w1;
                }
            }
            Interpolation::Nearest => {
                for j in 0..n_out {
                    m[(j * n_in / n_out).min(n_in - 1) * n_out + j] = 1.0;
                }
            }
            Interpolation::Area => {
                let scale = n_in as f64 / n_out as f64;
                for j in 0..n_out {
                    let (lo, hi) = (j as f64 * scale, (j + 1) as f64 * scale);
                    for i in (lo.floor() as usize)..(hi.ceil() as usize).min(n_in) {
                        let overlap = (hi.min(i as f64 + 1.0) - lo.max(i as f64)).max(0.0);
                        m[i * n_out + j] += overlap / scale;
                    }
                }
            }
        }
        m
    }
}

/// The two source indices and weights of each output position of a bilinear resize from
/// `n_in` to `n_out` samples. With `half_pixel`, as PyTorch's `interpolate(mode="bilinear",
/// align_corners=False)` and OpenCV's `INTER_LINEAR` place them, `src = (i + 0.5) n_in /
/// n_out - 0.5` clamped at 0; without, as TensorFlow 1 (and so RLgraph) does, `src = i n_in /
/// n_out`.
pub fn bilinear_taps(n_in: usize, n_out: usize, half_pixel: bool) -> Vec<(usize, usize, f64)> {
    let scale = n_in as f64 / n_out as f64;
    (0..n_out)
        .map(|i| {
            let i = i as f64;
            let src = if half_pixel {
                ((i + 0.5) * scale - 0.5).max(0.0)
            } else {
                i * scale
            };
            let i0 = (src.floor() as usize).min(n_in - 1);
            let i1 = (i0 + 1).min(n_in - 1);
            (i0, i1, src - i0 as f64)
        })
        .collect()
}

/// `x` resized along `dim` to `n_out` samples: one matrix product with the axis moved last.
fn resize_dim<B: Backend>(x: &B::Tensor, dim: usize, n_out: usize, how: Interpolation) -> Result<B::Tensor> {
    let shape = B::shape(x);
    let rank = shape.len();
    let n_in = shape[dim];
    let m = B::from_host(
        &HostTensor {
            shape: vec![n_in, n_out],
            data: HostData::F32(how.matrix(n_in, n_out).into_iter().map(|w| w as f32).collect()),
        },
        B::device(x),
    )?;
    // Move `dim` last, multiply, and move it back.
    let order: Vec<usize> = (0..rank).filter(|&d| d != dim).chain([dim]).collect();
    let moved = B::permute(x, &order)?;
    let moved_shape = B::shape(&moved);
    let rest: usize = moved_shape[..rank - 1].iter().product();
    let flat = B::matmul(&B::reshape(&moved, &[rest, n_in])?, &m)?;
    let mut out_shape = moved_shape.clone();
    out_shape[rank - 1] = n_out;
    let back: Vec<usize> = (0..rank)
        .map(|d| match d.cmp(&dim) {
            std::cmp::Ordering::Less => d,
            std::cmp::Ordering::Equal => rank - 1,
            std::cmp::Ordering::Greater => d - 1,
        })
        .collect();
    B::permute(&B::reshape(&flat, &out_shape)?, &back)
}

/// `[H, W, C]` images resized to `height x width` by `how` (RLgraph's default is
/// [`Interpolation::Area`]); the result is float.
pub fn image_resize<B: Backend>(name: &str, width: usize, height: usize, how: Interpolation) -> Component<B> {
    image_op::<B>(
        name,
        move |x, _| {
            let rank = B::shape(x).len();
            let x = B::cast(x, DType::F32)?;
            let rows = resize_dim::<B>(&x, rank - 3, height, how)?;
            resize_dim::<B>(&rows, rank - 2, width, how)
        },
        move |s| {
            let mut shape = item_shape(s);
            let n = shape.len();
            shape[n - 3] = height;
            shape[n - 2] = width;
            Ok(float_space(shape, s))
        },
        move |shape| match shape {
            [.., h, w, _] if *h > 0 && *w > 0 && height > 0 && width > 0 => Ok(()),
            _ => Err(format!(
                "needs [H, W, C] images and a size above zero, got {shape:?} to {height}x{width}"
            )),
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
