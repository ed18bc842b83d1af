//! Seaquest (`minatar/environments/seaquest.py`): a submarine shoots fish and enemy subs (+1
//! each), picks up divers, and must surface with a diver before its oxygen runs out;
//! surfacing with six divers pays for the oxygen left. Each surfacing speeds the enemies up.
//!
//! The reference keeps its bullets, enemies and divers in Python lists that it changes while
//! iterating over them in reverse, and removes elements with `list.remove` (the first
//! element *equal* to the one meant, which need not be that one). The order in which
//! elements are visited, which one goes, and what a removed enemy sub still does in the same
//! step (it may fire) all follow from that, so the lists here are kept and changed exactly
//! that way: [`ReverseCursor`] is CPython's reverse list iterator and [`remove_equal`] is
//! `list.remove`.

use super::state::{Reader, COUNTER_MAX};
use super::{Cells, Draws, DOWN, FIRE, LEFT, RIGHT, UP};

const MAX_OXYGEN: i64 = 200;
const INIT_SPAWN_SPEED: i64 = 20;
const DIVER_SPAWN_SPEED: i64 = 30;
const INIT_MOVE_INTERVAL: i64 = 5;
const SHOT_COOL_DOWN: i64 = 5;
const ENEMY_SHOT_INTERVAL: i64 = 10;
const DIVER_MOVE_INTERVAL: i64 = 5;

/// Channels of the observation.
pub(crate) const CHANNELS: usize = 10;
const SUB_FRONT: usize = 0;
const SUB_BACK: usize = 1;
const FRIENDLY_BULLET: usize = 2;
const TRAIL: usize = 3;
const ENEMY_BULLET: usize = 4;
const ENEMY_FISH: usize = 5;
const ENEMY_SUB: usize = 6;
const OXYGEN_GAUGE: usize = 7;
const DIVER_GAUGE: usize = 8;
const DIVER: usize = 9;

/// Every action differs.
pub(crate) const MINIMAL_ACTIONS: &[usize] = &[0, 1, 2, 3, 4, 5];

/// A bullet: `[x, y, moving right]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bullet {
    x: i64,
    y: i64,
    right: bool,
}

/// A fish or a diver: `[x, y, moving right, steps until it moves]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Swimmer {
    x: i64,
    y: i64,
    right: bool,
    timer: i64,
}

/// An enemy sub: `[x, y, moving right, steps until it moves, steps until it fires]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sub {
    x: i64,
    y: i64,
    right: bool,
    move_timer: i64,
    shot_timer: i64,
}

/// A step left or right.
fn dx(right: bool) -> i64 {
    if right {
        1
    } else {
        -1
    }
}

/// Python's `list.remove(x)`: removes the first element equal to `x` and returns where it
/// was (`None`, where Python raises, cannot happen here: the element meant is in the list).
fn remove_equal<T: PartialEq + Copy>(list: &mut Vec<T>, x: T) -> Option<usize> {
    let at = list.iter().position(|e| *e == x)?;
    list.remove(at);
    Some(at)
}

/// Where the element visited at `at` is after `list.remove(element)` took out the element at
/// `removed` (the first equal one): gone if that was it, one place down if it was an earlier
/// equal one.
fn after_removal(at: usize, removed: Option<usize>) -> Option<usize> {
    match removed {
        Some(r) if r == at => None,
        Some(r) if r < at => Some(at - 1),
        _ => Some(at),
    }
}

/// CPython's `reversed(list)`: from the last index down, re-reading the list's length each
/// time, and stopping for good once the index falls outside it.
struct ReverseCursor {
    next: isize,
}

impl ReverseCursor {
    fn new(len: usize) -> Self {
        ReverseCursor { next: len as isize - 1 }
    }

    fn next(&mut self, len: usize) -> Option<usize> {
        if self.next >= 0 && (self.next as usize) < len {
            self.next -= 1;
            Some((self.next + 1) as usize)
        } else {
            self.next = -1;
            None
        }
    }
}

