//! MinAtar's Seaquest as tensor ops: the native game's `act` (`rlgraph-envs`,
//! `minatar/seaquest.rs`) with its five lists held in fixed slots and every branch a mask.
//!
//! The game's fields are the native `encode`'s 13 values (oxygen, divers aboard, sub x, y
//! and facing, enemy spawn speed and timer, diver spawn timer, move speed, ramp index, shot
//! timer, surface and terminal flags), then each list (friendly bullets, enemy bullets, fish,
//! enemy subs, divers) as slots, value by value: every slot's alive flag, then every slot's
//! x, y and heading (1 right), then the fish's and divers' move timers, the subs' move and
//! shot timers. The alive slots come first, in the native list's order (a step removes by
//! clearing flags and closes the gaps at its end; new elements go after the last), and a
//! free slot holds zeros. [`fields_of_native`] and [`native_of_fields`] turn the native state
//! into such fields and back.
//!
//! The native game removes with `list.remove` (the first equal element) while iterating in
//! reverse; here the element meant goes. The two agree: an enemy is taken out on a bullet
//! only where no other enemy is (the bullets' pass already took out any enemy on a bullet),
//! an element leaving the board equals none still on it, and two divers in one row are 30
//! steps (five moves) apart.
//!
//! A step's draws are the native order's: an enemy spawn takes `u_1` (the side: below 0.5
//! enters on the left, heading right), `u_2` (a sub below 1/3) and `u_3` (the row,
//! `1 + floor(u_3 * 8)` in f32); a diver spawn takes `u_4` (the side) and `u_5` (the row),
//! the first two words of the counter's domain 2. The game's start draws nothing.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::{Backend, CoreError, DType, Device, HostTensor, Result};
use rlgraph_envs::minatar::MinAtar;
use rlgraph_envs::Env;

use super::{cell, channel, f32_of, fixed_map, is, moved, not, pick, Game, NativeDraws};
use crate::batched::column;

// Columns of the game's fields before the lists, in the native game's `encode` order.
const OXYGEN: usize = 0;
const DIVER_COUNT: usize = 1;
const SUB_X: usize = 2;
const SUB_Y: usize = 3;
const SUB_OR: usize = 4;
const E_SPAWN_SPEED: usize = 5;
const E_SPAWN_TIMER: usize = 6;
const D_SPAWN_TIMER: usize = 7;
const MOVE_SPEED: usize = 8;
const RAMP_INDEX: usize = 9;
const SHOT_TIMER: usize = 10;
const SURFACE: usize = 11;
const TERMINAL: usize = 12;
const LISTS: usize = 13;

/// A list's slots among the fields: where they start, how many, and the values of each
/// (the alive flag, then the native element's).
#[derive(Clone, Copy)]
struct Slots {
    name: &'static str,
    at: usize,
    slots: usize,
    width: usize,
}

impl Slots {
    const fn end(self) -> usize {
        self.at + self.slots * self.width
    }
}

// Slot counts, each the most a game reached from its start can hold at a step's end:
// - Friendly bullets: the sub fires every 5 steps at most and a bullet leaves the board
//   within 9 steps, so two fly at once.
// - Divers: one spawns every 30 steps and leaves within 59 (ten moves, one per 6 steps), so
//   two swim at once.
// - Fish and enemy subs: one enemy spawns per step at most. Once the move speed is 2 (from
//   the sixth surfacing on) a new enemy moves every 3 steps and is gone after 29; the older
//   ones (spawned at a move speed up to 5, gone within 59 steps) came at least 15 steps
//   apart (the spawn speed was 15 or more), so at most 4 of them remain: 33 in all.
// - Enemy bullets: a sub fires first 10 steps after its spawn, then every 11, and a bullet
//   leaves within 9 steps, so each live bullet is a different sub's, fired in the last 9
//   steps by a sub spawned 10 to 36 steps ago at move speed 2 (27 steps) or an older one
//   (at most 4): 31.
const ENEMIES: usize = 33;
const F_BULLETS: Slots = Slots {
    name: "friendly bullets",
    at: LISTS,
    slots: 2,
    width: 4,
};
const E_BULLETS: Slots = Slots {
    name: "enemy bullets",
    at: F_BULLETS.end(),
    slots: ENEMIES,
    width: 4,
};
const FISH: Slots = Slots {
    name: "fish",
    at: E_BULLETS.end(),
    slots: ENEMIES,
    width: 5,
};
const SUBS: Slots = Slots {
    name: "enemy subs",
    at: FISH.end(),
    slots: ENEMIES,
    width: 6,
};
const DIVERS: Slots = Slots {
    name: "divers",
    at: SUBS.end(),
    slots: 2,
    width: 5,
};
const FIELDS: usize = DIVERS.end();
/// The lists in the native `encode` order.
const ORDER: [Slots; 5] = [F_BULLETS, E_BULLETS, FISH, SUBS, DIVERS];

