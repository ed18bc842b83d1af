//! 2-D convolution on the CPU as im2col and matrix products through [`crate::gemm_call`],
//! forward and backward (the input's and the kernel's gradients), for f32 and f64.
//!
//! Why: candle's own backward of a convolution is a direct transposed convolution and a
//! dilated convolution of the batch, which cost five times the forward pass; on RLgraph's Pong
//! network the gradient took 245 ms of a 390 ms DQN update. Here each gradient is one product
//! per sample, as the forward pass is. The input may be laid out either way: a permuted NHWC
//! batch (the first layer's frames) is read a pixel's channels at a time, an NCHW one a row
//! of the window at a time.

use std::sync::{Arc, Mutex};

use candle_core::{CpuStorage, CustomOp2, Layout, Result, Shape, Tensor};

use crate::gemm_call::{num_like::One, product, Strided};

/// A convolution's sizes: input `[n, c, h, w]`, kernel `[o, c, kh, kw]`, output `[n, o, oh, ow]`.
#[derive(Clone, Copy, Debug)]
struct Dims {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    o: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    stride: usize,
    pad: usize,
}

impl Dims {
    fn new(x: &[usize], k: &[usize], stride: usize, pad: usize) -> Result<Dims> {
        let (&[n, c, h, w], &[o, kc, kh, kw]) = (x, k) else {
            return Err(bad(format!(
                "needs [n, c, h, w] input and [o, c, kh, kw] kernel, got {x:?} and {k:?}"
            )));
        };
        if c != kc || stride == 0 || kh == 0 || kw == 0 || h + 2 * pad < kh || w + 2 * pad < kw {
            return Err(bad(format!(
                "input {x:?} and kernel {k:?} (stride {stride}, padding {pad}) do not convolve"
            )));
        }
        Ok(Dims {
            n,
            c,
            h,
            w,
            o,
            kh,
            kw,
            oh: (h + 2 * pad - kh) / stride + 1,
            ow: (w + 2 * pad - kw) / stride + 1,
            stride,
            pad,
        })
    }

    /// Output positions per sample.
    fn p(&self) -> usize {
        self.oh * self.ow
    }

    /// Window elements: a column of im2col.
    fn k(&self) -> usize {
        self.c * self.kh * self.kw
    }
}

fn bad(what: String) -> candle_core::Error {
    candle_core::Error::Msg(format!("conv2d: {what}"))
}

/// The order of a window's elements in a row of im2col (and of the kernel matrix's columns):
/// channels innermost where they are adjacent in memory (NHWC input), else the window's rows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    /// `(c, kh, kw)`: the kernel's own layout.
    Chw,
    /// `(kh, kw, c)`.
    Hwc,
}

fn order_of(x: &Layout) -> Order {
    match x.stride() {
        [_, 1, ..] => Order::Hwc,
        _ => Order::Chw,
    }
}

/// Window element `(c, i, j)`'s column in `order`.
fn column(d: &Dims, order: Order, c: usize, i: usize, j: usize) -> usize {
    match order {
        Order::Chw => (c * d.kh + i) * d.kw + j,
        Order::Hwc => (i * d.kw + j) * d.c + c,
    }
}

/// The kernel `[o, c, kh, kw]` (any strides) as a row-major `[o, k]` matrix in `order`.
fn kernel_matrix<T: Copy + One>(k: &[T], l: &Layout, d: &Dims, order: Order) -> Vec<T> {
    let s = l.stride();
    let mut out = vec![T::zero(); d.o * d.k()];
    for o in 0..d.o {
        for c in 0..d.c {
            for i in 0..d.kh {
                for j in 0..d.kw {
                    out[o * d.k() + column(d, order, c, i, j)] =
                        k[l.start_offset() + o * s[0] + c * s[1] + i * s[2] + j * s[3]];
                }
            }
        }
    }
    out
}

