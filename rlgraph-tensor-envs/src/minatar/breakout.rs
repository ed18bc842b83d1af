//! MinAtar's Breakout as tensor ops: the native game's `act` (`rlgraph-envs`,
//! `minatar/breakout.rs`) with every branch turned into a 0/1 mask over the copies.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, Result};

use super::{cell, channel, fixed_cells, fixed_map, is, moved, not, pick, Game, NativeDraws};
use crate::batched::column;

// Columns of the game's fields, in the native game's `encode` order.
const BALL_X: usize = 0;
const BALL_Y: usize = 1;
const BALL_DIR: usize = 2;
const POS: usize = 3;
const STRIKE: usize = 4;
const LAST_X: usize = 5;
const LAST_Y: usize = 6;
const TERMINAL: usize = 7;
const BRICKS: usize = 8;

// The package's actions that move the paddle.
const LEFT: f64 = 1.0;
const RIGHT: f64 = 3.0;

/// The wall: rows 1 to 3.
fn is_brick(y: usize, _x: usize) -> bool {
    (1..4).contains(&y)
}

/// Breakout's rules over `[n, 108]` fields (the column names above, then 100 bricks).
pub(crate) struct Breakout<B: Backend> {
    /// The full wall, F32 `[1, 100]`.
    wall: B::Tensor,
    nine: B::Tensor,
    half: B::Tensor,
    n: usize,
}

impl<B: Backend> Breakout<B> {
    /// The rules for `n` copies on `device`.
    pub(crate) fn new(n: usize, device: Device) -> Result<Self> {
        Ok(Breakout {
            wall: fixed_map::<B>(device, is_brick)?,
            nine: B::scalar(9.0, DType::F32, device)?,
            half: B::scalar(0.5, DType::F32, device)?,
            n,
        })
    }
}

/// The native start with the ball on `side` (0 left, heading down-right; 1 right, down-left).
fn start_fields(side: f64) -> Vec<f64> {
    let x = 9.0 * side;
    [vec![x, 3.0, 2.0 + side, 4.0, 0.0, x, 3.0, 0.0], fixed_cells(is_brick)].concat()
}

/// `dir` with its horizontal part reversed: 0 <-> 1, 2 <-> 3, as `dir + 1 - 2 * (dir mod 2)`.
fn flip_x<B: Backend>(dir: &B::Tensor) -> Result<B::Tensor> {
    let parity = B::sub(dir, &B::affine(&B::floor(&B::affine(dir, 0.5, 0.0)?)?, 2.0, 0.0)?)?;
    B::sub(&B::affine(dir, 1.0, 1.0)?, &B::affine(&parity, 2.0, 0.0)?)
}

impl<B: Backend> Game<B> for Breakout<B> {
    fn fields(&self) -> usize {
        BRICKS + 100
    }

    fn terminal(&self) -> usize {
        TERMINAL
    }

    /// The native `reset`'s one draw, the ball's side, is `u_1 >= 0.5`.
    /// Breakout draws nothing in a step, and its reset draws the side from `u[1]`.
    fn native_draws(&self) -> Option<NativeDraws> {
        Some(NativeDraws {
            step: |_, _| vec![],
            reset: |u| vec![u[1]],
        })
    }

    fn start(&self, draws: &[B::Tensor]) -> Result<B::Tensor> {
        let side = super::f32_of::<B>(&B::ge(&draws[1], &self.half)?)?;
        let fill = |v: f64| B::full(&[self.n, 1], v, DType::F32, B::device(&side));
        let x = B::affine(&side, 9.0, 0.0)?;
        let fields = [
            x.clone(),
            fill(3.0)?,
            B::affine(&side, 1.0, 2.0)?,
            fill(4.0)?,
            fill(0.0)?,
            x,
            fill(3.0)?,
            fill(0.0)?,
            B::broadcast_to(&self.wall, &[self.n, 100])?,
        ];
        B::concat(&fields, 1)
    }

    fn start_host(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        start_fields(f64::from(u8::from(rng.random_bool(0.5))))
    }

