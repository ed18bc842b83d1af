//! MinAtar's games as tensor programs: every copy's board, sticky action and draw counter in
//! one F32 row, stepped by tensor ops on any backend and device.
//!
//! A row is `[tick_lo, tick_hi, last_action, fields...]`: the copy's step count since it was
//! made (split at 2^24 so that both halves stay exact in f32), then what the native game's
//! `Env::state` gives after its tag (the sticky action, then the game's fields). So a row
//! without its first two values and with the id's tag in front is a state the native game
//! takes with `set_state`, and the tests step both from there.
//!
//! Random numbers are counter-based: copy `i` at tick `t` draws Philox4x32-10 of the counter
//! `(t mod 2^32, i, t >> 32, 1)` under the seed (restart streams use a last word of 0, so the
//! two never meet), and word `j`'s top 24 bits are the uniform `u_j` in `[0, 1)`. Word 0 decides
//! the sticky action (`u_0 < 0.1` repeats the previous one, as the package's
//! `Environment.act` does with its own generator), word 1 a restart's draw, words 2 and 3 the
//! game's own. Nothing is uploaded per step, and a copy's numbers do not depend on how many
//! copies step beside it or on which device.

mod breakout;

pub use breakout::BreakoutDynamics;

use rlgraph_core::{Backend, CoreError, DType, Device, HostTensor, Result};
use rlgraph_envs::minatar::{MinAtar, STICKY_ACTION_PROB};

use crate::batched::column;
use crate::philox::PhiloxTensors;

/// The MinAtar ids that have tensor versions.
pub const TENSOR_MINATAR_IDS: &[&str] = &["MinAtar/Breakout-v1", "MinAtar/Breakout-v0"];

/// Values before a game's fields in a row: the tick's two halves and the sticky action.
pub(crate) const PREFIX: usize = 3;

/// Where the tick's low half wraps into its high half.
const TICK_SPLIT: f64 = (1u64 << 24) as f64;

/// What every tensor MinAtar game shares: its id, action set, draws and sticky action.
pub(crate) struct Common<B: Backend> {
    pub(crate) id: String,
    /// The package's action (0 to 5) of each of the id's actions, F32 `[k]`.
    action_table: B::Tensor,
    pub(crate) num_actions: usize,
    generator: PhiloxTensors<B>,
    /// Each copy's index, I64 `[n]`: the counter's second word.
    copies: B::Tensor,
    /// The counter's last word, 1 for step draws, I64 `[n]`.
    domain: B::Tensor,
    sticky: B::Tensor,
    split: B::Tensor,
    pub(crate) zero: B::Tensor,
}

impl<B: Backend> Common<B> {
    /// The shared parts of `id` (a MinAtar id) for `n` copies on `device`, keyed by `seed`.
    pub(crate) fn new(id: &str, n: usize, seed: u64, device: Device) -> Result<Self> {
        let host = MinAtar::new(id, seed).map_err(|e| CoreError::Config {
            at: format!("tensor env {id}"),
            reason: e.to_string(),
        })?;
        let table: Vec<f32> = host.action_set().iter().map(|&a| a as f32).collect();
        let scalar = |v: f64| B::scalar(v, DType::F32, device);
        Ok(Common {
            id: id.into(),
            num_actions: table.len(),
            action_table: B::from_host(&HostTensor::f32([table.len()], table)?, device)?,
            generator: PhiloxTensors::new([seed as u32, (seed >> 32) as u32], device)?,
            copies: B::arange(n, device)?,
            domain: B::full(&[n], 1.0, DType::I64, device)?,
            sticky: B::scalar(STICKY_ACTION_PROB, DType::F32, device)?,
            split: scalar(TICK_SPLIT)?,
            zero: scalar(0.0)?,
        })
    }

    /// The four uniforms of every copy at its tick, each F32 `[n, 1]` (see the module docs).
    pub(crate) fn draws(&self, state: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let half = |i| B::squeeze(&B::cast(&column::<B>(state, i)?, DType::I64)?, 1);
        let tick = B::add(&half(0)?, &B::shift_left(&half(1)?, 24)?)?;
        let counter = [
            B::bit_and(&tick, self.generator.word_mask())?,
            self.copies.clone(),
            B::shift_right(&tick, 32)?,
            self.domain.clone(),
        ];
        self.generator
            .apply(counter)?
            .iter()
            .map(|word| {
                let top = B::cast(&B::shift_right(word, 8)?, DType::F32)?;
                B::unsqueeze(&B::affine(&top, 1.0 / TICK_SPLIT, 0.0)?, 1)
            })
            .collect()
    }

    /// The tick after `state`'s, as its two F32 columns `[n, 2]`.
    pub(crate) fn next_tick(&self, state: &B::Tensor) -> Result<B::Tensor> {
        let low = B::affine(&column::<B>(state, 0)?, 1.0, 1.0)?;
        let carry = B::ge(&low, &self.split)?;
        let low = B::where_cond(&carry, &self.zero, &low)?;
        let high = B::add(&column::<B>(state, 1)?, &B::cast(&carry, DType::F32)?)?;
        B::concat(&[low, high], 1)
    }

    /// The package action each copy plays, `[n, 1]`: the previous one where `u_0` is below the
    /// sticky probability, else the one given (`actions`: the id's action indices, `[n, 1]`).
    pub(crate) fn played(&self, state: &B::Tensor, actions: &B::Tensor, draws: &[B::Tensor]) -> Result<B::Tensor> {
        let index = B::cast(&B::squeeze(actions, 1)?, DType::I64)?;
        let given = B::unsqueeze(&B::index_select(&self.action_table, 0, &index)?, 1)?;
        B::where_cond(&B::lt(&draws[0], &self.sticky)?, &column::<B>(state, 2)?, &given)
    }
}

/// `mask` (U8) as F32 0 or 1: the games' branch conditions are combined by arithmetic.
pub(crate) fn f32_of<B: Backend>(mask: &B::Tensor) -> Result<B::Tensor> {
    B::cast(mask, DType::F32)
}

/// One channel of a board, U8 `[n, 100, 1]`: 1 at each copy's cell `y * 10 + x`.
pub(crate) fn cell<B: Backend>(y: &B::Tensor, x: &B::Tensor) -> Result<B::Tensor> {
    let index = B::cast(&B::squeeze(&B::add(&B::affine(y, 10.0, 0.0)?, x)?, 1)?, DType::I64)?;
    B::unsqueeze(&B::one_hot(&index, 100, DType::U8)?, 2)
}

/// The board of `channels` (each U8 `[n, 100, 1]`), channels last: U8 `[n, 10, 10, C]`.
pub(crate) fn board<B: Backend>(channels: &[B::Tensor], n: usize) -> Result<B::Tensor> {
    B::reshape(&B::concat(channels, 2)?, &[n, 10, 10, channels.len()])
}