// An element's values, in its slots' order.
const ALIVE: usize = 0;
const X: usize = 1;
const Y: usize = 2;
const RIGHT: usize = 3;
const TIMER: usize = 4;
const SHOT: usize = 5;

const MAX_OXYGEN: f64 = 200.0;
const DIVER_SPAWN_SPEED: f64 = 30.0;
const SHOT_COOL_DOWN: f64 = 5.0;
const ENEMY_SHOT_INTERVAL: f64 = 10.0;
const DIVER_MOVE_INTERVAL: f64 = 5.0;

// The package's actions.
const LEFT: f64 = 1.0;
const UP: f64 = 2.0;
const RIGHT_ACTION: f64 = 3.0;
const DOWN: f64 = 4.0;
const FIRE: f64 = 5.0;

/// A native Seaquest state's game values (what `Env::state` gives after the tag and the
/// sticky action) as the fields of a row; fails where a list outgrows its slots or the
/// values do not make a state.
pub(crate) fn fields_of_native(native: &[f64]) -> std::result::Result<Vec<f64>, String> {
    let mut out = native
        .get(..LISTS)
        .ok_or_else(|| format!("a Seaquest state has at least {LISTS} values, not {}", native.len()))?
        .to_vec();
    let mut at = LISTS;
    for list in ORDER {
        let count = *native
            .get(at)
            .ok_or_else(|| format!("the state ends before the number of {}", list.name))?;
        if count.fract() != 0.0 || !(0.0..=list.slots as f64).contains(&count) {
            return Err(format!(
                "{count} {} do not fit the tensor game's {} slots",
                list.name, list.slots
            ));
        }
        let (count, each) = (count as usize, list.width - 1);
        let values = native
            .get(at + 1..at + 1 + count * each)
            .ok_or_else(|| format!("the state ends inside its {}", list.name))?;
        let mut slots = vec![0.0; list.slots * list.width];
        for e in 0..count {
            slots[ALIVE * list.slots + e] = 1.0;
            for v in 1..list.width {
                slots[v * list.slots + e] = values[e * each + v - 1];
            }
        }
        out.extend(slots);
        at += 1 + count * each;
    }
    if at != native.len() {
        return Err(format!("the state has {} values after its divers", native.len() - at));
    }
    Ok(out)
}

/// A row's game fields as the native state's game values (the inverse of
/// [`fields_of_native`]); fails where the fields are not such a row's.
pub(crate) fn native_of_fields(fields: &[f64]) -> std::result::Result<Vec<f64>, String> {
    if fields.len() != FIELDS {
        return Err(format!("a Seaquest row has {FIELDS} fields, not {}", fields.len()));
    }
    let mut out = fields[..LISTS].to_vec();
    for list in ORDER {
        let alive = &fields[list.at..list.at + list.slots];
        let count = alive.iter().take_while(|&&a| a == 1.0).count();
        if alive[count..].iter().any(|&a| a != 0.0) {
            return Err(format!(
                "the {} slots' alive flags {alive:?} are not ones then zeros",
                list.name
            ));
        }
        out.push(count as f64);
        for e in 0..count {
            out.extend((1..list.width).map(|v| fields[list.at + v * list.slots + e]));
        }
    }
    Ok(out)
}

/// Seaquest's rules over `[n, 526]` fields (see the module docs).
pub(crate) struct Seaquest<B: Backend> {
    start: B::Tensor,
    start_host: Vec<f64>,
    /// Each slot's place, F32 `[1, 33]`.
    places: B::Tensor,
    /// `before[i][j] = 1` for `i < j`, F32 `[k, k]` for k of 2 and 33: a row times it counts,
    /// at each slot, the ones before it.
    before_two: B::Tensor,
    before: B::Tensor,
    /// `after[i][j] = 1` for `i > j`, F32 `[33, 33]`: the ones after each slot.
    after: B::Tensor,
    /// Each board cell's x, F32 `[1, 100]`, and the bottom row, 0/1 `[1, 100]`.
    cell_x: B::Tensor,
    bottom: B::Tensor,
    n: usize,
}