    fn act(
        &self,
        s: &B::Tensor,
        played: &B::Tensor,
        _draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let col = |i| column::<B>(s, i);
        let zero = B::scalar(0.0, DType::F32, B::device(s))?;
        let (ball_x, ball_y, dir, pos, strike) = (col(BALL_X)?, col(BALL_Y)?, col(BALL_DIR)?, col(POS)?, col(STRIKE)?);
        let bricks = B::narrow(s, 1, BRICKS, 100)?;

        let pos = moved::<B>(played, LEFT, &pos, -1.0, (0.0, 9.0))?;
        let pos = moved::<B>(played, RIGHT, &pos, 1.0, (0.0, 9.0))?;
        // Directions 0 up-left, 1 up-right, 2 down-right, 3 down-left.
        let rightward = B::add(&is::<B>(&dir, 1.0)?, &is::<B>(&dir, 2.0)?)?;
        let downward = B::add(&is::<B>(&dir, 2.0)?, &is::<B>(&dir, 3.0)?)?;
        let new_x = B::add(&ball_x, &B::affine(&rightward, 2.0, -1.0)?)?;
        let new_y = B::add(&ball_y, &B::affine(&downward, 2.0, -1.0)?)?;
        let off_side = super::f32_of::<B>(&B::maximum(&B::lt(&new_x, &zero)?, &B::gt(&new_x, &self.nine)?)?)?;
        let new_x = B::clamp(&new_x, 0.0, 9.0)?;
        let dir = pick::<B>(&off_side, &flip_x::<B>(&dir)?, &dir)?;

        // The branches of the native `if new_y < 0 / elif brick / elif new_y == 9`.
        let top = super::f32_of::<B>(&B::lt(&new_y, &zero)?)?;
        let index = B::cast(
            &B::add(&B::affine(&B::clamp(&new_y, 0.0, 9.0)?, 10.0, 0.0)?, &new_x)?,
            DType::I64,
        )?;
        let brick = B::mul(&not::<B>(&top)?, &B::gather(&bricks, 1, &index)?)?;
        let hit = B::mul(&brick, &not::<B>(&strike)?)?;
        let bottom = B::mul(&B::mul(&not::<B>(&top)?, &not::<B>(&brick)?)?, &is::<B>(&new_y, 9.0)?)?;
        let cleared = is::<B>(&B::sum(&bricks, &[1], true)?, 0.0)?;
        let under_ball = B::mul(&bottom, &is::<B>(&B::sub(&ball_x, &pos)?, 0.0)?)?;
        let missed_ball = B::mul(&bottom, &not::<B>(&under_ball)?)?;
        let at_corner = B::mul(&missed_ball, &is::<B>(&B::sub(&new_x, &pos)?, 0.0)?)?;
        let lost = B::mul(&missed_ball, &not::<B>(&at_corner)?)?;

        let reversed = B::affine(&dir, -1.0, 3.0)?;
        let dir = pick::<B>(&B::add(&B::add(&top, &hit)?, &under_ball)?, &reversed, &dir)?;
        // The paddle's corner sends the ball back the way it came: 0 <-> 2, 1 <-> 3.
        let back = B::sub(
            &B::affine(&dir, 1.0, 2.0)?,
            &B::affine(&B::floor(&B::affine(&dir, 0.5, 0.0)?)?, 4.0, 0.0)?,
        )?;
        let dir = pick::<B>(&at_corner, &back, &dir)?;
        let new_y = pick::<B>(&top, &zero, &new_y)?;
        let new_y = pick::<B>(&B::add(&B::add(&hit, &under_ball)?, &at_corner)?, &ball_y, &new_y)?;
        let bricks = B::sub(
            &bricks,
            &B::mul(&B::one_hot(&B::squeeze(&index, 1)?, 100, DType::F32)?, &hit)?,
        )?;
        let bricks = B::maximum(&bricks, &B::mul(&self.wall, &B::mul(&bottom, &cleared)?)?)?;

        let fields = B::concat(
            &[new_x, new_y, dir, pos, brick, ball_x, ball_y, lost.clone(), bricks],
            1,
        )?;
        Ok((fields, hit, lost))
    }

    fn observe(&self, s: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let col = |i| column::<B>(s, i);
        Ok(vec![
            cell::<B>(&self.nine, &col(POS)?)?,
            cell::<B>(&col(BALL_Y)?, &col(BALL_X)?)?,
            cell::<B>(&col(LAST_Y)?, &col(LAST_X)?)?,
            channel::<B>(&B::narrow(s, 1, BRICKS, 100)?)?,
        ])
    }
}
