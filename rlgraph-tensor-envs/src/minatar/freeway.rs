//! MinAtar's Freeway as tensor ops: the native game's `act` (`rlgraph-envs`,
//! `minatar/freeway.rs`) with the eight lanes as `[n, 8]` columns and every branch a mask.
//!
//! A crossing (and a restart) draws eight speeds and eight directions as the native
//! `_randomize_cars` does, from the step's car uniforms `c_0..c_15` (Philox words of the
//! counter's domains 2 to 5): speed `i` is `1 + floor(c_i * 5)` (in f32), its sign that of
//! `c_{8+i} - 0.5` (0 at exactly one half, as NumPy's `sign`).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, DType, Device, HostTensor, Result};

use super::{cell, channel, f32_of, is, lane_cells, pick, Game, NativeDraws};
use crate::batched::column;

// Columns of the game's fields, in the native game's `encode` order; then per lane a car's
// x, timer and signed speed.
const POS: usize = 0;
const MOVE_TIMER: usize = 1;
const TERMINATE_TIMER: usize = 2;
const TERMINAL: usize = 3;
const CARS: usize = 4;
const LANES: usize = 8;

const PLAYER_SPEED: f64 = 3.0;
const TIME_LIMIT: f64 = 2500.0;

// The package's actions.
const UP: f64 = 2.0;
const DOWN: f64 = 4.0;

/// Freeway's rules over `[n, 28]` fields.
pub(crate) struct Freeway<B: Backend> {
    /// Each lane's row (1 to 8), F32 `[1, 8]`.
    rows: B::Tensor,
    n: usize,
}

impl<B: Backend> Freeway<B> {
    /// The rules for `n` copies on `device`.
    pub(crate) fn new(n: usize, device: Device) -> Result<Self> {
        let rows: Vec<f32> = (1..=LANES).map(|r| r as f32).collect();
        Ok(Freeway {
            rows: B::from_host(&HostTensor::f32([1, LANES], rows)?, device)?,
            n,
        })
    }

    /// The cars' columns `[n, 8]` each: x, timer, speed.
    fn cars(&self, fields: &B::Tensor) -> Result<[B::Tensor; 3]> {
        let cars = B::reshape(&B::narrow(fields, 1, CARS, 3 * LANES)?, &[self.n, LANES, 3])?;
        let part = |j| B::reshape(&B::narrow(&cars, 2, j, 1)?, &[self.n, LANES]);
        Ok([part(0)?, part(1)?, part(2)?])
    }

    /// The cars as fields `[n, 24]`, lane by lane.
    fn fields_of(&self, [x, timer, speed]: [&B::Tensor; 3]) -> Result<B::Tensor> {
        let column = |t: &B::Tensor| B::unsqueeze(t, 2);
        let cars = B::concat(&[column(x)?, column(timer)?, column(speed)?], 2)?;
        B::reshape(&cars, &[self.n, 3 * LANES])
    }

    /// The eight signed speeds `[n, 8]` the step's car uniforms draw.
    fn speeds(&self, draws: &[B::Tensor]) -> Result<B::Tensor> {
        let uniforms = B::concat(&draws[4..4 + 2 * LANES], 1)?;
        let magnitude = B::affine(
            &B::floor(&B::affine(&B::narrow(&uniforms, 1, 0, LANES)?, 5.0, 0.0)?)?,
            1.0,
            1.0,
        )?;
        let direction = B::narrow(&uniforms, 1, LANES, LANES)?;
        let half = B::scalar(0.5, DType::F32, B::device(&direction))?;
        let sign = B::sub(
            &f32_of::<B>(&B::gt(&direction, &half)?)?,
            &f32_of::<B>(&B::lt(&direction, &half)?)?,
        )?;
        B::mul(&magnitude, &sign)
    }
}

impl<B: Backend> Game<B> for Freeway<B> {
    fn fields(&self) -> usize {
        CARS + 3 * LANES
    }

    fn terminal(&self) -> usize {
        TERMINAL
    }

    fn extra_words(&self) -> usize {
        2 * LANES / 4
    }

    /// Freeway draws its cars (eight speeds, eight directions) from `u[4..20]`, at a crossing
    /// and a reset alike.
    fn native_draws(&self) -> Option<NativeDraws> {
        Some(NativeDraws {
            step: |u, _| u[4..20].to_vec(),
            reset: |u| u[4..20].to_vec(),
        })
    }

    /// The native `reset`: the chicken at the bottom, every car at the left edge with new
    /// speeds.
    fn start(&self, draws: &[B::Tensor]) -> Result<B::Tensor> {
        let speed = self.speeds(draws)?;
        let device = B::device(&speed);
        let fill = |v: f64, width: usize| B::full(&[self.n, width], v, DType::F32, device);
        let clocks = B::concat(
            &[
                fill(9.0, 1)?,
                fill(PLAYER_SPEED, 1)?,
                fill(TIME_LIMIT, 1)?,
                fill(0.0, 1)?,
            ],
            1,
        )?;
        let cars = self.fields_of([&fill(0.0, LANES)?, &B::abs(&speed)?, &speed])?;
        B::concat(&[clocks, cars], 1)
    }

    fn start_host(&self, rng: &mut ChaCha8Rng) -> Vec<f64> {
        let mut fields = vec![9.0, PLAYER_SPEED, TIME_LIMIT, 0.0];
        for _ in 0..LANES {
            let speed = f64::from(rng.random_range(1..6)) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            fields.extend([0.0, speed.abs(), speed]);
        }
        fields
    }