/// A window as runs of elements adjacent both in `x` and in a row of im2col: `(offset from
/// the window's corner, length)`, in column order. An NHWC window row (`kw * c` floats) is one
/// run, an NCHW one `kw`.
fn window_runs(l: &Layout, d: &Dims, order: Order) -> Vec<(usize, usize)> {
    let s = l.stride();
    let mut off = vec![0; d.k()];
    for c in 0..d.c {
        for i in 0..d.kh {
            for j in 0..d.kw {
                off[column(d, order, c, i, j)] = c * s[1] + i * s[2] + j * s[3];
            }
        }
    }
    let mut runs: Vec<(usize, usize)> = vec![];
    for o in off {
        match runs.last_mut() {
            Some((start, len)) if *start + *len == o => *len += 1,
            _ => runs.push((o, 1)),
        }
    }
    runs
}

/// Appends im2col of sample `n` to `cols`: a row of `k` per output position `(y, x)`, the
/// window under it, zeros where it hangs over the padding. `runs` is [`window_runs`]'s.
fn im2col<T: Copy + One>(
    x: &[T],
    l: &Layout,
    d: &Dims,
    order: Order,
    runs: &[(usize, usize)],
    n: usize,
    cols: &mut Vec<T>,
) {
    let s = l.stride();
    for y in 0..d.oh {
        for xo in 0..d.ow {
            let (top, left) = (
                (y * d.stride) as isize - d.pad as isize,
                (xo * d.stride) as isize - d.pad as isize,
            );
            let inside = top >= 0 && left >= 0 && top as usize + d.kh <= d.h && left as usize + d.kw <= d.w;
            if inside {
                // The common case (always, without padding): copies at fixed offsets.
                let corner = l.start_offset() + n * s[0] + top as usize * s[2] + left as usize * s[3];
                for &(o, len) in runs {
                    let run = &x[corner + o..corner + o + len];
                    match len {
                        // A call to memcpy costs more than moving a few elements.
                        0..8 => cols.extend(run.iter().copied()),
                        _ => cols.extend_from_slice(run),
                    }
                }
                continue;
            }
            let start = cols.len();
            cols.resize(start + d.k(), T::zero());
            for c in 0..d.c {
                for i in 0..d.kh {
                    for j in 0..d.kw {
                        let (iy, ix) = (top + i as isize, left + j as isize);
                        if iy >= 0 && ix >= 0 && (iy as usize) < d.h && (ix as usize) < d.w {
                            cols[start + column(d, order, c, i, j)] =
                                x[l.start_offset() + n * s[0] + c * s[1] + iy as usize * s[2] + ix as usize * s[3]];
                        }
                    }
                }
            }
        }
    }
}

/// Adds the window gradients `dcols` (`[p, k]`) of sample `n` into `dx` (`[n, c, h, w]`,
/// contiguous), the reverse of [`im2col`].
fn col2im<T: Copy + std::ops::AddAssign>(dcols: &[T], d: &Dims, order: Order, n: usize, dx: &mut [T]) {
    let k = d.k();
    let base = n * d.c * d.h * d.w;
    for y in 0..d.oh {
        for xo in 0..d.ow {
            let row = &dcols[(y * d.ow + xo) * k..(y * d.ow + xo + 1) * k];
            for i in 0..d.kh {
                let iy = (y * d.stride + i) as isize - d.pad as isize;
                if iy < 0 || iy as usize >= d.h {
                    continue;
                }
                for j in 0..d.kw {
                    let ix = (xo * d.stride + j) as isize - d.pad as isize;
                    if ix < 0 || ix as usize >= d.w {
                        continue;
                    }
                    for c in 0..d.c {
                        dx[base + (c * d.h + iy as usize) * d.w + ix as usize] += row[column(d, order, c, i, j)];
                    }
                }
            }
        }
    }
}

fn check(ok: bool) -> Result<()> {
    match ok {
        true => Ok(()),
        false => Err(bad("an operand lies outside its storage".into())),
    }
}