/// `[k, k]` with 1 where `keep(i, j)`.
fn triangle<B: Backend>(k: usize, device: Device, keep: impl Fn(usize, usize) -> bool) -> Result<B::Tensor> {
    let cells = (0..k * k).map(|c| f32::from(u8::from(keep(c / k, c % k)))).collect();
    B::from_host(&HostTensor::f32([k, k], cells)?, device)
}

impl<B: Backend> Seaquest<B> {
    /// The rules for `n` copies on `device`.
    pub(crate) fn new(n: usize, device: Device) -> Result<Self> {
        let at = "tensor env MinAtar/Seaquest";
        let native = MinAtar::new("MinAtar/Seaquest-v1", 0).map_err(|e| CoreError::Config {
            at: at.into(),
            reason: e.to_string(),
        })?;
        let start_host = native
            .state()
            .map(|s| s[2..].to_vec())
            .ok_or_else(|| "the native game gives no state".to_string())
            .and_then(|s| fields_of_native(&s))
            .map_err(|reason| CoreError::Config { at: at.into(), reason })?;
        let start: Vec<f32> = start_host.iter().map(|&v| v as f32).collect();
        let places = (0..ENEMIES).map(|i| i as f32).collect();
        Ok(Seaquest {
            start: B::from_host(&HostTensor::f32([1, FIELDS], start)?, device)?,
            start_host,
            places: B::from_host(&HostTensor::f32([1, ENEMIES], places)?, device)?,
            before_two: triangle::<B>(2, device, |i, j| i < j)?,
            before: triangle::<B>(ENEMIES, device, |i, j| i < j)?,
            after: triangle::<B>(ENEMIES, device, |i, j| i > j)?,
            cell_x: B::from_host(
                &HostTensor::f32([1, 100], (0..100).map(|i| (i % 10) as f32).collect())?,
                device,
            )?,
            bottom: fixed_map::<B>(device, |y, _| y == 9)?,
            n,
        })
    }

    /// A list's values, each `[n, slots]`.
    fn list(&self, s: &B::Tensor, list: Slots) -> Result<Vec<B::Tensor>> {
        (0..list.width)
            .map(|v| B::narrow(s, 1, list.at + v * list.slots, list.slots))
            .collect()
    }

    /// `list` with its alive elements moved to the front in order and the rest zeroed.
    fn compact(&self, list: &[B::Tensor], before: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let alive = &list[ALIVE];
        let k = B::shape(alive)[1];
        let device = B::device(alive);
        let rank = B::matmul(alive, before)?;
        // The dead go to a spare last column.
        let to = B::cast(
            &pick::<B>(alive, &rank, &B::scalar(k as f64, DType::F32, device)?)?,
            DType::I64,
        )?;
        let empty = B::full(&[self.n, k + 1], 0.0, DType::F32, device)?;
        list.iter()
            .map(|v| B::narrow(&B::scatter_add(&empty, 1, &to, &B::mul(v, alive)?)?, 1, 0, k))
            .collect()
    }

    /// The 0/1 map `[n, 100]` of the cells at `y * 10 + x` where `on` (each `[n, k]`).
    fn spots(&self, x: &B::Tensor, y: &B::Tensor, on: &B::Tensor) -> Result<B::Tensor> {
        let index = B::cast(&B::add(&B::affine(y, 10.0, 0.0)?, x)?, DType::I64)?;
        let empty = B::full(&[self.n, 100], 0.0, DType::F32, B::device(x))?;
        // A copy of `on`: candle scatters only from contiguous values, and `on` may be a slice.
        let on = B::affine(on, 1.0, 0.0)?;
        B::clamp(&B::scatter_add(&empty, 1, &index, &on)?, 0.0, 1.0)
    }
}

/// `v` where `mask` (0/1 `[n, k]`) is 1, `t` elsewhere.
fn put<B: Backend>(t: &B::Tensor, mask: &B::Tensor, v: &B::Tensor) -> Result<B::Tensor> {
    pick::<B>(mask, &B::broadcast_to(v, &B::shape(t))?, t)
}

/// 0/1 where `xs` and `ys` are at `x` and `y` (`[n, 1]` each).
fn on_cell<B: Backend>(xs: &B::Tensor, ys: &B::Tensor, x: &B::Tensor, y: &B::Tensor) -> Result<B::Tensor> {
    B::mul(&is::<B>(&B::sub(xs, x)?, 0.0)?, &is::<B>(&B::sub(ys, y)?, 0.0)?)
}

