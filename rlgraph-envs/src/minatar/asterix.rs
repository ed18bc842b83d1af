//! Asterix (`minatar/environments/asterix.py`): the player moves in four directions; enemies
//! and gold enter from the sides in the eight middle rows; gold gives +1, an enemy ends the
//! episode. Spawning and movement speed up every 102 steps (difficulty ramping, always on here
//! as in the reference's default).

use super::state::Reader;
use super::{Cells, Draws, DOWN, LEFT, RIGHT, UP};

const RAMP_INTERVAL: i64 = 100;
const INIT_SPAWN_SPEED: i64 = 10;
const INIT_MOVE_INTERVAL: i64 = 5;

/// Channels of the observation.
pub(crate) const CHANNELS: usize = 4;
const PLAYER: usize = 0;
const ENEMY: usize = 1;
const TRAIL: usize = 2;
const GOLD: usize = 3;

/// Actions that differ: no-op, left, up, right, down.
pub(crate) const MINIMAL_ACTIONS: &[usize] = &[0, 1, 2, 3, 4];

/// An enemy or a piece of gold in its row (the row is its slot plus one).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entity {
    x: i64,
    /// Moving right (it entered on the left).
    right: bool,
    gold: bool,
}

/// The game's state, field for field the Python class's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Asterix {
    player_x: i64,
    player_y: i64,
    entities: [Option<Entity>; 8],
    spawn_speed: i64,
    spawn_timer: i64,
    move_speed: i64,
    move_timer: i64,
    ramp_timer: i64,
    ramp_index: i64,
    terminal: bool,
}

impl Asterix {
    /// The start state (no random draw).
    pub(crate) fn new() -> Self {
        Asterix {
            player_x: 5,
            player_y: 5,
            entities: [None; 8],
            spawn_speed: INIT_SPAWN_SPEED,
            spawn_timer: INIT_SPAWN_SPEED,
            move_speed: INIT_MOVE_INTERVAL,
            move_timer: INIT_MOVE_INTERVAL,
            ramp_timer: RAMP_INTERVAL,
            ramp_index: 0,
            terminal: false,
        }
    }

    /// `reset()`.
    pub(crate) fn reset(&mut self, _rng: &mut dyn Draws) {
        *self = Asterix::new();
    }

    /// Whether the entity of `slot` is on the player: gold is taken (+1), an enemy ends the
    /// episode.
    fn touch(&mut self, slot: usize, reward: &mut i64) {
        if let Some(e) = self.entities[slot] {
            if e.x == self.player_x && slot as i64 + 1 == self.player_y {
                if e.gold {
                    self.entities[slot] = None;
                    *reward += 1;
                } else {
                    self.terminal = true;
                }
            }
        }
    }

    /// `act(a)` with `a` one of the six actions.
    pub(crate) fn act(&mut self, a: usize, rng: &mut dyn Draws) -> (i64, bool) {
        let mut r = 0;
        if self.terminal {
            return (r, true);
        }
        if self.spawn_timer == 0 {
            self.spawn_entity(rng);
            self.spawn_timer = self.spawn_speed;
        }
        match a {
            LEFT => self.player_x = (self.player_x - 1).max(0),
            RIGHT => self.player_x = (self.player_x + 1).min(9),
            UP => self.player_y = (self.player_y - 1).max(1),
            DOWN => self.player_y = (self.player_y + 1).min(8),
            _ => {}
        }
        for slot in 0..self.entities.len() {
            self.touch(slot, &mut r);
        }
        if self.move_timer == 0 {
            self.move_timer = self.move_speed;
            for slot in 0..self.entities.len() {
                let left_board = match &mut self.entities[slot] {
                    Some(e) => {
                        e.x += if e.right { 1 } else { -1 };
                        e.x < 0 || e.x > 9
                    }
                    None => continue,
                };
                if left_board {
                    self.entities[slot] = None;
                }
                // An entity that left the board cannot be on the player.
                self.touch(slot, &mut r);
            }
        }
        self.spawn_timer -= 1;
        self.move_timer -= 1;
        if self.spawn_speed > 1 || self.move_speed > 1 {
            if self.ramp_timer >= 0 {
                self.ramp_timer -= 1;
            } else {
                if self.move_speed > 1 && self.ramp_index % 2 != 0 {
                    self.move_speed -= 1;
                }
                if self.spawn_speed > 1 {
                    self.spawn_speed -= 1;
                }
                self.ramp_index += 1;
                self.ramp_timer = RAMP_INTERVAL;
            }
        }
        (r, self.terminal)
    }