/// im2col of every sample: `[n * p, k]`, row-major.
fn all_cols<T: Copy + One>(x: &[T], lx: &Layout, d: &Dims) -> Vec<T> {
    let order = order_of(lx);
    let runs = window_runs(lx, d, order);
    let mut cols = Vec::with_capacity(d.n * d.p() * d.k());
    for n in 0..d.n {
        im2col(x, lx, d, order, &runs, n, &mut cols);
    }
    cols
}

/// `[n, a, b]` (contiguous) as `[n, b, a]`.
fn swap_inner<T: Copy + One>(v: &[T], n: usize, a: usize, b: usize) -> Vec<T> {
    let mut out = vec![T::zero(); v.len()];
    for s in 0..n {
        let (from, to) = (&v[s * a * b..(s + 1) * a * b], &mut out[s * a * b..(s + 1) * a * b]);
        for i in 0..a {
            for j in 0..b {
                to[j * a + i] = from[i * b + j];
            }
        }
    }
    out
}

/// The forward pass over im2col `cols` (`[n * p, k]`): `Y (n p x o) = cols . K^T`, one
/// product for the whole batch, returned as `[n, o, oh, ow]`, or as the product leaves it,
/// `[n, oh, ow, o]`, where `nhwc`.
fn forward<T: Copy + One + 'static>(
    cols: &[T],
    order: Order,
    kern: &[T],
    lk: &Layout,
    d: &Dims,
    nhwc: bool,
) -> Result<Vec<T>> {
    let km = kernel_matrix(kern, lk, d, order);
    let (p, k) = (d.p(), d.k());
    let mut y = vec![T::zero(); d.n * p * d.o];
    check(product(
        (d.n * p, d.o, k),
        &mut y,
        Strided::rows(0, d.o),
        false,
        cols,
        Strided::rows(0, k),
        &km,
        Strided::rows(0, k).t(),
    ))?;
    Ok(match nhwc {
        true => y,
        false => swap_inner(&y, d.n, p, d.o),
    })
}

/// The output's gradient as `[n, p, o]` (the forward product's layout): `g` as it comes,
/// `[n, o, oh, ow]`, swapped, or taken as it is where the output was NHWC.
fn product_layout<'a, T: Copy + One>(g: &'a [T], d: &Dims, nhwc: bool) -> std::borrow::Cow<'a, [T]> {
    match nhwc {
        true => std::borrow::Cow::Borrowed(g),
        false => std::borrow::Cow::Owned(swap_inner(g, d.n, d.o, d.p())),
    }
}

/// The gradients of `y` (`g`, contiguous, `[n, o, oh, ow]` or `[n, oh, ow, o]` where `nhwc`):
/// the kernel's (`[o, c, kh, kw]`), `sum_n g[n] (o x p) . cols[n] (p x k)`, from the forward
/// pass's im2col `cols`.
fn kernel_grad<T: Copy + One + 'static>(cols: &[T], order: Order, g: &[T], d: &Dims, nhwc: bool) -> Result<Vec<T>> {
    let (p, k) = (d.p(), d.k());
    // The gradient as [n p, o], so that one product covers the batch.
    let g = product_layout(g, d, nhwc);
    let mut dk = vec![T::zero(); d.o * k];
    check(product(
        (d.o, k, d.n * p),
        &mut dk,
        Strided::rows(0, k),
        false,
        &g,
        Strided::rows(0, d.o).t(),
        cols,
        Strided::rows(0, k),
    ))?;
    if order == Order::Chw {
        return Ok(dk);
    }
    // Back from (kh, kw, c) columns to the kernel's [o, c, kh, kw].
    let mut out = vec![T::zero(); dk.len()];
    for o in 0..d.o {
        for c in 0..d.c {
            for i in 0..d.kh {
                for j in 0..d.kw {
                    out[o * k + column(d, Order::Chw, c, i, j)] = dk[o * k + column(d, order, c, i, j)];
                }
            }
        }
    }
    Ok(out)
}