/// The game's state, field for field the Python class's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Seaquest {
    oxygen: i64,
    diver_count: i64,
    sub_x: i64,
    sub_y: i64,
    /// Facing right.
    sub_or: bool,
    f_bullets: Vec<Bullet>,
    e_bullets: Vec<Bullet>,
    e_fish: Vec<Swimmer>,
    e_subs: Vec<Sub>,
    divers: Vec<Swimmer>,
    e_spawn_speed: i64,
    e_spawn_timer: i64,
    d_spawn_timer: i64,
    move_speed: i64,
    ramp_index: i64,
    shot_timer: i64,
    surface: bool,
    terminal: bool,
}

impl Seaquest {
    /// The start state (no random draw).
    pub(crate) fn new() -> Self {
        Seaquest {
            oxygen: MAX_OXYGEN,
            diver_count: 0,
            sub_x: 5,
            sub_y: 0,
            sub_or: false,
            f_bullets: vec![],
            e_bullets: vec![],
            e_fish: vec![],
            e_subs: vec![],
            divers: vec![],
            e_spawn_speed: INIT_SPAWN_SPEED,
            e_spawn_timer: INIT_SPAWN_SPEED,
            d_spawn_timer: DIVER_SPAWN_SPEED,
            move_speed: INIT_MOVE_INTERVAL,
            ramp_index: 0,
            shot_timer: 0,
            surface: true,
            terminal: false,
        }
    }

    /// `reset()`.
    pub(crate) fn reset(&mut self, _rng: &mut dyn Draws) {
        // The lists keep their allocations.
        let mut lists = (
            std::mem::take(&mut self.f_bullets),
            std::mem::take(&mut self.e_bullets),
            std::mem::take(&mut self.e_fish),
            std::mem::take(&mut self.e_subs),
            std::mem::take(&mut self.divers),
        );
        lists.0.clear();
        lists.1.clear();
        lists.2.clear();
        lists.3.clear();
        lists.4.clear();
        *self = Seaquest::new();
        (self.f_bullets, self.e_bullets, self.e_fish, self.e_subs, self.divers) = lists;
    }

    fn at_sub(&self, x: i64, y: i64) -> bool {
        x == self.sub_x && y == self.sub_y
    }

    /// `act(a)` with `a` one of the six actions.
    pub(crate) fn act(&mut self, a: usize, rng: &mut dyn Draws) -> (i64, bool) {
        let mut r = 0;
        if self.terminal {
            return (r, true);
        }
        if self.e_spawn_timer == 0 {
            self.spawn_enemy(rng);
            self.e_spawn_timer = self.e_spawn_speed;
        }
        if self.d_spawn_timer == 0 {
            self.spawn_diver(rng);
            self.d_spawn_timer = DIVER_SPAWN_SPEED;
        }
        if a == FIRE && self.shot_timer == 0 {
            self.f_bullets.push(Bullet {
                x: self.sub_x,
                y: self.sub_y,
                right: self.sub_or,
            });
            self.shot_timer = SHOT_COOL_DOWN;
        } else if a == LEFT {
            self.sub_x = (self.sub_x - 1).max(0);
            self.sub_or = false;
        } else if a == RIGHT {
            self.sub_x = (self.sub_x + 1).min(9);
            self.sub_or = true;
        } else if a == UP {
            self.sub_y = (self.sub_y - 1).max(0);
        } else if a == DOWN {
            self.sub_y = (self.sub_y + 1).min(8);
        }
        r += self.update_friendly_bullets();
        self.update_divers();
        r += self.update_enemy_subs();
        self.update_enemy_bullets();
        r += self.update_enemy_fish();

        if self.e_spawn_timer > 0 {
            self.e_spawn_timer -= 1;
        }
        if self.d_spawn_timer > 0 {
            self.d_spawn_timer -= 1;
        }
        if self.shot_timer > 0 {
            self.shot_timer -= 1;
        }
        if self.oxygen <= 0 {
            self.terminal = true;
        }
        if self.sub_y > 0 {
            self.oxygen -= 1;
            self.surface = false;
        } else if !self.surface {
            if self.diver_count == 0 {
                self.terminal = true;
            } else {
                r += self.surface();
            }
        }
        (r, self.terminal)
    }

