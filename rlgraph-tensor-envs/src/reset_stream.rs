//! Start states for resets inside the step: a pool drawn once on the host from a seed, or
//! Philox draws on the device.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, CoreError, DType, Device, HostData, HostTensor, Result};

use crate::philox::{philox_count, unit_float, unit_floats, PhiloxTensors};

/// Where restarts inside the step take their start states from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restarts {
    /// A pool of `depth` start states per copy drawn once on the host (ChaCha8) with the host
    /// environments' own draws, kept on the device and read by index. Bit-identical on every
    /// backend and to the host environments' start states; a copy's restarts cycle after
    /// `depth` episodes, and the pool costs `depth * n * width` values of memory.
    Stream {
        /// Start states per copy.
        depth: usize,
    },
    /// Philox4x32-10 on the device: copy `i`'s `k`-th restart is drawn uniformly in the
    /// environment's start box from the counter `(k, i)` under the seed. Nothing is stored and
    /// nothing cycles; the values are the same on every backend (24-bit uniforms, worked in
    /// f32), though not the host environments' ChaCha8 draws.
    Philox,
}

/// Start states for `n` copies, for restarts inside the step ([`Restarts`]): either a pool
/// read by index, where copy `i`'s `k`-th reset takes row `k * n + i` (cycling after `depth`)
/// and the cursor is that row; or Philox draws, where the cursor is `k`. Either way one call
/// per step serves every copy, and no random number crosses the bus after construction.
pub struct ResetStream<B: Backend> {
    source: Source<B>,
    cursor: B::Tensor,
    n: usize,
}

/// What a [`ResetStream`] draws from.
enum Source<B: Backend> {
    Pool {
        pool: B::Tensor,
        advance: B::Tensor,
        wrap: B::Tensor,
        /// Rows in the pool (`depth * n`).
        rows: usize,
    },
    Philox {
        key: [u32; 2],
        /// The generator's constants for `key`, made once.
        generator: PhiloxTensors<B>,
        /// Each copy's index, the counter's second word.
        copies: B::Tensor,
        zeros: B::Tensor,
        low: Vec<f64>,
        span: Vec<f64>,
        dtype: DType,
    },
}

/// Start states drawn the host's way for one restart of a Philox stream: what the host pass
/// and the tensor ops both compute.
#[derive(Clone, Debug)]
pub(crate) struct PhiloxBox {
    pub(crate) key: [u32; 2],
    pub(crate) low: Vec<f32>,
    pub(crate) span: Vec<f32>,
}

impl PhiloxBox {
    /// The box of a Philox source: its key, and its bounds as f32 as the tensor ops use them.
    fn new(key: [u32; 2], low: &[f64], span: &[f64]) -> Self {
        PhiloxBox {
            key,
            low: low.iter().map(|&x| x as f32).collect(),
            span: span.iter().map(|&x| x as f32).collect(),
        }
    }

    /// Copy `copy`'s `k`-th start state, into `row`.
    pub(crate) fn draw(&self, copy: usize, k: u64, row: &mut [f32]) {
        let words = philox_count(self.key, k, copy, 0);
        for (j, v) in row.iter_mut().enumerate() {
            *v = unit_float(words[j]) * self.span[j] + self.low[j];
        }
    }
}

/// The restarts a host pass needs: the pool and its rows, or the Philox box.
pub(crate) enum HostRestarts {
    Pool { pool: Vec<f32>, rows: usize },
    Philox(PhiloxBox),
}

/// The stream depth used by [`crate::make`]: 64 states per copy, fewer past 65,536 copies
/// (the pool holds at most about four million rows), and never fewer than 4.
pub fn default_depth(n: usize) -> usize {
    ((1usize << 22) / n.max(1)).clamp(4, 64)
}