/// The input's gradient (`[n, c, h, w]`, contiguous): per sample `g[n]^T (p x o) . K (o x k)`,
/// folded back over the windows (`g` laid out as [`kernel_grad`] takes it).
fn input_grad<T: Copy + One + 'static + std::ops::AddAssign>(
    g: &[T],
    kern: &[T],
    lk: &Layout,
    d: &Dims,
    (order, nhwc): (Order, bool),
) -> Result<Vec<T>> {
    let km = kernel_matrix(kern, lk, d, order);
    let (p, k) = (d.p(), d.k());
    let g = product_layout(g, d, nhwc);
    let mut dcols = vec![T::zero(); d.n * p * k];
    check(product(
        (d.n * p, k, d.o),
        &mut dcols,
        Strided::rows(0, k),
        false,
        &g,
        Strided::rows(0, d.o),
        &km,
        Strided::rows(0, k),
    ))?;
    let mut dx = vec![T::zero(); d.n * d.c * d.h * d.w];
    for n in 0..d.n {
        col2im(&dcols[n * p * k..(n + 1) * p * k], d, order, n, &mut dx);
    }
    Ok(dx)
}

/// A contiguous view of a storage's elements from a layout that is contiguous.
fn contiguous<'a, T>(v: &'a [T], l: &Layout) -> Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((start, end)) => Ok(&v[start..end]),
        None => Err(bad("the gradient must be contiguous".into())),
    }
}

/// im2col of a forward pass, kept for the kernel's gradient when one will be taken.
#[derive(Debug)]
enum Cols {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// The convolution `x (*) kernel` with `stride` and zero `padding`, its output `[n, o, oh, ow]`
/// or, where `nhwc`, `[n, oh, ow, o]` (the product's own layout: no transpose either way
/// through). With `keep`, the forward pass's im2col stays here for the backward pass, which
/// would otherwise build it again.
#[derive(Debug)]
pub(crate) struct Conv2d {
    stride: usize,
    padding: usize,
    nhwc: bool,
    keep: Option<Mutex<Option<Arc<Cols>>>>,
}

impl CustomOp2 for Conv2d {
    fn name(&self) -> &'static str {
        "conv2d"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        let d = Dims::new(l1.dims(), l2.dims(), self.stride, self.padding)?;
        let shape = match self.nhwc {
            true => Shape::from((d.n, d.oh, d.ow, d.o)),
            false => Shape::from((d.n, d.o, d.oh, d.ow)),
        };
        let order = order_of(l1);
        let (y, cols) = match (s1, s2) {
            (CpuStorage::F32(x), CpuStorage::F32(k)) => {
                let cols = all_cols(x, l1, &d);
                (
                    CpuStorage::F32(forward(&cols, order, k, l2, &d, self.nhwc)?),
                    Cols::F32(cols),
                )
            }
            (CpuStorage::F64(x), CpuStorage::F64(k)) => {
                let cols = all_cols(x, l1, &d);
                (
                    CpuStorage::F64(forward(&cols, order, k, l2, &d, self.nhwc)?),
                    Cols::F64(cols),
                )
            }
            _ => return Err(bad("takes two f32 or two f64 tensors".into())),
        };
        if let Some(keep) = &self.keep {
            if let Ok(mut slot) = keep.lock() {
                *slot = Some(Arc::new(cols));
            }
        }
        Ok((y, shape))
    }

