//! MinAtar's Space Invaders as tensor ops: the native game's `act` (`rlgraph-envs`,
//! `minatar/space_invaders.py`'s rules) over 0/1 maps `[n, 100]`, every branch a mask.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, HostTensor, Result};

use super::{cell, channel, fixed_cells, fixed_map, is, moved, not, pick, Game, NativeDraws};
use crate::batched::column;

// Columns of the game's fields, in the native game's `encode` order.
const POS: usize = 0;
const ALIEN_DIR: usize = 1;
const MOVE_INTERVAL: usize = 2;
const MOVE_TIMER: usize = 3;
const ALIEN_SHOT_TIMER: usize = 4;
const RAMP_INDEX: usize = 5;
const SHOT_TIMER: usize = 6;
const TERMINAL: usize = 7;
const FRIENDLY_BULLETS: usize = 8;
const ENEMY_BULLETS: usize = 108;
const ALIENS: usize = 208;

const SHOT_COOL_DOWN: f64 = 5.0;
const ENEMY_MOVE_INTERVAL: f64 = 12.0;
const ENEMY_SHOT_INTERVAL: f64 = 10.0;

// The package's actions.
const LEFT: f64 = 1.0;
const RIGHT: f64 = 3.0;
const FIRE: f64 = 5.0;

/// A new wave: rows 0 to 3, columns 2 to 7.
fn is_wave(y: usize, x: usize) -> bool {
    y < 4 && (2..8).contains(&x)
}

/// Space Invaders' rules over `[n, 308]` fields (the column names above, then the friendly
/// bullets, the enemy bullets and the aliens, 100 cells each).
pub(crate) struct SpaceInvaders<B: Backend> {
    start: B::Tensor,
    wave: B::Tensor,
    left_column: B::Tensor,
    right_column: B::Tensor,
    bottom_row: B::Tensor,
    /// The columns' x, F32 `[1, 10]`, and the rows' y + 1, F32 `[1, 10, 1]`.
    xs: B::Tensor,
    ys_plus_one: B::Tensor,
    empty_row: B::Tensor,
    n: usize,
}

impl<B: Backend> SpaceInvaders<B> {
    /// The rules for `n` copies on `device`.
    pub(crate) fn new(n: usize, device: Device) -> Result<Self> {
        let start = start_fields();
        let steps: Vec<f32> = (0..10).map(|i| i as f32).collect();
        Ok(SpaceInvaders {
            start: B::from_host(
                &HostTensor::f32([1, start.len()], start.iter().map(|&v| v as f32).collect())?,
                device,
            )?,
            wave: fixed_map::<B>(device, is_wave)?,
            left_column: fixed_map::<B>(device, |_, x| x == 0)?,
            right_column: fixed_map::<B>(device, |_, x| x == 9)?,
            bottom_row: fixed_map::<B>(device, |y, _| y == 9)?,
            xs: B::from_host(&HostTensor::f32([1, 10], steps.clone())?, device)?,
            ys_plus_one: B::from_host(
                &HostTensor::f32([1, 10, 1], steps.iter().map(|y| y + 1.0).collect())?,
                device,
            )?,
            empty_row: B::full(&[n, 10], 0.0, DType::F32, device)?,
            n,
        })
    }
}

/// The native start (no draw): the cannon at 5, a wave heading left, the clocks full.
fn start_fields() -> Vec<f64> {
    let clocks = vec![
        5.0,
        -1.0,
        ENEMY_MOVE_INTERVAL,
        ENEMY_MOVE_INTERVAL,
        ENEMY_SHOT_INTERVAL,
        0.0,
        0.0,
        0.0,
    ];
    [clocks, vec![0.0; 200], fixed_cells(is_wave)].concat()
}

/// Whether any cell of `map` that `region` marks is set, F32 0/1 `[n, 1]`.
fn any_in<B: Backend>(map: &B::Tensor, region: &B::Tensor) -> Result<B::Tensor> {
    super::f32_of::<B>(&B::gt(
        &B::sum(&B::mul(map, region)?, &[1], true)?,
        &B::scalar(0.0, DType::F32, B::device(map))?,
    )?)
}

/// `map` `[n, 100]` with its columns rolled by `shift` (NumPy's `np.roll(m, shift, axis=1)`).
fn roll_columns<B: Backend>(map: &B::Tensor, shift: isize, n: usize) -> Result<B::Tensor> {
    let cut = shift.rem_euclid(10) as usize;
    let grid = B::reshape(map, &[n, 10, 10])?;
    let rolled = B::concat(
        &[B::narrow(&grid, 2, 10 - cut, cut)?, B::narrow(&grid, 2, 0, 10 - cut)?],
        2,
    )?;
    B::reshape(&rolled, &[n, 100])
}

