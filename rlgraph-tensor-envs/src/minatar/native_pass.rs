//! The host pass of the tensor MinAtar games: on the CPU each copy's row is stepped by the
//! native game (`rlgraph-envs`), given the uniforms the tensor program would draw for it, so
//! one pass over the copies replaces the hundreds of small tensor ops of a step with the same
//! numbers (a test holds the two paths together).

use std::sync::Mutex;

use rlgraph_core::spaces::Value;
use rlgraph_core::{CoreError, HostTensor, Result};
use rlgraph_envs::minatar::{Draws, MinAtar};
use rlgraph_envs::Env;

use super::{tick_halves, Kind, PREFIX, TICK_SPLIT};
use crate::philox::{philox_count, unit_float};

/// Which of a step's uniforms `u` the native game takes, in the order it asks.
#[derive(Clone, Debug)]
pub(crate) struct NativeDraws {
    /// What the native step takes after the sticky draw `u[0]`, given `u` and the copy's
    /// game fields before the step (a game may draw only on some steps).
    pub(crate) step: fn(&[f32], &[f32]) -> Vec<f32>,
    /// What the native reset takes.
    pub(crate) reset: fn(&[f32]) -> Vec<f32>,
}

/// One native game that plays every copy in turn, set to the copy's row.
pub(crate) struct NativePass {
    id: String,
    /// The game, which converts rows to native states and back.
    kind: Kind,
    native: Mutex<MinAtar>,
    /// The native state's first value: the id's tag.
    tag: f64,
    key: [u32; 2],
    /// The counter's last words a step draws from (1, then the game's extra domains).
    domains: u32,
    draws: NativeDraws,
    num_actions: usize,
    channels: usize,
}

/// Given uniforms for the native game, turned into integers as the tensor games do
/// (`low + floor(u * (high - low))` in f32).
struct Given<'a>(std::slice::Iter<'a, f32>);

impl Draws for Given<'_> {
    fn rand(&mut self) -> f64 {
        // The ranges are fixed per game and a test plays every branch; a short list would
        // be a bug here, and a zero keeps the step going rather than panicking.
        f64::from(self.0.next().copied().unwrap_or(0.0))
    }

    fn randint(&mut self, low: i64, high: i64) -> i64 {
        let u = self.0.next().copied().unwrap_or(0.0);
        low + (u * (high - low) as f32).floor() as i64
    }
}

impl NativePass {
    /// The pass for MinAtar id `id` (game `kind`) under `seed`, drawing from `domains` sets of
    /// four uniforms per step, handing the native game `draws`.
    pub(crate) fn new(id: &str, kind: Kind, seed: u64, domains: u32, draws: NativeDraws) -> Result<Self> {
        let native = MinAtar::new(id, seed).map_err(|e| CoreError::Config {
            at: format!("tensor env {id}"),
            reason: e.to_string(),
        })?;
        let tag = native.state().and_then(|s| s.first().copied()).unwrap_or_default();
        let channels = native
            .state_space()
            .shape()
            .and_then(|s| s.last().copied())
            .unwrap_or(1);
        Ok(NativePass {
            id: id.into(),
            kind,
            tag,
            key: [seed as u32, (seed >> 32) as u32],
            domains,
            draws,
            num_actions: native.action_set().len(),
            channels,
            native: Mutex::new(native),
        })
    }

    /// The uniforms of copy `copy` at tick `tick`, as `Common::draws` makes them.
    fn uniforms(&self, copy: usize, tick: u64) -> Vec<f32> {
        (1..=self.domains)
            .flat_map(|d| philox_count(self.key, tick, copy, d))
            .map(unit_float)
            .collect()
    }

    fn game(&self) -> Result<std::sync::MutexGuard<'_, MinAtar>> {
        self.native.lock().map_err(|_| CoreError::Config {
            at: "tensor env MinAtar: host pass".into(),
            reason: "a thread panicked while stepping the native game".into(),
        })
    }

    /// Sets `native` to the game of `row` (its sticky action and fields).
    fn set(&self, native: &mut MinAtar, row: &[f32]) -> Result<()> {
        let bad = |reason: String| CoreError::Config {
            at: format!("tensor env {}: host pass", self.id),
            reason,
        };
        let fields: Vec<f64> = row[PREFIX..].iter().map(|&v| f64::from(v)).collect();
        let game = self.kind.native_of_fields(&fields).map_err(bad)?;
        let state = [vec![self.tag, f64::from(row[PREFIX - 1])], game].concat();
        native.set_state(&state).map_err(|e| bad(e.to_string()))
    }

    /// Writes `native`'s sticky action and fields back into `row`.
    fn write(&self, native: &MinAtar, row: &mut [f32]) -> Result<()> {
        let state = native.state().unwrap_or_default();
        let fields = self
            .kind
            .fields_of_native(state.get(2..).unwrap_or_default())
            .map_err(|reason| CoreError::Config {
                at: format!("tensor env {}: host pass", self.id),
                reason,
            })?;
        let sticky = state.get(1).copied().unwrap_or_default();
        for (slot, v) in row[PREFIX - 1..].iter_mut().zip(std::iter::once(sticky).chain(fields)) {
            *slot = v as f32;
        }
        Ok(())
    }

    /// Copy `copy`'s step from `row` given its raw `action` (clamped into the action set, as
    /// the tensor path does): the row moves on a tick; returns the reward and termination.
    pub(crate) fn advance(&self, copy: usize, row: &mut [f32], action: f64) -> Result<(f32, bool)> {
        let tick = tick_of(row);
        let u = self.uniforms(copy, tick);
        let given: Vec<f32> = std::iter::once(u[0])
            .chain((self.draws.step)(&u, &row[PREFIX..]))
            .collect();
        let action = (action as i64).clamp(0, self.num_actions as i64 - 1);
        let mut native = self.game()?;
        self.set(&mut native, row)?;
        let step = native
            .step_drawing(&Value::i32(action as i32), &mut Given(given.iter()))
            .map_err(|e| CoreError::Config {
                at: format!("tensor env {}: host pass", self.id),
                reason: e.to_string(),
            })?;
        self.write(&native, row)?;
        let [low, high] = tick_halves(tick + 1);
        (row[0], row[1]) = (low as f32, high as f32);
        Ok((step.reward as f32, step.terminated))
    }

    /// Copy `copy`'s restart from `row`, the row its episode ended on: the native reset given
    /// the uniforms of the step that ended it (the tick before the row's).
    pub(crate) fn restart(&self, copy: usize, row: &mut [f32]) -> Result<()> {
        let u = self.uniforms(copy, tick_of(row).wrapping_sub(1));
        let mut native = self.game()?;
        self.set(&mut native, row)?;
        native.reset_drawing(&mut Given((self.draws.reset)(&u).iter()));
        self.write(&native, row)
    }

    /// The boards of `rows` (`[n * width]`), U8 `[n, 10, 10, channels]`.
    pub(crate) fn observe(&self, rows: &[f32], width: usize) -> Result<HostTensor> {
        let mut native = self.game()?;
        let n = rows.len() / width;
        let mut cells = Vec::with_capacity(n * 100 * self.channels);
        for row in rows.chunks_exact(width) {
            self.set(&mut native, row)?;
            if let Value::Uint8(board) = native.board() {
                cells.extend_from_slice(board.data());
            }
        }
        HostTensor::u8([n, 10, 10, self.channels], cells)
    }
}

/// A row's tick, from its two halves.
fn tick_of(row: &[f32]) -> u64 {
    row[0] as u64 + row[1] as u64 * TICK_SPLIT as u64
}