    fn act(&self, s: &B::Tensor, played: &B::Tensor, draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let col = |i| column::<B>(s, i);
        let scalar = |v: f64| B::scalar(v, DType::F32, B::device(s));
        let (pos, move_timer, terminate_timer) = (col(POS)?, col(MOVE_TIMER)?, col(TERMINATE_TIMER)?);
        let [x, timer, speed] = self.cars(s)?;

        // The chicken moves once its timer allows.
        let ready = is::<B>(&move_timer, 0.0)?;
        let (up, down) = (
            B::mul(&is::<B>(played, UP)?, &ready)?,
            B::mul(&is::<B>(played, DOWN)?, &ready)?,
        );
        let move_timer = pick::<B>(&B::add(&up, &down)?, &scalar(PLAYER_SPEED)?, &move_timer)?;
        let pos = pick::<B>(&up, &B::clamp(&B::affine(&pos, 1.0, -1.0)?, 0.0, 9.0)?, &pos)?;
        let pos = pick::<B>(&down, &B::clamp(&B::affine(&pos, 1.0, 1.0)?, 0.0, 9.0)?, &pos)?;
        // Across: a point, the chicken back at the bottom, new speeds (the cars stay put).
        let crossed = is::<B>(&pos, 0.0)?;
        let fresh = self.speeds(draws)?;
        let timer = pick::<B>(&crossed, &B::abs(&fresh)?, &timer)?;
        let speed = pick::<B>(&crossed, &fresh, &speed)?;
        let pos = pick::<B>(&crossed, &scalar(9.0)?, &pos)?;

        // Each car on its timer moves a cell (wrapping); a car in the chicken's column and
        // row, before or after its move, sends the chicken back.
        let in_row = is::<B>(&B::sub(&self.rows, &pos)?, 0.0)?;
        let before = B::mul(&is::<B>(&x, 4.0)?, &in_row)?;
        let moving = is::<B>(&timer, 0.0)?;
        let step = B::affine(&f32_of::<B>(&B::gt(&speed, &scalar(0.0)?)?)?, 2.0, -1.0)?;
        let moved = B::add(&x, &step)?;
        let moved = pick::<B>(&f32_of::<B>(&B::lt(&moved, &scalar(0.0)?)?)?, &scalar(9.0)?, &moved)?;
        let moved = pick::<B>(&f32_of::<B>(&B::gt(&moved, &scalar(9.0)?)?)?, &scalar(0.0)?, &moved)?;
        let after = B::mul(&B::mul(&moving, &is::<B>(&moved, 4.0)?)?, &in_row)?;
        let hit = B::max(&B::maximum(&before, &after)?, 1, true)?;
        let pos = pick::<B>(&hit, &scalar(9.0)?, &pos)?;
        let x = pick::<B>(&moving, &moved, &x)?;
        let timer = pick::<B>(&moving, &B::abs(&speed)?, &B::affine(&timer, 1.0, -1.0)?)?;

        let move_timer = B::maximum(&B::affine(&move_timer, 1.0, -1.0)?, &scalar(0.0)?)?;
        let terminate_timer = B::affine(&terminate_timer, 1.0, -1.0)?;
        let over = f32_of::<B>(&B::lt(&terminate_timer, &scalar(0.0)?)?)?;
        let fields = B::concat(
            &[
                pos,
                move_timer,
                terminate_timer,
                over.clone(),
                self.fields_of([&x, &timer, &speed])?,
            ],
            1,
        )?;
        Ok((fields, crossed, over))
    }

    fn observe(&self, s: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let [x, _, speed] = self.cars(s)?;
        let zero = B::scalar(0.0, DType::F32, B::device(s))?;
        let lanes = |cells: &B::Tensor, on: &B::Tensor| channel::<B>(&lane_cells::<B>(&self.rows, cells, on)?);
        // The trail is the cell behind, wrapping.
        let back = B::sub(&x, &B::affine(&f32_of::<B>(&B::gt(&speed, &zero)?)?, 2.0, -1.0)?)?;
        let back = B::sub(&back, &B::affine(&B::floor(&B::affine(&back, 0.1, 0.0)?)?, 10.0, 0.0)?)?;
        // A car of speed 0 keeps the trail channel of the car before it (the reference's loop
        // variable is not reassigned); the first such car gets none.
        let magnitude = B::abs(&speed)?;
        let mut kept = B::narrow(&magnitude, 1, 0, 1)?;
        let mut channels = vec![kept.clone()];
        for lane in 1..LANES {
            let own = B::narrow(&magnitude, 1, lane, 1)?;
            kept = pick::<B>(&own, &own, &kept)?;
            channels.push(kept.clone());
        }
        let kept = B::concat(&channels, 1)?;
        let chicken = cell::<B>(&column::<B>(s, POS)?, &B::scalar(4.0, DType::F32, B::device(s))?)?;
        let mut channels = vec![
            chicken,
            lanes(&x, &B::full(&[self.n, LANES], 1.0, DType::F32, B::device(s))?)?,
        ];
        for k in 1..=5 {
            channels.push(lanes(&back, &is::<B>(&kept, k as f64)?)?);
        }
        Ok(channels)
    }
}
