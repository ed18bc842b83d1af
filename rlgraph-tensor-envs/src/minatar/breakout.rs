//! MinAtar's Breakout as tensor ops: the native game's `act` (`rlgraph-envs`,
//! `minatar/breakout.rs`) with every branch turned into a 0/1 mask over the copies.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, HostTensor, Result};

use super::{board, cell, f32_of, Common, PREFIX};
use crate::batched::{column, discrete_actions, Dynamics};

// Columns of a row: the shared prefix, then the native game's fields in its `encode` order.
const BALL_X: usize = PREFIX;
const BALL_Y: usize = PREFIX + 1;
const BALL_DIR: usize = PREFIX + 2;
const POS: usize = PREFIX + 3;
const STRIKE: usize = PREFIX + 4;
const LAST_X: usize = PREFIX + 5;
const LAST_Y: usize = PREFIX + 6;
const TERMINAL: usize = PREFIX + 7;
const BRICKS: usize = PREFIX + 8;
/// Values in a row.
const WIDTH: usize = BRICKS + 100;

// The package's actions that move the paddle.
const LEFT: f64 = 1.0;
const RIGHT: f64 = 3.0;

/// Breakout over `[n, 111]` rows (see the [module](super) docs and the column names above).
pub struct BreakoutDynamics<B: Backend> {
    common: Common<B>,
    /// The full wall (rows 1 to 3), F32 `[1, 100]`.
    wall: B::Tensor,
    nine: B::Tensor,
    half: B::Tensor,
    n: usize,
}

impl<B: Backend> BreakoutDynamics<B> {
    /// `id` (`MinAtar/Breakout-v1` or `-v0`) for `n` copies on `device`, drawing under `seed`.
    pub fn new(id: &str, n: usize, seed: u64, device: Device) -> Result<Self> {
        let wall: Vec<f32> = (0..100).map(|i| f32::from(u8::from((10..40).contains(&i)))).collect();
        Ok(BreakoutDynamics {
            common: Common::new(id, n, seed, device)?,
            wall: B::from_host(&HostTensor::f32([1, 100], wall)?, device)?,
            nine: B::scalar(9.0, DType::F32, device)?,
            half: B::scalar(0.5, DType::F32, device)?,
            n,
        })
    }

    /// The game's start with the ball on `side` (F32 `[n, 1]`: 0 left going down-right, 1
    /// right going down-left), as the native `reset` makes it, after the shared prefix `prefix`.
    fn start(&self, prefix: &B::Tensor, side: &B::Tensor) -> Result<B::Tensor> {
        let n = self.n;
        let fill = |v: f64| B::full(&[n, 1], v, DType::F32, B::device(side));
        let x = B::affine(side, 9.0, 0.0)?;
        let fields = [
            x.clone(),
            fill(3.0)?,
            B::affine(side, 1.0, 2.0)?,
            fill(4.0)?,
            fill(0.0)?,
            x,
            fill(3.0)?,
            fill(0.0)?,
            B::broadcast_to(&self.wall, &[n, 100])?,
        ];
        B::concat(&[&[prefix.clone()], &fields[..]].concat(), 1)
    }
}

/// `dir` with its horizontal part reversed (up-left and up-right swap, as do the downs).
fn flip_x<B: Backend>(dir: &B::Tensor) -> Result<B::Tensor> {
    // 0 <-> 1, 2 <-> 3: dir + 1 - 2 * (dir mod 2).
    let parity = B::sub(dir, &B::affine(&B::floor(&B::affine(dir, 0.5, 0.0)?)?, 2.0, 0.0)?)?;
    B::sub(&B::affine(dir, 1.0, 1.0)?, &B::affine(&parity, 2.0, 0.0)?)
}

impl<B: Backend> Dynamics<B> for BreakoutDynamics<B> {
    fn id(&self) -> &str {
        &self.common.id
    }

    fn width(&self) -> usize {
        WIDTH
    }

    fn limit(&self) -> Option<usize> {
        None
    }

