//! MinAtar's Asterix as tensor ops: the native game's `act` (`rlgraph-envs`,
//! `minatar/asterix.rs`) with the eight rows' entities as `[n, 8]` columns and every branch a
//! mask.
//!
//! A spawn draws as the native `_spawn_entity` does, from the step's uniforms `u_1` (the side:
//! below 0.5 enters on the left, moving right), `u_2` (gold below 1/3) and `u_3` (the free row:
//! the `floor(u_3 * free)`-th, in f32). The game's start draws nothing.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, HostTensor, Result};

use super::{cell, channel, f32_of, is, lane_cells, moved, not, pick, Game, NativeDraws};
use crate::batched::column;

// Columns of the game's fields, in the native game's `encode` order: the player, then per row
// an entity's presence, x, direction (1 right) and kind (1 gold), then the clocks.
const PLAYER_X: usize = 0;
const PLAYER_Y: usize = 1;
const ENTITIES: usize = 2;
const ROWS: usize = 8;
const SPAWN_SPEED: usize = ENTITIES + 4 * ROWS;
const SPAWN_TIMER: usize = SPAWN_SPEED + 1;
const MOVE_SPEED: usize = SPAWN_SPEED + 2;
const MOVE_TIMER: usize = SPAWN_SPEED + 3;
const RAMP_TIMER: usize = SPAWN_SPEED + 4;
const RAMP_INDEX: usize = SPAWN_SPEED + 5;
const TERMINAL: usize = SPAWN_SPEED + 6;

const RAMP_INTERVAL: f64 = 100.0;
const INIT_SPAWN_SPEED: f64 = 10.0;
const INIT_MOVE_INTERVAL: f64 = 5.0;

// The package's actions.
const LEFT: f64 = 1.0;
const UP: f64 = 2.0;
const RIGHT: f64 = 3.0;
const DOWN: f64 = 4.0;

/// Asterix's rules over `[n, 41]` fields.
pub(crate) struct Asterix<B: Backend> {
    start: B::Tensor,
    /// Each entity row's board row (1 to 8), F32 `[1, 8]`.
    rows: B::Tensor,
    /// `upper[i][j] = 1` for `i <= j`, F32 `[8, 8]`: a row vector times it is its running sum.
    upper: B::Tensor,
    n: usize,
}

impl<B: Backend> Asterix<B> {
    /// The rules for `n` copies on `device`.
    pub(crate) fn new(n: usize, device: Device) -> Result<Self> {
        let start: Vec<f32> = start_fields().iter().map(|&v| v as f32).collect();
        let upper = (0..ROWS * ROWS)
            .map(|k| f32::from(u8::from(k / ROWS <= k % ROWS)))
            .collect();
        Ok(Asterix {
            start: B::from_host(&HostTensor::f32([1, start.len()], start)?, device)?,
            rows: B::from_host(
                &HostTensor::f32([1, ROWS], (1..=ROWS).map(|r| r as f32).collect())?,
                device,
            )?,
            upper: B::from_host(&HostTensor::f32([ROWS, ROWS], upper)?, device)?,
            n,
        })
    }

    /// The entities' columns `[n, 8]` each: present, x, right, gold.
    fn entities(&self, fields: &B::Tensor) -> Result<[B::Tensor; 4]> {
        let all = B::reshape(&B::narrow(fields, 1, ENTITIES, 4 * ROWS)?, &[self.n, ROWS, 4])?;
        let part = |j| B::reshape(&B::narrow(&all, 2, j, 1)?, &[self.n, ROWS]);
        Ok([part(0)?, part(1)?, part(2)?, part(3)?])
    }
}

/// The native start (no draw): the player in the middle, no entities, the clocks full.
fn start_fields() -> Vec<f64> {
    let clocks = [
        INIT_SPAWN_SPEED,
        INIT_SPAWN_SPEED,
        INIT_MOVE_INTERVAL,
        INIT_MOVE_INTERVAL,
        RAMP_INTERVAL,
        0.0,
        0.0,
    ];
    [vec![5.0, 5.0], vec![0.0; 4 * ROWS], clocks.to_vec()].concat()
}

impl<B: Backend> Game<B> for Asterix<B> {
    fn fields(&self) -> usize {
        TERMINAL + 1
    }