    /// The friendly bullets move; one that hits a fish (looked for first) or a sub takes it
    /// out, +1.
    fn update_friendly_bullets(&mut self) -> i64 {
        let mut r = 0;
        let mut cursor = ReverseCursor::new(self.f_bullets.len());
        while let Some(i) = cursor.next(self.f_bullets.len()) {
            let bullet = &mut self.f_bullets[i];
            bullet.x += dx(bullet.right);
            let b = *bullet;
            if b.x < 0 || b.x > 9 {
                remove_equal(&mut self.f_bullets, b);
                continue;
            }
            // The first fish (or sub) on the bullet is also the first equal to itself, so
            // `list.remove` takes that one.
            if let Some(k) = self.e_fish.iter().position(|f| (f.x, f.y) == (b.x, b.y)) {
                self.e_fish.remove(k);
                remove_equal(&mut self.f_bullets, b);
                r += 1;
            } else if let Some(k) = self.e_subs.iter().position(|s| (s.x, s.y) == (b.x, b.y)) {
                self.e_subs.remove(k);
                remove_equal(&mut self.f_bullets, b);
                r += 1;
            }
        }
        r
    }

    /// Divers move every sixth step; the sub picks up one it is on (at most six aboard).
    fn update_divers(&mut self) {
        let mut cursor = ReverseCursor::new(self.divers.len());
        while let Some(i) = cursor.next(self.divers.len()) {
            let d = self.divers[i];
            if self.at_sub(d.x, d.y) && self.diver_count < 6 {
                remove_equal(&mut self.divers, d);
                self.diver_count += 1;
            } else if d.timer == 0 {
                let moved = Swimmer {
                    x: d.x + dx(d.right),
                    timer: DIVER_MOVE_INTERVAL,
                    ..d
                };
                self.divers[i] = moved;
                if moved.x < 0 || moved.x > 9 {
                    remove_equal(&mut self.divers, moved);
                } else if self.at_sub(moved.x, moved.y) && self.diver_count < 6 {
                    remove_equal(&mut self.divers, moved);
                    self.diver_count += 1;
                }
            } else {
                self.divers[i].timer -= 1;
            }
        }
    }

    /// Enemy subs move and fire; one on the sub ends the episode, one that meets a friendly
    /// bullet is taken out (+1). A sub taken out still fires this step, as in the reference.
    fn update_enemy_subs(&mut self) -> i64 {
        let mut r = 0;
        let mut cursor = ReverseCursor::new(self.e_subs.len());
        while let Some(i) = cursor.next(self.e_subs.len()) {
            // `sub` is the Python object; `at` is where it is in the list, if still there.
            let mut sub = self.e_subs[i];
            let mut at = Some(i);
            if self.at_sub(sub.x, sub.y) {
                self.terminal = true;
            }
            if sub.move_timer == 0 {
                sub.move_timer = self.move_speed;
                sub.x += dx(sub.right);
                self.e_subs[i] = sub;
                if sub.x < 0 || sub.x > 9 {
                    at = after_removal(i, remove_equal(&mut self.e_subs, sub));
                } else if self.at_sub(sub.x, sub.y) {
                    self.terminal = true;
                } else if let Some(k) = self.f_bullets.iter().position(|b| (b.x, b.y) == (sub.x, sub.y)) {
                    at = after_removal(i, remove_equal(&mut self.e_subs, sub));
                    self.f_bullets.remove(k);
                    r += 1;
                }
            } else {
                sub.move_timer -= 1;
            }
            if sub.shot_timer == 0 {
                sub.shot_timer = ENEMY_SHOT_INTERVAL;
                self.e_bullets.push(Bullet {
                    x: sub.x,
                    y: sub.y,
                    right: sub.right,
                });
            } else {
                sub.shot_timer -= 1;
            }
            if let Some(k) = at {
                self.e_subs[k] = sub;
            }
        }
        r
    }