/// 0/1 where `x` is off the board's columns.
fn off_board<B: Backend>(x: &B::Tensor) -> Result<B::Tensor> {
    let device = B::device(x);
    B::maximum(
        &f32_of::<B>(&B::lt(x, &B::scalar(0.0, DType::F32, device)?)?)?,
        &f32_of::<B>(&B::gt(x, &B::scalar(9.0, DType::F32, device)?)?)?,
    )
}

/// A step along `right` (0/1): +1 or -1.
fn dx<B: Backend>(right: &B::Tensor) -> Result<B::Tensor> {
    B::affine(right, 2.0, -1.0)
}

/// 0/1 `[n, 1]`: whether any of `t` (0/1 `[n, k]`) is 1.
fn any<B: Backend>(t: &B::Tensor) -> Result<B::Tensor> {
    B::clamp(&B::sum(t, &[1], true)?, 0.0, 1.0)
}

impl<B: Backend> Game<B> for Seaquest<B> {
    fn fields(&self) -> usize {
        FIELDS
    }

    fn terminal(&self) -> usize {
        TERMINAL
    }

    fn extra_words(&self) -> usize {
        1
    }

    /// The enemy spawn (on its timer, field 6) draws the side, the kind and the row from
    /// `u[1..4]`, then the diver spawn (on field 7) the side and the row from `u[4..6]`; the
    /// reset draws nothing.
    fn native_draws(&self) -> Option<NativeDraws> {
        Some(NativeDraws {
            step: |u, fields| {
                let mut given = vec![];
                if fields[6] == 0.0 {
                    given.extend(&u[1..4]);
                }
                if fields[7] == 0.0 {
                    given.extend(&u[4..6]);
                }
                given
            },
            reset: |_| vec![],
        })
    }

    fn start(&self, _draws: &[B::Tensor]) -> Result<B::Tensor> {
        B::broadcast_to(&self.start, &[self.n, FIELDS])
    }

    fn start_host(&self, _rng: &mut ChaCha8Rng) -> Vec<f64> {
        self.start_host.clone()
    }