    fn terminal(&self) -> usize {
        TERMINAL
    }

    /// Asterix spawns from `u[1..4]` (side, kind, free row); its reset draws nothing.
    fn native_draws(&self) -> Option<NativeDraws> {
        Some(NativeDraws {
            step: |u, _| u[1..4].to_vec(),
            reset: |_| vec![],
        })
    }

    fn start(&self, _draws: &[B::Tensor]) -> Result<B::Tensor> {
        B::broadcast_to(&self.start, &[self.n, TERMINAL + 1])
    }

    fn start_host(&self, _rng: &mut ChaCha8Rng) -> Vec<f64> {
        start_fields()
    }

    fn act(&self, s: &B::Tensor, played: &B::Tensor, draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let col = |i| column::<B>(s, i);
        let scalar = |v: f64| B::scalar(v, DType::F32, B::device(s));
        let [present, x, right, gold] = self.entities(s)?;
        let (spawn_speed, spawn_timer) = (col(SPAWN_SPEED)?, col(SPAWN_TIMER)?);
        let (move_speed, move_timer) = (col(MOVE_SPEED)?, col(MOVE_TIMER)?);
        let (ramp_timer, ramp_index) = (col(RAMP_TIMER)?, col(RAMP_INDEX)?);

        // A spawn on its timer: a side, a kind, then one of the free rows.
        let spawning = is::<B>(&spawn_timer, 0.0)?;
        let from_left = f32_of::<B>(&B::lt(&draws[1], &scalar(0.5)?)?)?;
        let is_gold = f32_of::<B>(&B::lt(&draws[2], &scalar(1.0 / 3.0)?)?)?;
        let free = not::<B>(&present)?;
        let count = B::sum(&free, &[1], true)?;
        let pick_k = B::floor(&B::mul(&draws[3], &count)?)?;
        let running = B::matmul(&free, &self.upper)?;
        let chosen = B::mul(
            &B::mul(
                &free,
                &is::<B>(&B::sub(&running, &B::affine(&pick_k, 1.0, 1.0)?)?, 0.0)?,
            )?,
            &spawning,
        )?;
        let present = B::add(&present, &chosen)?;
        let x = B::add(&x, &B::mul(&chosen, &B::affine(&from_left, -9.0, 9.0)?)?)?;
        let right = B::add(&right, &B::mul(&chosen, &from_left)?)?;
        let gold = B::add(&gold, &B::mul(&chosen, &is_gold)?)?;
        let spawn_timer = pick::<B>(&spawning, &spawn_speed, &spawn_timer)?;

        // The player moves.
        let (px, py) = (col(PLAYER_X)?, col(PLAYER_Y)?);
        let px = moved::<B>(played, LEFT, &px, -1.0, (0.0, 9.0))?;
        let px = moved::<B>(played, RIGHT, &px, 1.0, (0.0, 9.0))?;
        let py = moved::<B>(played, UP, &py, -1.0, (1.0, 8.0))?;
        let py = moved::<B>(played, DOWN, &py, 1.0, (1.0, 8.0))?;
        let in_row = is::<B>(&B::sub(&self.rows, &py)?, 0.0)?;

        // Gold on the player is taken (+1, the row emptied); an enemy there ends the episode.
        let touch = |present: &B::Tensor, x: &B::Tensor, gold: &B::Tensor| -> Result<(B::Tensor, B::Tensor)> {
            let on = B::mul(&B::mul(present, &is::<B>(&B::sub(x, &px)?, 0.0)?)?, &in_row)?;
            Ok((B::mul(&on, gold)?, B::mul(&on, &not::<B>(gold)?)?))
        };
        let clear = |t: &B::Tensor, gone: &B::Tensor| B::mul(t, &not::<B>(gone)?);
        let (taken, caught) = touch(&present, &x, &gold)?;
        let mut reward = B::sum(&taken, &[1], true)?;
        let mut lost = B::max(&caught, 1, true)?;
        let [present, x, right, gold] = [&present, &x, &right, &gold].map(|t| clear(t, &taken));
        let (present, x, right, gold) = (present?, x?, right?, gold?);

        // The entities move on their timer; one that leaves the board is gone.
        let moving = is::<B>(&move_timer, 0.0)?;
        let move_timer = pick::<B>(&moving, &move_speed, &move_timer)?;
        let step = B::mul(&B::mul(&B::affine(&right, 2.0, -1.0)?, &present)?, &moving)?;
        let x = B::add(&x, &step)?;
        let off = f32_of::<B>(&B::maximum(&B::lt(&x, &scalar(0.0)?)?, &B::gt(&x, &scalar(9.0)?)?)?)?;
        let [present, x, right, gold] = [&present, &x, &right, &gold].map(|t| clear(t, &off));
        let (present, x, right, gold) = (present?, x?, right?, gold?);
        let (taken, caught) = touch(&B::mul(&present, &moving)?, &x, &gold)?;
        reward = B::add(&reward, &B::sum(&taken, &[1], true)?)?;
        lost = B::maximum(&lost, &B::max(&caught, 1, true)?)?;
        let [present, x, right, gold] = [&present, &x, &right, &gold].map(|t| clear(t, &taken));
        let (present, x, right, gold) = (present?, x?, right?, gold?);

        // The clocks, and difficulty ramping while either speed can still fall.
        let spawn_timer = B::affine(&spawn_timer, 1.0, -1.0)?;
        let move_timer = B::affine(&move_timer, 1.0, -1.0)?;
        let ramping = f32_of::<B>(&B::maximum(
            &B::gt(&spawn_speed, &scalar(1.0)?)?,
            &B::gt(&move_speed, &scalar(1.0)?)?,
        )?)?;
        let waiting = f32_of::<B>(&B::ge(&ramp_timer, &scalar(0.0)?)?)?;
        let ramp_now = B::mul(&ramping, &not::<B>(&waiting)?)?;
        let odd = B::sub(
            &ramp_index,
            &B::affine(&B::floor(&B::affine(&ramp_index, 0.5, 0.0)?)?, 2.0, 0.0)?,
        )?;
        let slower_move = B::mul(
            &B::mul(&ramp_now, &odd)?,
            &f32_of::<B>(&B::gt(&move_speed, &scalar(1.0)?)?)?,
        )?;
        let slower_spawn = B::mul(&ramp_now, &f32_of::<B>(&B::gt(&spawn_speed, &scalar(1.0)?)?)?)?;
        let ramp_timer = pick::<B>(
            &ramp_now,
            &scalar(RAMP_INTERVAL)?,
            &B::sub(&ramp_timer, &B::mul(&ramping, &waiting)?)?,
        )?;
        let fields = B::concat(
            &[
                px,
                py,
                B::reshape(
                    &B::concat(
                        &[present, x, right, gold]
                            .map(|t| B::unsqueeze(&t, 2))
                            .into_iter()
                            .collect::<Result<Vec<_>>>()?,
                        2,
                    )?,
                    &[self.n, 4 * ROWS],
                )?,
                B::sub(&spawn_speed, &slower_spawn)?,
                spawn_timer,
                B::sub(&move_speed, &slower_move)?,
                move_timer,
                ramp_timer,
                B::add(&ramp_index, &ramp_now)?,
                lost.clone(),
            ],
            1,
        )?;
        Ok((fields, reward, lost))
    }

    fn observe(&self, s: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let [present, x, right, gold] = self.entities(s)?;
        let lanes = |cells: &B::Tensor, on: &B::Tensor| channel::<B>(&lane_cells::<B>(&self.rows, cells, on)?);
        // The trail is the cell behind, where that is on the board.
        let back = B::sub(&x, &B::affine(&right, 2.0, -1.0)?)?;
        let zero = B::scalar(0.0, DType::F32, B::device(s))?;
        let nine = B::scalar(9.0, DType::F32, B::device(s))?;
        let on_board = B::mul(
            &f32_of::<B>(&B::ge(&back, &zero)?)?,
            &f32_of::<B>(&B::le(&back, &nine)?)?,
        )?;
        Ok(vec![
            cell::<B>(&column::<B>(s, PLAYER_Y)?, &column::<B>(s, PLAYER_X)?)?,
            lanes(&x, &B::mul(&present, &not::<B>(&gold)?)?)?,
            lanes(&B::clamp(&back, 0.0, 9.0)?, &B::mul(&present, &on_board)?)?,
            lanes(&x, &B::mul(&present, &gold)?)?,
        ])
    }
}