    fn bwd(&self, x: &Tensor, kernel: &Tensor, _y: &Tensor, grad: &Tensor) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let grad = grad.contiguous()?;
        let order = match x.stride() {
            [_, 1, ..] => Order::Hwc,
            _ => Order::Chw,
        };
        let params = (self.stride, self.padding);
        let grad_x = match x.track_op() {
            true => Some(grad.apply_op2_no_bwd(
                kernel,
                &InputGrad {
                    params,
                    x: x.dims().to_vec(),
                    order,
                    nhwc: self.nhwc,
                },
            )?),
            false => None,
        };
        let grad_k = match kernel.track_op() {
            true => {
                let cols = self.keep.as_ref().and_then(|k| k.lock().ok()?.clone());
                let op = KernelGrad {
                    params,
                    k: kernel.dims().to_vec(),
                    cols,
                    nhwc: self.nhwc,
                };
                Some(x.apply_op2_no_bwd(&grad, &op)?)
            }
            false => None,
        };
        Ok((grad_x, crate::grad_sink::divert(kernel, grad_k)?))
    }
}

/// `(x, grad) -> the kernel's gradient`, from the forward pass's im2col where it was kept.
struct KernelGrad {
    params: (usize, usize),
    k: Vec<usize>,
    cols: Option<Arc<Cols>>,
    nhwc: bool,
}

impl CustomOp2 for KernelGrad {
    fn name(&self) -> &'static str {
        "conv2d-kernel-grad"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        let d = Dims::new(l1.dims(), &self.k, self.params.0, self.params.1)?;
        let shape = Shape::from(self.k.clone());
        let order = order_of(l1);
        let kept = self.cols.as_deref();
        match (s1, s2, kept) {
            (CpuStorage::F32(_), CpuStorage::F32(g), Some(Cols::F32(cols))) => Ok((
                CpuStorage::F32(kernel_grad(cols, order, contiguous(g, l2)?, &d, self.nhwc)?),
                shape,
            )),
            (CpuStorage::F32(x), CpuStorage::F32(g), _) => Ok((
                CpuStorage::F32(kernel_grad(
                    &all_cols(x, l1, &d),
                    order,
                    contiguous(g, l2)?,
                    &d,
                    self.nhwc,
                )?),
                shape,
            )),
            (CpuStorage::F64(_), CpuStorage::F64(g), Some(Cols::F64(cols))) => Ok((
                CpuStorage::F64(kernel_grad(cols, order, contiguous(g, l2)?, &d, self.nhwc)?),
                shape,
            )),
            (CpuStorage::F64(x), CpuStorage::F64(g), _) => Ok((
                CpuStorage::F64(kernel_grad(
                    &all_cols(x, l1, &d),
                    order,
                    contiguous(g, l2)?,
                    &d,
                    self.nhwc,
                )?),
                shape,
            )),
            _ => Err(bad("takes two f32 or two f64 tensors".into())),
        }
    }
}

/// `(grad, kernel) -> the input's gradient`, for an input of dims `x` read in `order`.
struct InputGrad {
    params: (usize, usize),
    x: Vec<usize>,
    order: Order,
    nhwc: bool,
}

impl CustomOp2 for InputGrad {
    fn name(&self) -> &'static str {
        "conv2d-input-grad"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<(CpuStorage, Shape)> {
        let d = Dims::new(&self.x, l2.dims(), self.params.0, self.params.1)?;
        let shape = Shape::from(self.x.clone());
        match (s1, s2) {
            (CpuStorage::F32(g), CpuStorage::F32(k)) => Ok((
                CpuStorage::F32(input_grad(contiguous(g, l1)?, k, l2, &d, (self.order, self.nhwc))?),
                shape,
            )),
            (CpuStorage::F64(g), CpuStorage::F64(k)) => Ok((
                CpuStorage::F64(input_grad(contiguous(g, l1)?, k, l2, &d, (self.order, self.nhwc))?),
                shape,
            )),
            _ => Err(bad("takes two f32 or two f64 tensors".into())),
        }
    }
}