/// The one-hot map `[n, 100]` of the cells `index` (F32 `[n, 1]`, `y * 10 + x`).
fn spot<B: Backend>(index: &B::Tensor) -> Result<B::Tensor> {
    B::one_hot(&B::cast(&B::squeeze(index, 1)?, DType::I64)?, 100, DType::F32)
}

impl<B: Backend> Game<B> for SpaceInvaders<B> {
    fn fields(&self) -> usize {
        ALIENS + 100
    }

    fn terminal(&self) -> usize {
        TERMINAL
    }

    /// Space Invaders draws nothing beyond the sticky action.
    fn native_draws(&self) -> Option<NativeDraws> {
        Some(NativeDraws {
            step: |_, _| vec![],
            reset: |_| vec![],
        })
    }

    fn start(&self, _draws: &[B::Tensor]) -> Result<B::Tensor> {
        B::broadcast_to(&self.start, &[self.n, ALIENS + 100])
    }

    fn start_host(&self, _rng: &mut ChaCha8Rng) -> Vec<f64> {
        start_fields()
    }

    fn act(
        &self,
        s: &B::Tensor,
        played: &B::Tensor,
        _draws: &[B::Tensor],
    ) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let n = self.n;
        let col = |i| column::<B>(s, i);
        let scalar = |v: f64| B::scalar(v, DType::F32, B::device(s));
        let map = |at| B::narrow(s, 1, at, 100);
        let (pos, dir, interval) = (col(POS)?, col(ALIEN_DIR)?, col(MOVE_INTERVAL)?);
        let (move_timer, alien_shot_timer, ramp, shot_timer) = (
            col(MOVE_TIMER)?,
            col(ALIEN_SHOT_TIMER)?,
            col(RAMP_INDEX)?,
            col(SHOT_TIMER)?,
        );
        let (friendly, enemy, aliens) = (map(FRIENDLY_BULLETS)?, map(ENEMY_BULLETS)?, map(ALIENS)?);

        // The cannon fires (if cooled down) or moves.
        let fire = B::mul(&is::<B>(played, FIRE)?, &is::<B>(&shot_timer, 0.0)?)?;
        let cannon = B::affine(&pos, 1.0, 90.0)?;
        let friendly = B::maximum(&friendly, &B::mul(&spot::<B>(&cannon)?, &fire)?)?;
        let shot_timer = pick::<B>(&fire, &scalar(SHOT_COOL_DOWN)?, &shot_timer)?;
        let pos = moved::<B>(played, LEFT, &pos, -1.0, (0.0, 9.0))?;
        let pos = moved::<B>(played, RIGHT, &pos, 1.0, (0.0, 9.0))?;
        let cannon = B::cast(&B::affine(&pos, 1.0, 90.0)?, DType::I64)?;

        // Bullets fly: the cannon's up a row, the aliens' down a row.
        let friendly = B::concat(&[B::narrow(&friendly, 1, 10, 90)?, self.empty_row.clone()], 1)?;
        let enemy = B::concat(&[self.empty_row.clone(), B::narrow(&enemy, 1, 0, 90)?], 1)?;
        let shot_down = B::maximum(&B::gather(&enemy, 1, &cannon)?, &B::gather(&aliens, 1, &cannon)?)?;

        // The aliens move when their clock runs out: down a row (wrapping, as `np.roll`) and
        // turning at a wall, else sideways.
        let moving = is::<B>(&move_timer, 0.0)?;
        let count = B::sum(&aliens, &[1], true)?;
        let heading_left = is::<B>(&dir, -1.0)?;
        let turn = B::maximum(
            &B::mul(&any_in::<B>(&aliens, &self.left_column)?, &heading_left)?,
            &B::mul(&any_in::<B>(&aliens, &self.right_column)?, &not::<B>(&heading_left)?)?,
        )?;
        let landed = B::mul(&turn, &any_in::<B>(&aliens, &self.bottom_row)?)?;
        let down = B::concat(&[B::narrow(&aliens, 1, 90, 10)?, B::narrow(&aliens, 1, 0, 90)?], 1)?;
        let sideways = pick::<B>(
            &heading_left,
            &roll_columns::<B>(&aliens, -1, n)?,
            &roll_columns::<B>(&aliens, 1, n)?,
        )?;
        let moved = pick::<B>(&turn, &down, &sideways)?;
        let aliens = pick::<B>(&moving, &moved, &aliens)?;
        let dir = pick::<B>(&B::mul(&moving, &turn)?, &B::neg(&dir)?, &dir)?;
        let move_timer = pick::<B>(&moving, &B::minimum(&count, &interval)?, &move_timer)?;
        let crushed = B::mul(&moving, &B::maximum(&landed, &B::gather(&aliens, 1, &cannon)?)?)?;