    /// `_spawn_entity()`: side and kind are drawn before the free rows are looked at, so
    /// the draws happen even when every row is taken.
    fn spawn_entity(&mut self, rng: &mut dyn Draws) {
        let right = rng.rand() < 0.5;
        let gold = rng.rand() < 1.0 / 3.0;
        let x = if right { 0 } else { 9 };
        let mut free = [0usize; 8];
        let mut n = 0;
        for (slot, e) in self.entities.iter().enumerate() {
            if e.is_none() {
                free[n] = slot;
                n += 1;
            }
        }
        if n == 0 {
            return;
        }
        let slot = free[rng.randint(0, n as i64) as usize];
        self.entities[slot] = Some(Entity { x, right, gold });
    }

    /// `state()`, into `cells` (zeroed).
    pub(crate) fn observe(&self, cells: &mut Cells) {
        cells.set(self.player_y, self.player_x, PLAYER);
        for (slot, e) in self.entities.iter().enumerate() {
            if let Some(e) = e {
                let y = slot as i64 + 1;
                cells.set(y, e.x, if e.gold { GOLD } else { ENEMY });
                let back = if e.right { e.x - 1 } else { e.x + 1 };
                if (0..=9).contains(&back) {
                    cells.set(y, back, TRAIL);
                }
            }
        }
    }

    /// The state as numbers: player x and y, then per row whether it holds an entity, its
    /// x, whether it moves right and whether it is gold, then the timers and the flag.
    pub(crate) fn encode(&self, out: &mut Vec<f64>) {
        out.extend([self.player_x, self.player_y].map(|v| v as f64));
        for e in &self.entities {
            match e {
                Some(e) => out.extend([
                    1.0,
                    e.x as f64,
                    f64::from(u8::from(e.right)),
                    f64::from(u8::from(e.gold)),
                ]),
                None => out.extend([0.0; 4]),
            }
        }
        out.extend(
            [
                self.spawn_speed,
                self.spawn_timer,
                self.move_speed,
                self.move_timer,
                self.ramp_timer,
                self.ramp_index,
                i64::from(self.terminal),
            ]
            .map(|v| v as f64),
        );
    }

    /// The state `encode` wrote, checked.
    pub(crate) fn decode(r: &mut Reader) -> Result<Self, String> {
        let player_x = r.int("player_x", 0, 9)?;
        let player_y = r.int("player_y", 1, 8)?;
        let mut entities = [None; 8];
        for (slot, e) in entities.iter_mut().enumerate() {
            let present = r.flag(format_args!("entity {slot} present"))?;
            let x = r.int(format_args!("entity {slot} x"), 0, 9)?;
            let right = r.flag(format_args!("entity {slot} right"))?;
            let gold = r.flag(format_args!("entity {slot} gold"))?;
            if present {
                *e = Some(Entity { x, right, gold });
            }
        }
        Ok(Asterix {
            player_x,
            player_y,
            entities,
            spawn_speed: r.int("spawn_speed", 1, INIT_SPAWN_SPEED)?,
            spawn_timer: r.int("spawn_timer", 0, INIT_SPAWN_SPEED)?,
            move_speed: r.int("move_speed", 1, INIT_MOVE_INTERVAL)?,
            move_timer: r.int("move_timer", 0, INIT_MOVE_INTERVAL)?,
            ramp_timer: r.int("ramp_timer", -1, RAMP_INTERVAL)?,
            ramp_index: r.int("ramp_index", 0, super::state::COUNTER_MAX)?,
            terminal: r.flag("terminal")?,
        })
    }
}
