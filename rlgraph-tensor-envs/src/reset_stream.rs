//! Start states for resets inside the step: a stream drawn once on the host from a seed.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, HostData, HostTensor, Result};

/// Start states for `n` copies, `depth` per copy, drawn once from a seeded host RNG and kept
/// on the device. Copy `i`'s `k`-th reset takes row `k * n + i` (cycling after `depth`);
/// one `index_select` and a few integer ops per step serve every copy, and no random number
/// crosses the bus after construction.
///
/// Why a stream and not a counter-based generator on the device: the `Backend` trait has no
/// bitwise integer ops to build one from, and a stream drawn from the same ChaCha8 seed
/// gives bit-identical start states on candle, libtorch CPU and CUDA, and on the host
/// environments' own distributions ([`rlgraph_envs::CartPole::start_state`] and friends).
/// The cost is memory (`depth * n * width` values) and the cycle: a copy's start states
/// repeat after `depth` episodes, across `depth * n` distinct states in all.
pub struct ResetStream<B: Backend> {
    pool: B::Tensor,
    cursor: B::Tensor,
    advance: B::Tensor,
    wrap: B::Tensor,
    n: usize,
    /// Rows in the pool (`depth * n`).
    rows: usize,
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
            pool,
            cursor: B::arange(n, device)?,
            advance: B::scalar(n as f64, DType::I64, device)?,
            wrap: B::scalar((depth * n) as f64, DType::I64, device)?,
            n,
            rows: depth * n,
        })
    }

    /// The next start state of every copy whose `mask` (U8 `[n]`) is 1, and the current one
    /// of the others (`[n, width]`); the masked copies' cursors move on.
    pub fn next(&mut self, mask: &B::Tensor) -> Result<B::Tensor> {
        let rows = B::index_select(&self.pool, 0, &self.cursor)?;
        let moved = B::add(&self.cursor, &B::mul(&B::cast(mask, DType::I64)?, &self.advance)?)?;
        self.cursor = B::where_cond(&B::ge(&moved, &self.wrap)?, &B::sub(&moved, &self.wrap)?, &moved)?;
        Ok(rows)
    }

    /// The pool as f32 rows (flat) and every copy's cursor (its next row), on the host.
    pub(crate) fn host_parts(&self) -> Result<(Vec<f32>, Vec<usize>)> {
        let pool = B::to_host(&self.pool)?
            .data
            .to_f64()
            .into_iter()
            .map(|x| x as f32)
            .collect();
        Ok((pool, self.cursors()?))
    }

    /// Every copy's cursor (its next row in the pool).
    pub(crate) fn cursors(&self) -> Result<Vec<usize>> {
        Ok(B::to_host(&self.cursor)?
            .data
            .to_f64()
            .into_iter()
            .map(|c| c as usize)
            .collect())
    }

    /// Why `cursor` cannot be this stream's, if it cannot: copy `i` only ever reads rows
    /// `k * n + i` of the pool.
    pub(crate) fn check_cursor(&self, cursor: &[usize]) -> std::result::Result<(), String> {
        if cursor.len() != self.n {
            return Err(format!("{} cursors for {} copies", cursor.len(), self.n));
        }
        match cursor
            .iter()
            .enumerate()
            .find(|(i, &c)| c >= self.rows || c % self.n != *i)
        {
            Some((i, c)) => Err(format!(
                "copy {i}'s cursor {c} is not one of its rows in a pool of {} (rows k * {} + {i})",
                self.rows, self.n
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

    /// The start states, `[rows, width]`.
    pub(crate) fn pool(&self) -> &B::Tensor {
        &self.pool
    }

    /// Rows in the pool.
    pub(crate) fn rows(&self) -> usize {
        self.rows
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
        B::device(&self.pool)
    }

    /// The next start state of every copy.
    pub fn next_all(&mut self) -> Result<B::Tensor> {
        let all = B::full(&[self.n], 1.0, DType::U8, B::device(&self.cursor))?;
        self.next(&all)
    }
}