/// `x (*) kernel` through [`Conv2d`] for f32 or f64 CPU tensors, NHWC out where `nhwc`;
/// `None` for anything else (the caller uses candle's own convolution).
pub(crate) fn apply(x: &Tensor, kernel: &Tensor, stride: usize, padding: usize, nhwc: bool) -> Option<Result<Tensor>> {
    let cpu_float =
        |t: &Tensor| t.device().is_cpu() && matches!(t.dtype(), candle_core::DType::F32 | candle_core::DType::F64);
    if !(cpu_float(x) && cpu_float(kernel) && x.dtype() == kernel.dtype() && x.rank() == 4 && kernel.rank() == 4) {
        return None;
    }
    // The kernel's gradient reads the forward pass's im2col, which is kept only when a
    // gradient may be taken (a learner's policy, not its target network or an actor).
    let keep = kernel.track_op().then(|| Mutex::new(None));
    Some(x.apply_op2(
        kernel,
        Conv2d {
            stride,
            padding,
            nhwc,
            keep,
        },
    ))
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor, Var};

    use crate::test_values::values;

    /// `a` and `b` agree elementwise within `tol` (relative to the larger magnitude, at least 1).
    fn close(a: &Tensor, b: &Tensor, tol: f32) {
        assert_eq!(a.dims(), b.dims());
        let (a, b) = (
            a.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            b.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        );
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                (x - y).abs() <= tol * x.abs().max(y.abs()).max(1.0),
                "element {i}: {x} against {y}"
            );
        }
    }

    #[test]
    fn values_and_gradients_equal_candles_convolution() {
        let cpu = &Device::Cpu;
        // NCHW input, a permuted NHWC one, strides 1 to 4, with and without padding.
        for (nhwc, (n, c, h, w), (o, k), stride, pad) in [
            (false, (2, 3, 9, 8), (4, 3), 1, 0),
            (true, (2, 4, 20, 20), (5, 8), 4, 0),
            (false, (3, 2, 7, 9), (3, 4), 2, 1),
            (true, (1, 3, 6, 6), (2, 3), 1, 2),
        ] {
            let x = match nhwc {
                true => Tensor::from_vec(values(n * h * w * c, 1), (n, h, w, c), cpu)
                    .unwrap()
                    .permute((0, 3, 1, 2))
                    .unwrap(),
                false => Tensor::from_vec(values(n * c * h * w, 1), (n, c, h, w), cpu).unwrap(),
            };
            let x = Var::from_tensor(&x).unwrap();
            let kern =
                Var::from_tensor(&Tensor::from_vec(values(o * c * k * k, 2), (o, c, k, k), cpu).unwrap()).unwrap();
            let theirs = x.conv2d(&kern, pad, stride, 1, 1).unwrap();
            let weights = Tensor::from_vec(values(theirs.elem_count(), 3), theirs.dims(), cpu).unwrap();
            let grads = |y: &Tensor| (y * &weights).unwrap().sum_all().unwrap().backward().unwrap();
            let g_theirs = grads(&theirs);
            // Our output in NCHW, and in NHWC permuted back to NCHW, which must be contiguous
            // as NHWC: the layout the product leaves.
            for nhwc_out in [false, true] {
                let ours = super::apply(&x, &kern, stride, pad, nhwc_out)
                    .expect("floats on the CPU")
                    .unwrap();
                assert!(ours.is_contiguous());
                let ours = match nhwc_out {
                    true => ours.permute((0, 3, 1, 2)).unwrap(),
                    false => ours,
                };
                close(&ours, &theirs, 1e-5);
                let g_ours = grads(&ours);
                for v in [&x, &kern] {
                    close(g_ours.get(v).unwrap(), g_theirs.get(v).unwrap(), 1e-4);
                }
            }
        }
    }

    #[test]
    fn a_kernel_larger_than_the_image_is_an_error() {
        let x = Tensor::zeros((1, 1, 2, 2), candle_core::DType::F32, &Device::Cpu).unwrap();
        let k = Tensor::zeros((1, 1, 3, 3), candle_core::DType::F32, &Device::Cpu).unwrap();
        let err = super::apply(&x, &k, 1, 0, false).unwrap().unwrap_err().to_string();
        assert!(err.contains("do not convolve"), "{err}");
    }
}