    /// Enemy bullets move; one on the sub, before or after moving, ends the episode.
    fn update_enemy_bullets(&mut self) {
        let mut cursor = ReverseCursor::new(self.e_bullets.len());
        while let Some(i) = cursor.next(self.e_bullets.len()) {
            let mut b = self.e_bullets[i];
            if self.at_sub(b.x, b.y) {
                self.terminal = true;
            }
            b.x += dx(b.right);
            self.e_bullets[i] = b;
            if b.x < 0 || b.x > 9 {
                remove_equal(&mut self.e_bullets, b);
            } else if self.at_sub(b.x, b.y) {
                self.terminal = true;
            }
        }
    }

    /// Fish move; one on the sub ends the episode, one that meets a friendly bullet is taken
    /// out (+1).
    fn update_enemy_fish(&mut self) -> i64 {
        let mut r = 0;
        let mut cursor = ReverseCursor::new(self.e_fish.len());
        while let Some(i) = cursor.next(self.e_fish.len()) {
            let f = self.e_fish[i];
            if self.at_sub(f.x, f.y) {
                self.terminal = true;
            }
            if f.timer == 0 {
                let moved = Swimmer {
                    x: f.x + dx(f.right),
                    timer: self.move_speed,
                    ..f
                };
                self.e_fish[i] = moved;
                if moved.x < 0 || moved.x > 9 {
                    remove_equal(&mut self.e_fish, moved);
                } else if self.at_sub(moved.x, moved.y) {
                    self.terminal = true;
                } else if let Some(k) = self.f_bullets.iter().position(|b| (b.x, b.y) == (moved.x, moved.y)) {
                    remove_equal(&mut self.e_fish, moved);
                    self.f_bullets.remove(k);
                    r += 1;
                }
            } else {
                self.e_fish[i].timer -= 1;
            }
        }
        r
    }

    /// `_surface()`: full oxygen, one diver off (all six, paying for the oxygen left, when
    /// full: the count then becomes -1, as in the reference), and the next difficulty step.
    fn surface(&mut self) -> i64 {
        self.surface = true;
        let r = if self.diver_count == 6 {
            self.diver_count = 0;
            (self.oxygen * 10).div_euclid(MAX_OXYGEN)
        } else {
            0
        };
        self.oxygen = MAX_OXYGEN;
        self.diver_count -= 1;
        if self.e_spawn_speed > 1 || self.move_speed > 2 {
            if self.move_speed > 2 && self.ramp_index % 2 != 0 {
                self.move_speed -= 1;
            }
            if self.e_spawn_speed > 1 {
                self.e_spawn_speed -= 1;
            }
            self.ramp_index += 1;
        }
        r
    }

    /// `_spawn_enemy()`: side, kind and row are drawn first; nothing spawns in a row with an
    /// enemy going the other way.
    fn spawn_enemy(&mut self, rng: &mut dyn Draws) {
        let right = rng.rand() < 0.5;
        let is_sub = rng.rand() < 1.0 / 3.0;
        let x = if right { 0 } else { 9 };
        let y = rng.randint(1, 9);
        let clash = self.e_subs.iter().any(|z| z.y == y && z.right != right)
            || self.e_fish.iter().any(|z| z.y == y && z.right != right);
        if clash {
            return;
        }
        if is_sub {
            self.e_subs.push(Sub {
                x,
                y,
                right,
                move_timer: self.move_speed,
                shot_timer: ENEMY_SHOT_INTERVAL,
            });
        } else {
            self.e_fish.push(Swimmer {
                x,
                y,
                right,
                timer: self.move_speed,
            });
        }
    }

    /// `_spawn_diver()`.
    fn spawn_diver(&mut self, rng: &mut dyn Draws) {
        let right = rng.rand() < 0.5;
        let x = if right { 0 } else { 9 };
        let y = rng.randint(1, 9);
        self.divers.push(Swimmer {
            x,
            y,
            right,
            timer: DIVER_MOVE_INTERVAL,
        });
    }