    fn act(&self, s: &B::Tensor, played: &B::Tensor, draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let col = |i| column::<B>(s, i);
        let device = B::device(s);
        let scalar = |v: f64| B::scalar(v, DType::F32, device);
        let mul = |a: &B::Tensor, b: &B::Tensor| B::mul(a, b);
        let (mut oxygen, mut divers_aboard) = (col(OXYGEN)?, col(DIVER_COUNT)?);
        let (mut sub_x, mut sub_y, mut sub_or) = (col(SUB_X)?, col(SUB_Y)?, col(SUB_OR)?);
        let (mut e_speed, mut e_timer, mut d_timer) = (col(E_SPAWN_SPEED)?, col(E_SPAWN_TIMER)?, col(D_SPAWN_TIMER)?);
        let (mut move_speed, mut ramp, mut shot_timer) = (col(MOVE_SPEED)?, col(RAMP_INDEX)?, col(SHOT_TIMER)?);
        let surface = col(SURFACE)?;
        let mut terminal = col(TERMINAL)?;
        let mut f = self.list(s, F_BULLETS)?;
        let mut e = self.list(s, E_BULLETS)?;
        let mut fish = self.list(s, FISH)?;
        let mut subs = self.list(s, SUBS)?;
        let mut divers = self.list(s, DIVERS)?;
        // Appends `values` (each `[n, 1]`) to `list` where `when`: the lists are compact at a
        // step's start, so the first free slot is the count.
        let append = |list: &mut Vec<B::Tensor>, when: &B::Tensor, values: &[&B::Tensor]| -> Result<()> {
            let k = B::shape(&list[ALIVE])[1];
            let count = B::sum(&list[ALIVE], &[1], true)?;
            let at = mul(
                &is::<B>(&B::sub(&B::narrow(&self.places, 1, 0, k)?, &count)?, 0.0)?,
                when,
            )?;
            list[ALIVE] = B::add(&list[ALIVE], &at)?;
            for (v, value) in values.iter().enumerate() {
                list[v + 1] = put::<B>(&list[v + 1], &at, value)?;
            }
            Ok(())
        };

        // An enemy spawns on its timer unless its row holds one heading the other way.
        let spawning = is::<B>(&e_timer, 0.0)?;
        let right = f32_of::<B>(&B::lt(&draws[1], &scalar(0.5)?)?)?;
        // 1/3 rounds up in f32, but no 24-bit uniform lies between the two.
        let is_sub = f32_of::<B>(&B::lt(&draws[2], &scalar(1.0 / 3.0)?)?)?;
        let y = B::affine(&B::floor(&B::affine(&draws[3], 8.0, 0.0)?)?, 1.0, 1.0)?;
        let x = B::affine(&right, -9.0, 9.0)?;
        let clash = |list: &[B::Tensor]| -> Result<B::Tensor> {
            let row = is::<B>(&B::sub(&list[Y], &y)?, 0.0)?;
            let other_way = not::<B>(&is::<B>(&B::sub(&list[RIGHT], &right)?, 0.0)?)?;
            any::<B>(&mul(&mul(&list[ALIVE], &row)?, &other_way)?)
        };
        let free = not::<B>(&B::maximum(&clash(&subs)?, &clash(&fish)?)?)?;
        let go = mul(&spawning, &free)?;
        let shot_interval = scalar(ENEMY_SHOT_INTERVAL)?;
        append(
            &mut subs,
            &mul(&go, &is_sub)?,
            &[&x, &y, &right, &move_speed, &shot_interval],
        )?;
        append(
            &mut fish,
            &mul(&go, &not::<B>(&is_sub)?)?,
            &[&x, &y, &right, &move_speed],
        )?;
        e_timer = pick::<B>(&spawning, &e_speed, &e_timer)?;
        // A diver on its timer.
        let spawning = is::<B>(&d_timer, 0.0)?;
        let right = f32_of::<B>(&B::lt(&draws[4], &scalar(0.5)?)?)?;
        let y = B::affine(&B::floor(&B::affine(&draws[5], 8.0, 0.0)?)?, 1.0, 1.0)?;
        let x = B::affine(&right, -9.0, 9.0)?;
        append(&mut divers, &spawning, &[&x, &y, &right, &scalar(DIVER_MOVE_INTERVAL)?])?;
        d_timer = pick::<B>(&spawning, &scalar(DIVER_SPAWN_SPEED)?, &d_timer)?;

        // The sub fires (if cooled down) or moves.
        let fire = mul(&is::<B>(played, FIRE)?, &is::<B>(&shot_timer, 0.0)?)?;
        append(&mut f, &fire, &[&sub_x, &sub_y, &sub_or])?;
        shot_timer = pick::<B>(&fire, &scalar(SHOT_COOL_DOWN)?, &shot_timer)?;
        sub_x = moved::<B>(played, LEFT, &sub_x, -1.0, (0.0, 9.0))?;
        sub_x = moved::<B>(played, RIGHT_ACTION, &sub_x, 1.0, (0.0, 9.0))?;
        sub_or = pick::<B>(&is::<B>(played, LEFT)?, &scalar(0.0)?, &sub_or)?;
        sub_or = pick::<B>(&is::<B>(played, RIGHT_ACTION)?, &scalar(1.0)?, &sub_or)?;
        sub_y = moved::<B>(played, UP, &sub_y, -1.0, (0.0, 8.0))?;
        sub_y = moved::<B>(played, DOWN, &sub_y, 1.0, (0.0, 8.0))?;
        let at_sub = |x: &B::Tensor, y: &B::Tensor| on_cell::<B>(x, y, &sub_x, &sub_y);
        let mut reward = B::full(&[self.n, 1], 0.0, DType::F32, device)?;

        // Friendly bullets fly, the last first; one on an enemy takes out the first fish
        // there, else the first sub.
        f[X] = B::add(&f[X], &mul(&f[ALIVE], &dx::<B>(&f[RIGHT])?)?)?;
        let gone = mul(&f[ALIVE], &off_board::<B>(&f[X])?)?;
        f[ALIVE] = B::sub(&f[ALIVE], &gone)?;
        let mut bullets = Vec::with_capacity(F_BULLETS.slots);
        for j in (0..F_BULLETS.slots).rev() {
            let [alive, x, y] = [ALIVE, X, Y].map(|v| column::<B>(&f[v], j));
            let (alive, x, y) = (alive?, x?, y?);
            let mut hit = scalar(0.0)?;
            for list in [&mut fish, &mut subs] {
                let on = mul(&mul(&list[ALIVE], &not::<B>(&hit)?)?, &alive)?;
                let on = mul(&on, &on_cell::<B>(&list[X], &list[Y], &x, &y)?)?;
                let first = mul(&on, &is::<B>(&B::matmul(&on, &self.before)?, 0.0)?)?;
                list[ALIVE] = B::sub(&list[ALIVE], &first)?;
                hit = B::add(&hit, &any::<B>(&first)?)?;
            }
            reward = B::add(&reward, &hit)?;
            bullets.push(B::sub(&alive, &hit)?);
        }
        bullets.reverse();
        f[ALIVE] = B::concat(&bullets, 1)?;

        // Divers, the last first: one on the sub is picked up (six aboard at most), else it
        // moves on its timer and may leave the board or reach the sub.
        let mut kept = Vec::with_capacity(DIVERS.slots);
        let mut timers = Vec::with_capacity(DIVERS.slots);
        let mut xs = Vec::with_capacity(DIVERS.slots);
        for j in (0..DIVERS.slots).rev() {
            let [alive, x, y, right, timer] = [ALIVE, X, Y, RIGHT, TIMER].map(|v| column::<B>(&divers[v], j));
            let (alive, x, y, right, timer) = (alive?, x?, y?, right?, timer?);
            let room = f32_of::<B>(&B::lt(&divers_aboard, &scalar(6.0)?)?)?;
            let picked = mul(&mul(&alive, &at_sub(&x, &y)?)?, &room)?;
            let swims = mul(&alive, &not::<B>(&picked)?)?;
            let moving = mul(&swims, &is::<B>(&timer, 0.0)?)?;
            let x = B::add(&x, &mul(&moving, &dx::<B>(&right)?)?)?;
            let gone = mul(&moving, &off_board::<B>(&x)?)?;
            let reached = mul(&mul(&mul(&moving, &not::<B>(&gone)?)?, &at_sub(&x, &y)?)?, &room)?;
            let timer = pick::<B>(&moving, &scalar(DIVER_MOVE_INTERVAL)?, &B::sub(&timer, &swims)?)?;
            let aboard = B::add(&picked, &reached)?;
            divers_aboard = B::add(&divers_aboard, &aboard)?;
            kept.push(B::sub(&B::sub(&alive, &aboard)?, &gone)?);
            timers.push(timer);
            xs.push(x);
        }
        for (v, values) in [(ALIVE, kept), (TIMER, timers), (X, xs)] {
            divers[v] = B::concat(&values.into_iter().rev().collect::<Vec<_>>(), 1)?;
        }

        // Enemies (subs, then fish) on the sub end the episode, before or after they move; one
        // that moves onto a friendly bullet takes out the first bullet there, the last such
        // enemy first.
        // Gives the points and whether the episode ends.
        let step_enemies = |list: &mut Vec<B::Tensor>, f: &mut Vec<B::Tensor>| -> Result<(B::Tensor, B::Tensor)> {
            let alive = list[ALIVE].clone();
            let mut ends = mul(&alive, &at_sub(&list[X], &list[Y])?)?;
            let moving = mul(&alive, &is::<B>(&list[TIMER], 0.0)?)?;
            list[TIMER] = pick::<B>(
                &moving,
                &B::broadcast_to(&move_speed, &B::shape(&alive))?,
                &B::sub(&list[TIMER], &mul(&alive, &not::<B>(&moving)?)?)?,
            )?;
            list[X] = B::add(&list[X], &mul(&moving, &dx::<B>(&list[RIGHT])?)?)?;
            let gone = mul(&moving, &off_board::<B>(&list[X])?)?;
            let on_sub = mul(&mul(&moving, &not::<B>(&gone)?)?, &at_sub(&list[X], &list[Y])?)?;
            ends = B::maximum(&ends, &on_sub)?;
            let mut open = mul(&mul(&moving, &not::<B>(&gone)?)?, &not::<B>(&on_sub)?)?;
            let mut bullets = Vec::with_capacity(F_BULLETS.slots);
            let mut taken = scalar(0.0)?;
            for j in 0..F_BULLETS.slots {
                let [there, x, y] = [ALIVE, X, Y].map(|v| column::<B>(&f[v], j));
                let (there, x, y) = (there?, x?, y?);
                let meets = mul(&mul(&open, &there)?, &on_cell::<B>(&list[X], &list[Y], &x, &y)?)?;
                let last = mul(&meets, &is::<B>(&B::matmul(&meets, &self.after)?, 0.0)?)?;
                let hit = any::<B>(&last)?;
                open = B::sub(&open, &last)?;
                list[ALIVE] = B::sub(&list[ALIVE], &last)?;
                taken = B::add(&taken, &hit)?;
                bullets.push(B::sub(&there, &hit)?);
            }
            f[ALIVE] = B::concat(&bullets, 1)?;
            list[ALIVE] = B::sub(&list[ALIVE], &gone)?;
            Ok((taken, any::<B>(&ends)?))
        };
        let alive = subs[ALIVE].clone();
        let (taken, ends) = step_enemies(&mut subs, &mut f)?;
        reward = B::add(&reward, &taken)?;
        terminal = B::maximum(&terminal, &ends)?;
        // Every sub there at the pass's start fires on its clock, in the pass's order (the
        // last first), even one just taken out; a shot from off the board is gone within the
        // step, so it is left out.
        let firing = mul(&alive, &is::<B>(&subs[SHOT], 0.0)?)?;
        subs[SHOT] = pick::<B>(
            &firing,
            &shot_interval,
            &B::sub(&subs[SHOT], &mul(&alive, &not::<B>(&firing)?)?)?,
        )?;
        let shots = mul(&firing, &not::<B>(&off_board::<B>(&subs[X])?)?)?;
        let place = B::add(&B::matmul(&shots, &self.after)?, &B::sum(&e[ALIVE], &[1], true)?)?;
        let to = B::cast(
            &B::clamp(
                &pick::<B>(&shots, &place, &scalar(ENEMIES as f64)?)?,
                0.0,
                ENEMIES as f64,
            )?,
            DType::I64,
        )?;
        let empty = B::full(&[self.n, ENEMIES + 1], 0.0, DType::F32, device)?;
        for v in [ALIVE, X, Y, RIGHT] {
            let source = if v == ALIVE {
                shots.clone()
            } else {
                mul(&subs[v], &shots)?
            };
            let new = B::narrow(&B::scatter_add(&empty, 1, &to, &source)?, 1, 0, ENEMIES)?;
            e[v] = B::add(&e[v], &new)?;
        }

        // Enemy bullets on the sub, before or after they fly, end the episode.
        let before = mul(&e[ALIVE], &at_sub(&e[X], &e[Y])?)?;
        e[X] = B::add(&e[X], &mul(&e[ALIVE], &dx::<B>(&e[RIGHT])?)?)?;
        let gone = mul(&e[ALIVE], &off_board::<B>(&e[X])?)?;
        e[ALIVE] = B::sub(&e[ALIVE], &gone)?;
        let after = mul(&e[ALIVE], &at_sub(&e[X], &e[Y])?)?;
        terminal = B::maximum(&terminal, &any::<B>(&B::maximum(&before, &after)?)?)?;

        let (taken, ends) = step_enemies(&mut fish, &mut f)?;
        reward = B::add(&reward, &taken)?;
        terminal = B::maximum(&terminal, &ends)?;

        let count_down = |t: &B::Tensor| B::sub(t, &f32_of::<B>(&B::gt(t, &scalar(0.0)?)?)?);
        e_timer = count_down(&e_timer)?;
        d_timer = count_down(&d_timer)?;
        shot_timer = count_down(&shot_timer)?;
        // Out of oxygen ends the episode; below the surface it runs down, and coming up
        // without a diver ends the episode, with one refills it (see `surface` below).
        terminal = B::maximum(&terminal, &f32_of::<B>(&B::le(&oxygen, &scalar(0.0)?)?)?)?;
        let below = f32_of::<B>(&B::gt(&sub_y, &scalar(0.0)?)?)?;
        oxygen = B::sub(&oxygen, &below)?;
        let arriving = mul(&not::<B>(&below)?, &not::<B>(&surface)?)?;
        let none_aboard = is::<B>(&divers_aboard, 0.0)?;
        terminal = B::maximum(&terminal, &mul(&arriving, &none_aboard)?)?;
        let surfacing = mul(&arriving, &not::<B>(&none_aboard)?)?;
        // `_surface`: six aboard pay a point per 20 oxygen left and all leave (the count
        // ends at -1, as in the reference); any other surfacing drops one; the enemies speed up.
        let full = mul(&surfacing, &is::<B>(&divers_aboard, 6.0)?)?;
        reward = B::add(&reward, &mul(&full, &B::floor(&B::div(&oxygen, &scalar(20.0)?)?)?)?)?;
        divers_aboard = B::sub(&pick::<B>(&full, &scalar(0.0)?, &divers_aboard)?, &surfacing)?;
        oxygen = pick::<B>(&surfacing, &scalar(MAX_OXYGEN)?, &oxygen)?;
        let faster_spawns = f32_of::<B>(&B::gt(&e_speed, &scalar(1.0)?)?)?;
        let faster_moves = f32_of::<B>(&B::gt(&move_speed, &scalar(2.0)?)?)?;
        let ramping = mul(&surfacing, &B::maximum(&faster_spawns, &faster_moves)?)?;
        let odd = B::sub(&ramp, &B::affine(&B::floor(&B::affine(&ramp, 0.5, 0.0)?)?, 2.0, 0.0)?)?;
        move_speed = B::sub(&move_speed, &mul(&mul(&ramping, &faster_moves)?, &odd)?)?;
        e_speed = B::sub(&e_speed, &mul(&ramping, &faster_spawns)?)?;
        ramp = B::add(&ramp, &ramping)?;
        let surface = pick::<B>(&below, &scalar(0.0)?, &B::maximum(&surface, &surfacing)?)?;

        let mut columns = vec![
            oxygen,
            divers_aboard,
            sub_x,
            sub_y,
            sub_or,
            e_speed,
            e_timer,
            d_timer,
            move_speed,
            ramp,
            shot_timer,
            surface,
            terminal.clone(),
        ];
        for (list, before) in [
            (f, &self.before_two),
            (e, &self.before),
            (fish, &self.before),
            (subs, &self.before),
            (divers, &self.before_two),
        ] {
            columns.extend(self.compact(&list, before)?);
        }
        Ok((B::concat(&columns, 1)?, reward, terminal))
    }