        // The alien nearest the cannon fires when its clock runs out: the lowest alien of the
        // nearest column holding one, the left column first on a tie.
        let shooting = is::<B>(&alien_shot_timer, 0.0)?;
        let alien_shot_timer = pick::<B>(&shooting, &scalar(ENEMY_SHOT_INTERVAL)?, &alien_shot_timer)?;
        let grid = B::reshape(&aliens, &[n, 10, 10])?;
        let lowest_plus_one = B::max(&B::mul(&grid, &self.ys_plus_one)?, 1, false)?;
        let held = super::f32_of::<B>(&B::gt(&lowest_plus_one, &scalar(0.0)?)?)?;
        let offset = B::sub(&self.xs, &pos)?;
        let rightward = super::f32_of::<B>(&B::gt(&offset, &scalar(0.0)?)?)?;
        let order = B::add(&B::affine(&B::abs(&offset)?, 2.0, 0.0)?, &rightward)?;
        let order = B::add(&order, &B::affine(&held, -100.0, 100.0)?)?;
        let x = B::cast(&B::argmax(&B::neg(&order)?, 1, true)?, DType::I64)?;
        let y = B::clamp(&B::affine(&B::gather(&lowest_plus_one, 1, &x)?, 1.0, -1.0)?, 0.0, 9.0)?;
        let fires = B::mul(&shooting, &B::max(&held, 1, true)?)?;
        let target = B::add(&B::affine(&y, 10.0, 0.0)?, &B::cast(&x, DType::F32)?)?;
        let enemy = B::maximum(&enemy, &B::mul(&spot::<B>(&target)?, &fires)?)?;

        // Bullets that meet aliens take them out, one point each.
        let hits = B::mul(&aliens, &friendly)?;
        let reward = B::sum(&hits, &[1], true)?;
        let (aliens, friendly) = (B::sub(&aliens, &hits)?, B::sub(&friendly, &hits)?);

        let shot_timer = B::maximum(&B::affine(&shot_timer, 1.0, -1.0)?, &scalar(0.0)?)?;
        let move_timer = B::affine(&move_timer, 1.0, -1.0)?;
        let alien_shot_timer = B::affine(&alien_shot_timer, 1.0, -1.0)?;
        // A cleared wave comes back, faster down to an interval of 6.
        let cleared = is::<B>(&B::sum(&aliens, &[1], true)?, 0.0)?;
        let faster = B::mul(&cleared, &super::f32_of::<B>(&B::gt(&interval, &scalar(6.0)?)?)?)?;
        let interval = B::sub(&interval, &faster)?;
        let ramp = B::add(&ramp, &faster)?;
        let aliens = B::maximum(&aliens, &B::mul(&self.wave, &cleared)?)?;

        let lost = B::maximum(&shot_down, &crushed)?;
        let fields = B::concat(
            &[
                pos,
                dir,
                interval,
                move_timer,
                alien_shot_timer,
                ramp,
                shot_timer,
                lost.clone(),
                friendly,
                enemy,
                aliens,
            ],
            1,
        )?;
        Ok((fields, reward, lost))
    }

    fn observe(&self, s: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let aliens = B::narrow(s, 1, ALIENS, 100)?;
        let heading_left = is::<B>(&column::<B>(s, ALIEN_DIR)?, -1.0)?;
        Ok(vec![
            cell::<B>(&B::scalar(9.0, DType::F32, B::device(s))?, &column::<B>(s, POS)?)?,
            channel::<B>(&aliens)?,
            channel::<B>(&B::mul(&aliens, &heading_left)?)?,
            channel::<B>(&B::mul(&aliens, &not::<B>(&heading_left)?)?)?,
            channel::<B>(&B::narrow(s, 1, FRIENDLY_BULLETS, 100)?)?,
            channel::<B>(&B::narrow(s, 1, ENEMY_BULLETS, 100)?)?,
        ])
    }
}