    /// `state()`, into `cells` (zeroed).
    pub(crate) fn observe(&self, cells: &mut Cells) {
        cells.set(self.sub_y, self.sub_x, SUB_FRONT);
        let back = if self.sub_or { self.sub_x - 1 } else { self.sub_x + 1 };
        cells.set(self.sub_y, back, SUB_BACK);
        for x in 0..self.oxygen.max(0) * 10 / MAX_OXYGEN {
            cells.set(9, x, OXYGEN_GAUGE);
        }
        for x in (9 - self.diver_count).max(0)..9 {
            cells.set(9, x, DIVER_GAUGE);
        }
        for b in &self.f_bullets {
            cells.set(b.y, b.x, FRIENDLY_BULLET);
        }
        for b in &self.e_bullets {
            cells.set(b.y, b.x, ENEMY_BULLET);
        }
        let mut with_trail = |x: i64, y: i64, right: bool, channel: usize| {
            cells.set(y, x, channel);
            let back = x - dx(right);
            if (0..=9).contains(&back) {
                cells.set(y, back, TRAIL);
            }
        };
        for f in &self.e_fish {
            with_trail(f.x, f.y, f.right, ENEMY_FISH);
        }
        for s in &self.e_subs {
            with_trail(s.x, s.y, s.right, ENEMY_SUB);
        }
        for d in &self.divers {
            with_trail(d.x, d.y, d.right, DIVER);
        }
    }

    /// The state as numbers: oxygen, divers aboard, sub x, y and facing, the spawn timers and
    /// speeds, ramp index, shot timer, surface and terminal flags; then each list (friendly
    /// bullets, enemy bullets, fish, enemy subs, divers) as its length followed by its
    /// elements' fields in the reference's order.
    pub(crate) fn encode(&self, out: &mut Vec<f64>) {
        out.extend(
            [
                self.oxygen,
                self.diver_count,
                self.sub_x,
                self.sub_y,
                i64::from(self.sub_or),
                self.e_spawn_speed,
                self.e_spawn_timer,
                self.d_spawn_timer,
                self.move_speed,
                self.ramp_index,
                self.shot_timer,
                i64::from(self.surface),
                i64::from(self.terminal),
            ]
            .map(|v| v as f64),
        );
        let flag = |b: bool| f64::from(u8::from(b));
        for list in [&self.f_bullets, &self.e_bullets] {
            out.push(list.len() as f64);
            for b in list {
                out.extend([b.x as f64, b.y as f64, flag(b.right)]);
            }
        }
        out.push(self.e_fish.len() as f64);
        for f in &self.e_fish {
            out.extend([f.x as f64, f.y as f64, flag(f.right), f.timer as f64]);
        }
        out.push(self.e_subs.len() as f64);
        for s in &self.e_subs {
            out.extend([
                s.x as f64,
                s.y as f64,
                flag(s.right),
                s.move_timer as f64,
                s.shot_timer as f64,
            ]);
        }
        out.push(self.divers.len() as f64);
        for d in &self.divers {
            out.extend([d.x as f64, d.y as f64, flag(d.right), d.timer as f64]);
        }
    }