    fn observe(&self, s: &B::Tensor) -> Result<Vec<B::Tensor>> {
        let col = |i| column::<B>(s, i);
        let scalar = |v: f64| B::scalar(v, DType::F32, B::device(s));
        let (x, y, facing) = (col(SUB_X)?, col(SUB_Y)?, col(SUB_OR)?);
        let [f, e, fish, subs, divers] = ORDER.map(|list| self.list(s, list));
        let (f, e, fish, subs, divers) = (f?, e?, fish?, subs?, divers?);
        let spots =
            |list: &[B::Tensor]| -> Result<B::Tensor> { channel::<B>(&self.spots(&list[X], &list[Y], &list[ALIVE])?) };
        // Fish, subs and divers leave a trail in the cell behind them, where that is on the board.
        let swimmers = |v: usize| B::concat(&[fish[v].clone(), subs[v].clone(), divers[v].clone()], 1);
        let behind = B::sub(&swimmers(X)?, &dx::<B>(&swimmers(RIGHT)?)?)?;
        let on = mul_all::<B>(&[&swimmers(ALIVE)?, &not::<B>(&off_board::<B>(&behind)?)?])?;
        let trail = self.spots(&B::clamp(&behind, 0.0, 9.0)?, &swimmers(Y)?, &on)?;
        // The gauges along the bottom row: a cell per 20 oxygen from the left, a cell per
        // diver aboard leftwards from column 8.
        let oxygen = B::floor(&B::div(&B::maximum(&col(OXYGEN)?, &scalar(0.0)?)?, &scalar(20.0)?)?)?;
        let oxygen = B::mul(&self.bottom, &f32_of::<B>(&B::lt(&self.cell_x, &oxygen)?)?)?;
        let first = B::affine(&col(DIVER_COUNT)?, -1.0, 9.0)?;
        let aboard = mul_all::<B>(&[
            &self.bottom,
            &f32_of::<B>(&B::ge(&self.cell_x, &first)?)?,
            &f32_of::<B>(&B::lt(&self.cell_x, &scalar(9.0)?)?)?,
        ])?;
        Ok(vec![
            cell::<B>(&y, &x)?,
            cell::<B>(&y, &B::sub(&x, &dx::<B>(&facing)?)?)?,
            spots(&f)?,
            channel::<B>(&trail)?,
            spots(&e)?,
            spots(&fish)?,
            spots(&subs)?,
            channel::<B>(&oxygen)?,
            channel::<B>(&aboard)?,
            spots(&divers)?,
        ])
    }
}

/// The product of 0/1 masks.
fn mul_all<B: Backend>(masks: &[&B::Tensor]) -> Result<B::Tensor> {
    masks[1..].iter().try_fold(masks[0].clone(), |a, m| B::mul(&a, m))
}