    /// A start at tick 0 with no previous action, the ball's side a fair coin (only the
    /// copies' first episode starts so; later ones take their side from the step's draws).
    fn start_state(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        let side = f64::from(u8::from(rng.random_bool(0.5)));
        let mut row = vec![
            0.0,
            0.0,
            0.0,
            9.0 * side,
            3.0,
            2.0 + side,
            4.0,
            0.0,
            9.0 * side,
            3.0,
            0.0,
        ];
        row.extend((0..100).map(|i| f64::from(u8::from((10..40).contains(&i)))));
        row
    }

    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        let row = self.start_state(&mut rand::SeedableRng::seed_from_u64(0));
        (row.clone(), row)
    }

    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        discrete_actions::<B>(self.id(), actions, n, self.common.num_actions)
    }

    fn draws(&self, state: &B::Tensor) -> Result<Vec<B::Tensor>> {
        self.common.draws(state)
    }

    fn advance(
        &self,
        s: &B::Tensor,
        actions: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let c = &self.common;
        let col = |i| column::<B>(s, i);
        let is = |t: &B::Tensor, v: f64| -> Result<B::Tensor> {
            f32_of::<B>(&B::eq(t, &B::scalar(v, DType::F32, B::device(t))?)?)
        };
        let not = |t: &B::Tensor| B::affine(t, -1.0, 1.0);
        let pick = |mask: &B::Tensor, yes: &B::Tensor, no: &B::Tensor| B::where_cond(&B::gt(mask, &c.zero)?, yes, no);
        let played = c.played(s, actions, draws)?;
        let (ball_x, ball_y, dir, pos, strike) = (col(BALL_X)?, col(BALL_Y)?, col(BALL_DIR)?, col(POS)?, col(STRIKE)?);
        let bricks = B::narrow(s, 1, BRICKS, 100)?;

        let pos = pick(
            &is(&played, LEFT)?,
            &B::clamp(&B::affine(&pos, 1.0, -1.0)?, 0.0, 9.0)?,
            &pos,
        )?;
        let pos = pick(
            &is(&played, RIGHT)?,
            &B::clamp(&B::affine(&pos, 1.0, 1.0)?, 0.0, 9.0)?,
            &pos,
        )?;
        // Directions 0 up-left, 1 up-right, 2 down-right, 3 down-left.
        let rightward = B::add(&is(&dir, 1.0)?, &is(&dir, 2.0)?)?;
        let downward = f32_of::<B>(&B::ge(&dir, &B::scalar(2.0, DType::F32, B::device(&dir))?)?)?;
        let new_x = B::add(&ball_x, &B::affine(&rightward, 2.0, -1.0)?)?;
        let new_y = B::add(&ball_y, &B::affine(&downward, 2.0, -1.0)?)?;
        let off_side = f32_of::<B>(&B::maximum(&B::lt(&new_x, &c.zero)?, &B::gt(&new_x, &self.nine)?)?)?;
        let new_x = B::clamp(&new_x, 0.0, 9.0)?;
        let dir = pick(&off_side, &flip_x::<B>(&dir)?, &dir)?;

        // The branches of the native `if new_y < 0 / elif brick / elif new_y == 9`.
        let top = f32_of::<B>(&B::lt(&new_y, &c.zero)?)?;
        let index = B::cast(
            &B::add(&B::affine(&B::clamp(&new_y, 0.0, 9.0)?, 10.0, 0.0)?, &new_x)?,
            DType::I64,
        )?;
        let brick = B::mul(&not(&top)?, &B::gather(&bricks, 1, &index)?)?;
        let hit = B::mul(&brick, &not(&strike)?)?;
        let bottom = B::mul(&B::mul(&not(&top)?, &not(&brick)?)?, &is(&new_y, 9.0)?)?;
        let cleared = is(&B::sum(&bricks, &[1], true)?, 0.0)?;
        let under_ball = B::mul(&bottom, &is(&B::sub(&ball_x, &pos)?, 0.0)?)?;
        let at_corner = B::mul(&B::mul(&bottom, &not(&under_ball)?)?, &is(&B::sub(&new_x, &pos)?, 0.0)?)?;
        let lost = B::mul(&B::mul(&bottom, &not(&under_ball)?)?, &not(&at_corner)?)?;

        let reversed = B::sub(&B::scalar(3.0, DType::F32, B::device(&dir))?, &dir)?;
        let dir = pick(&B::add(&B::add(&top, &hit)?, &under_ball)?, &reversed, &dir)?;
        // Hitting the paddle's corner sends the ball back the way it came: 0 <-> 2, 1 <-> 3.
        let back = B::sub(
            &B::affine(&dir, 1.0, 2.0)?,
            &B::affine(&B::floor(&B::affine(&dir, 0.5, 0.0)?)?, 4.0, 0.0)?,
        )?;
        let dir = pick(&at_corner, &back, &dir)?;
        let new_y = pick(&top, &c.zero, &new_y)?;
        let new_y = pick(&B::add(&B::add(&hit, &under_ball)?, &at_corner)?, &ball_y, &new_y)?;
        let bricks = B::sub(
            &bricks,
            &B::mul(&B::one_hot(&B::squeeze(&index, 1)?, 100, DType::F32)?, &hit)?,
        )?;
        let bricks = B::maximum(&bricks, &B::mul(&self.wall, &B::mul(&bottom, &cleared)?)?)?;

        let moved = B::concat(
            &[new_x, new_y, dir, pos, brick, ball_x, ball_y, lost.clone(), bricks],
            1,
        )?;
        // A terminal game stands still and scores nothing, as the native `act` returns early.
        let terminal = col(TERMINAL)?;
        let fields = pick(&terminal, &B::narrow(s, 1, PREFIX, WIDTH - PREFIX)?, &moved)?;
        let next = B::concat(&[c.next_tick(s)?, played, fields], 1)?;
        let reward = B::squeeze(&B::mul(&hit, &not(&terminal)?)?, 1)?;
        let terminated = B::cast(&B::squeeze(&B::maximum(&lost, &terminal)?, 1)?, DType::U8)?;
        Ok((next, reward, terminated))
    }

    fn restart(
        &self,
        next: &B::Tensor,
        _start: &B::Tensor,
        done: &B::Tensor,
        draws: &[B::Tensor],
    ) -> Result<B::Tensor> {
        let side = f32_of::<B>(&B::ge(&draws[1], &self.half)?)?;
        let start = self.start(&B::narrow(next, 1, 0, PREFIX)?, &side)?;
        B::where_cond(&B::unsqueeze(done, 1)?, &start, next)
    }

    fn observe(&self, s: &B::Tensor) -> Result<B::Tensor> {
        let col = |i| column::<B>(s, i);
        let paddle = cell::<B>(&self.nine, &col(POS)?)?;
        let ball = cell::<B>(&col(BALL_Y)?, &col(BALL_X)?)?;
        let trail = cell::<B>(&col(LAST_Y)?, &col(LAST_X)?)?;
        let bricks = B::unsqueeze(&B::cast(&B::narrow(s, 1, BRICKS, 100)?, DType::U8)?, 2)?;
        board::<B>(&[paddle, ball, trail, bricks], self.n)
    }
}