    /// The state `encode` wrote, checked: every element on the board, and the sub's back on
    /// it too (the reference's picture would wrap around or fail otherwise).
    pub(crate) fn decode(r: &mut Reader) -> Result<Self, String> {
        let mut game = Seaquest {
            oxygen: r.int("oxygen", -1, MAX_OXYGEN)?,
            diver_count: r.int("diver_count", -COUNTER_MAX, 6)?,
            sub_x: r.int("sub_x", 0, 9)?,
            sub_y: r.int("sub_y", 0, 8)?,
            sub_or: r.flag("sub_or")?,
            e_spawn_speed: r.int("e_spawn_speed", 1, INIT_SPAWN_SPEED)?,
            e_spawn_timer: r.int("e_spawn_timer", 0, INIT_SPAWN_SPEED)?,
            d_spawn_timer: r.int("d_spawn_timer", 0, DIVER_SPAWN_SPEED)?,
            move_speed: r.int("move_speed", 2, INIT_MOVE_INTERVAL)?,
            ramp_index: r.int("ramp_index", 0, COUNTER_MAX)?,
            shot_timer: r.int("shot_timer", 0, SHOT_COOL_DOWN)?,
            surface: r.flag("surface")?,
            terminal: r.flag("terminal")?,
            ..Seaquest::new()
        };
        // The game leaves oxygen at -1 only as it ends; stepping on from there would take it
        // below what a state may hold.
        if game.oxygen < 0 && !game.terminal {
            return Err("oxygen is -1 in a state that is not terminal".into());
        }
        let back = if game.sub_or { game.sub_x - 1 } else { game.sub_x + 1 };
        if !(0..=9).contains(&back) {
            return Err(format!(
                "the sub at x {} facing {} has its back off the board",
                game.sub_x,
                if game.sub_or { "right" } else { "left" }
            ));
        }
        for (list, name) in [
            (&mut game.f_bullets, "friendly bullet"),
            (&mut game.e_bullets, "enemy bullet"),
        ] {
            let n = r.count(format_args!("{name}s"), 3)?;
            for i in 0..n {
                list.push(Bullet {
                    x: r.int(format_args!("{name} {i} x"), 0, 9)?,
                    y: r.int(format_args!("{name} {i} y"), 0, 9)?,
                    right: r.flag(format_args!("{name} {i} right"))?,
                });
            }
        }
        game.e_fish = read_swimmers(r, "fish", "fish", INIT_MOVE_INTERVAL)?;
        let n = r.count("enemy subs", 5)?;
        for i in 0..n {
            game.e_subs.push(Sub {
                x: r.int(format_args!("enemy sub {i} x"), 0, 9)?,
                y: r.int(format_args!("enemy sub {i} y"), 0, 9)?,
                right: r.flag(format_args!("enemy sub {i} right"))?,
                move_timer: r.int(format_args!("enemy sub {i} move timer"), 0, INIT_MOVE_INTERVAL)?,
                shot_timer: r.int(format_args!("enemy sub {i} shot timer"), 0, ENEMY_SHOT_INTERVAL)?,
            });
        }
        game.divers = read_swimmers(r, "divers", "diver", DIVER_MOVE_INTERVAL)?;
        Ok(game)
    }
}

/// A list of fish or divers as `encode` wrote it, each checked (`timer_max` bounds their
/// move timers).
fn read_swimmers(r: &mut Reader, plural: &str, one: &str, timer_max: i64) -> Result<Vec<Swimmer>, String> {
    let n = r.count(plural, 4)?;
    (0..n)
        .map(|i| {
            Ok(Swimmer {
                x: r.int(format_args!("{one} {i} x"), 0, 9)?,
                y: r.int(format_args!("{one} {i} y"), 0, 9)?,
                right: r.flag(format_args!("{one} {i} right"))?,
                timer: r.int(format_args!("{one} {i} timer"), 0, timer_max)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reverse_cursor_stops_as_cpythons_reversed_does() {
        // reversed([a, b, c]) visits 2, 1, 0.
        let mut c = ReverseCursor::new(3);
        assert_eq!(
            [c.next(3), c.next(3), c.next(3), c.next(3)],
            [Some(2), Some(1), Some(0), None]
        );
        // Removing two elements while at index 2 leaves index 1 outside a list of one: it stops
        // and stays stopped.
        let mut c = ReverseCursor::new(3);
        assert_eq!(c.next(3), Some(2));
        assert_eq!(c.next(1), None);
        assert_eq!(c.next(3), None);
    }

    #[test]
    fn list_remove_takes_the_first_equal_element() {
        let mut v = vec![1, 2, 1, 3];
        assert_eq!(remove_equal(&mut v, 1), Some(0));
        assert_eq!(v, [2, 1, 3]);
        // The element visited at 2 was equal to the one removed at 0: it is now at 1.
        assert_eq!(after_removal(2, Some(0)), Some(1));
        assert_eq!(after_removal(2, Some(2)), None);
    }
}