impl<B: Backend> ResetStream<B> {
    /// A stream of `depth` states of `width` values for each of `n` copies, each drawn by
    /// `draw` from a ChaCha8 RNG seeded with `seed`, stored as `dtype` on `device`.
    pub fn new(
        n: usize,
        depth: usize,
        width: usize,
        dtype: DType,
        device: Device,
        seed: u64,
        mut draw: impl FnMut(&mut ChaCha8Rng) -> Vec<f64>,
    ) -> Result<Self> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let depth = depth.max(1);
        let mut values = Vec::with_capacity(depth * n * width);
        for _ in 0..depth * n {
            values.extend(draw(&mut rng));
        }
        let pool = B::from_host(
            &HostTensor::new([depth * n, width], HostData::from_f64(&values, dtype))?,
            device,
        )?;
        Ok(ResetStream {
            source: Source::Pool {
                pool,
                advance: B::scalar(n as f64, DType::I64, device)?,
                wrap: B::scalar((depth * n) as f64, DType::I64, device)?,
                rows: depth * n,
            },
            cursor: B::arange(n, device)?,
            n,
        })
    }

    /// Philox draws for `n` copies, uniform in the box `low..high` (one bound per state value,
    /// at most four), stored as `dtype` on `device`, keyed by `seed`.
    pub fn philox(n: usize, low: &[f64], high: &[f64], dtype: DType, device: Device, seed: u64) -> Result<Self> {
        if low.len() != high.len() || low.is_empty() || low.len() > 4 {
            return Err(CoreError::Config {
                at: "tensor env restarts".into(),
                reason: format!(
                    "Philox restarts draw one word per state value, at most 4; got bounds of {} and {} values",
                    low.len(),
                    high.len()
                ),
            });
        }
        let key = [seed as u32, (seed >> 32) as u32];
        Ok(ResetStream {
            source: Source::Philox {
                key,
                generator: PhiloxTensors::new(key, device)?,
                copies: B::arange(n, device)?,
                zeros: B::full(&[n], 0.0, DType::I64, device)?,
                low: low.to_vec(),
                span: low.iter().zip(high).map(|(l, h)| h - l).collect(),
                dtype,
            },
            cursor: B::full(&[n], 0.0, DType::I64, device)?,
            n,
        })
    }

    /// The next start state of every copy whose `mask` (U8 `[n]`) is 1, and the current one
    /// of the others (`[n, width]`); the masked copies' cursors move on.
    pub fn next(&mut self, mask: &B::Tensor) -> Result<B::Tensor> {
        let step = B::cast(mask, DType::I64)?;
        match &self.source {
            Source::Pool {
                pool, advance, wrap, ..
            } => {
                let rows = B::index_select(pool, 0, &self.cursor)?;
                let moved = B::add(&self.cursor, &B::mul(&step, advance)?)?;
                self.cursor = B::where_cond(&B::ge(&moved, wrap)?, &B::sub(&moved, wrap)?, &moved)?;
                Ok(rows)
            }
            Source::Philox {
                generator,
                copies,
                zeros,
                low,
                span,
                dtype,
                ..
            } => {
                let words = generator.apply_count(&self.cursor, copies, zeros)?;
                let columns = (0..low.len())
                    .map(|j| {
                        let unit = unit_floats::<B>(&words[j])?;
                        B::reshape(&B::affine(&unit, span[j], low[j])?, &[self.n, 1])
                    })
                    .collect::<Result<Vec<_>>>()?;
                let rows = B::cast(&B::concat(&columns, 1)?, *dtype)?;
                self.cursor = B::add(&self.cursor, &step)?;
                Ok(rows)
            }
        }
    }

    /// The key and start box of Philox restarts (as f32), or `None` for a pool.
    pub(crate) fn philox_box(&self) -> Option<PhiloxBox> {
        match &self.source {
            Source::Pool { .. } => None,
            Source::Philox { key, low, span, .. } => Some(PhiloxBox::new(*key, low, span)),
        }
    }

    /// What a host pass needs to restart copies itself.
    pub(crate) fn host_restarts(&self) -> Result<HostRestarts> {
        Ok(match &self.source {
            Source::Pool { pool, rows, .. } => HostRestarts::Pool {
                pool: B::to_host(pool)?.data.to_f64().into_iter().map(|x| x as f32).collect(),
                rows: *rows,
            },
            Source::Philox { key, low, span, .. } => HostRestarts::Philox(PhiloxBox::new(*key, low, span)),
        })
    }

    /// Every copy's cursor (its next row in the pool, or its count of Philox restarts).
    pub(crate) fn cursors(&self) -> Result<Vec<usize>> {
        Ok(B::to_host(&self.cursor)?
            .data
            .to_f64()
            .into_iter()
            .map(|c| c as usize)
            .collect())
    }

    /// Why `cursor` cannot be this stream's, if it cannot: in a pool, copy `i` only ever
    /// reads rows `k * n + i`; Philox counts take any value.
    pub(crate) fn check_cursor(&self, cursor: &[usize]) -> std::result::Result<(), String> {
        if cursor.len() != self.n {
            return Err(format!("{} cursors for {} copies", cursor.len(), self.n));
        }
        let Source::Pool { rows, .. } = &self.source else {
            return Ok(());
        };
        match cursor.iter().enumerate().find(|(i, &c)| c >= *rows || c % self.n != *i) {
            Some((i, c)) => Err(format!(
                "copy {i}'s cursor {c} is not one of its rows in a pool of {rows} (rows k * {} + {i}); \
                 was it saved with Philox restarts?",
                self.n
            )),
            None => Ok(()),
        }
    }

    /// Sets every copy's cursor (rows into the pool), as a host pass left them.
    pub(crate) fn set_cursor(&mut self, cursor: &[usize]) -> Result<()> {
        let rows = cursor.iter().map(|&c| c as i64).collect();
        self.cursor = B::from_host(
            &HostTensor::new([self.n], HostData::I64(rows))?,
            B::device(&self.cursor),
        )?;
        Ok(())
    }

    /// The pool of start states (`[rows, width]`) and its rows, or `None` for Philox draws.
    pub(crate) fn pool(&self) -> Option<(&B::Tensor, usize)> {
        match &self.source {
            Source::Pool { pool, rows, .. } => Some((pool, *rows)),
            Source::Philox { .. } => None,
        }
    }

    /// Every copy's cursor as the tensor steps read.
    pub(crate) fn cursor(&self) -> &B::Tensor {
        &self.cursor
    }

    /// Replaces the cursor tensor (same shape, dtype and values' meaning).
    pub(crate) fn set_cursor_tensor(&mut self, cursor: B::Tensor) {
        self.cursor = cursor;
    }

    /// The device the stream lives on.
    pub(crate) fn device(&self) -> Device {
        B::device(&self.cursor)
    }

    /// The next start state of every copy.
    pub fn next_all(&mut self) -> Result<B::Tensor> {
        let all = B::full(&[self.n], 1.0, DType::U8, B::device(&self.cursor))?;
        self.next(&all)
    }
}
