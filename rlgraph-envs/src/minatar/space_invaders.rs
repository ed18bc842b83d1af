//! Space Invaders (`minatar/environments/space_invaders.py`): a cannon on the bottom row
//! shoots up at a block of aliens that sweeps sideways and steps down at the edges, and fire
//! back; +1 an alien; an alien or an alien's bullet on the cannon ends the episode. Fewer
//! aliens move faster, and each cleared wave comes back faster.

use super::state::{Reader, COUNTER_MAX};
use super::{Cells, Draws, FIRE, LEFT, RIGHT};

const SHOT_COOL_DOWN: i64 = 5;
const ENEMY_MOVE_INTERVAL: i64 = 12;
const ENEMY_SHOT_INTERVAL: i64 = 10;

/// Channels of the observation.
pub(crate) const CHANNELS: usize = 6;
const CANNON: usize = 0;
const ALIEN: usize = 1;
const ALIEN_LEFT: usize = 2;
const ALIEN_RIGHT: usize = 3;
const FRIENDLY_BULLET: usize = 4;
const ENEMY_BULLET: usize = 5;

/// Actions that differ: no-op, left, right, fire.
pub(crate) const MINIMAL_ACTIONS: &[usize] = &[0, 1, 3, 5];

/// A 10x10 map, `[y][x]`.
type Map = [[bool; 10]; 10];

/// NumPy's `np.roll(map, shift, axis=0)`: row `y` becomes row `y - shift`, wrapping.
fn roll_rows(map: &mut Map, shift: isize) {
    map.rotate_right(shift.rem_euclid(10) as usize);
}

/// NumPy's `np.roll(map, shift, axis=1)`: column `x` becomes column `x - shift`, wrapping.
fn roll_columns(map: &mut Map, shift: isize) {
    for row in map.iter_mut() {
        row.rotate_right(shift.rem_euclid(10) as usize);
    }
}

fn count(map: &Map) -> i64 {
    map.iter().flatten().filter(|&&b| b).count() as i64
}

/// The game's state, field for field the Python class's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SpaceInvaders {
    pos: i64,
    f_bullet_map: Map,
    e_bullet_map: Map,
    alien_map: Map,
    /// -1 left, 1 right.
    alien_dir: i64,
    enemy_move_interval: i64,
    alien_move_timer: i64,
    alien_shot_timer: i64,
    ramp_index: i64,
    shot_timer: i64,
    terminal: bool,
}

impl SpaceInvaders {
    /// The start state (no random draw).
    pub(crate) fn new() -> Self {
        let mut game = SpaceInvaders {
            pos: 5,
            f_bullet_map: [[false; 10]; 10],
            e_bullet_map: [[false; 10]; 10],
            alien_map: [[false; 10]; 10],
            alien_dir: -1,
            enemy_move_interval: ENEMY_MOVE_INTERVAL,
            alien_move_timer: ENEMY_MOVE_INTERVAL,
            alien_shot_timer: ENEMY_SHOT_INTERVAL,
            ramp_index: 0,
            shot_timer: 0,
            terminal: false,
        };
        game.fill_aliens();
        game
    }

    /// A new wave: rows 0 to 3, columns 2 to 7.
    fn fill_aliens(&mut self) {
        for row in &mut self.alien_map[0..4] {
            row[2..8].fill(true);
        }
    }

    /// `reset()`.
    pub(crate) fn reset(&mut self, _rng: &mut dyn Draws) {
        *self = SpaceInvaders::new();
    }

    /// `act(a)` with `a` one of the six actions.
    pub(crate) fn act(&mut self, a: usize, _rng: &mut dyn Draws) -> (i64, bool) {
        let mut r = 0;
        if self.terminal {
            return (r, true);
        }
        let pos = |s: &Self| s.pos as usize;
        if a == FIRE && self.shot_timer == 0 {
            self.f_bullet_map[9][pos(self)] = true;
            self.shot_timer = SHOT_COOL_DOWN;
        } else if a == LEFT {
            self.pos = (self.pos - 1).max(0);
        } else if a == RIGHT {
            self.pos = (self.pos + 1).min(9);
        }
        roll_rows(&mut self.f_bullet_map, -1);
        self.f_bullet_map[9] = [false; 10];
        roll_rows(&mut self.e_bullet_map, 1);
        self.e_bullet_map[0] = [false; 10];
        if self.e_bullet_map[9][pos(self)] {
            self.terminal = true;
        }
        if self.alien_map[9][pos(self)] {
            self.terminal = true;
        }
        if self.alien_move_timer == 0 {
            self.alien_move_timer = count(&self.alien_map).min(self.enemy_move_interval);
            let on_left = self.alien_map.iter().any(|row| row[0]);
            let on_right = self.alien_map.iter().any(|row| row[9]);
            if (on_left && self.alien_dir < 0) || (on_right && self.alien_dir > 0) {
                self.alien_dir = -self.alien_dir;
                if self.alien_map[9].contains(&true) {
                    self.terminal = true;
                }
                roll_rows(&mut self.alien_map, 1);
            } else {
                roll_columns(&mut self.alien_map, self.alien_dir as isize);
            }
            if self.alien_map[9][pos(self)] {
                self.terminal = true;
            }
        }
        if self.alien_shot_timer == 0 {
            self.alien_shot_timer = ENEMY_SHOT_INTERVAL;
            // The decoder refuses a state without aliens, and a step ends with a full wave
            // when none are left, so there is always one to fire.
            if let Some((y, x)) = self.nearest_alien() {
                self.e_bullet_map[y][x] = true;
            }
        }
        for (aliens, bullets) in self.alien_map.iter_mut().zip(self.f_bullet_map.iter_mut()) {
            for (alien, bullet) in aliens.iter_mut().zip(bullets.iter_mut()) {
                if *alien && *bullet {
                    r += 1;
                    *alien = false;
                    *bullet = false;
                }
            }
        }
        if self.shot_timer > 0 {
            self.shot_timer -= 1;
        }
        self.alien_move_timer -= 1;
        self.alien_shot_timer -= 1;
        if count(&self.alien_map) == 0 {
            if self.enemy_move_interval > 6 {
                self.enemy_move_interval -= 1;
                self.ramp_index += 1;
            }
            self.fill_aliens();
        }
        (r, self.terminal)
    }

    /// `_nearest_alien(pos)`: the lowest alien of the column nearest the cannon, columns
    /// tried in the order a stable sort by distance gives (the left one first on a tie).
    fn nearest_alien(&self) -> Option<(usize, usize)> {
        let pos = self.pos as usize;
        let mut order = [0usize; 10];
        for (i, o) in order.iter_mut().enumerate() {
            *o = i;
        }
        order.sort_by_key(|&x| x.abs_diff(pos));
        order
            .into_iter()
            .find_map(|x| (0..10).rev().find(|&y| self.alien_map[y][x]).map(|y| (y, x)))
    }

    /// `state()`, into `cells` (zeroed).
    pub(crate) fn observe(&self, cells: &mut Cells) {
        cells.set(9, self.pos, CANNON);
        let direction = if self.alien_dir < 0 { ALIEN_LEFT } else { ALIEN_RIGHT };
        for y in 0..10 {
            for x in 0..10 {
                let (yi, xi) = (y as i64, x as i64);
                if self.alien_map[y][x] {
                    cells.set(yi, xi, ALIEN);
                    cells.set(yi, xi, direction);
                }
                if self.f_bullet_map[y][x] {
                    cells.set(yi, xi, FRIENDLY_BULLET);
                }
                if self.e_bullet_map[y][x] {
                    cells.set(yi, xi, ENEMY_BULLET);
                }
            }
        }
    }

    /// The state as numbers: cannon x, alien direction, move interval, move and shot timers,
    /// ramp index, the cannon's shot timer and the terminal flag; then the friendly bullets,
    /// the enemy bullets and the aliens as 100 cells each, row by row.
    pub(crate) fn encode(&self, out: &mut Vec<f64>) {
        out.extend(
            [
                self.pos,
                self.alien_dir,
                self.enemy_move_interval,
                self.alien_move_timer,
                self.alien_shot_timer,
                self.ramp_index,
                self.shot_timer,
                i64::from(self.terminal),
            ]
            .map(|v| v as f64),
        );
        for map in [&self.f_bullet_map, &self.e_bullet_map, &self.alien_map] {
            out.extend(map.iter().flatten().map(|&b| f64::from(u8::from(b))));
        }
    }

    /// The state `encode` wrote, checked. There must be an alien (the reference's aliens
    /// never all go within a step, and it fails finding none to fire).
    pub(crate) fn decode(r: &mut Reader) -> Result<Self, String> {
        let pos = r.int("cannon x", 0, 9)?;
        let alien_dir = r.int("alien_dir", -1, 1)?;
        if alien_dir == 0 {
            return Err("alien_dir is 0; expected -1 (left) or 1 (right)".into());
        }
        let mut game = SpaceInvaders {
            pos,
            alien_dir,
            enemy_move_interval: r.int("enemy_move_interval", 6, ENEMY_MOVE_INTERVAL)?,
            alien_move_timer: r.int("alien_move_timer", 0, ENEMY_MOVE_INTERVAL)?,
            alien_shot_timer: r.int("alien_shot_timer", 0, ENEMY_SHOT_INTERVAL)?,
            ramp_index: r.int("ramp_index", 0, COUNTER_MAX)?,
            shot_timer: r.int("shot_timer", 0, SHOT_COOL_DOWN)?,
            terminal: r.flag("terminal")?,
            ..SpaceInvaders::new()
        };
        for (map, name) in [
            (&mut game.f_bullet_map, "friendly bullet"),
            (&mut game.e_bullet_map, "enemy bullet"),
            (&mut game.alien_map, "alien"),
        ] {
            for (y, row) in map.iter_mut().enumerate() {
                for (x, cell) in row.iter_mut().enumerate() {
                    *cell = r.flag(format_args!("{name} cell at row {y}, column {x}"))?;
                }
            }
        }
        if count(&game.alien_map) == 0 {
            return Err("there are no aliens".into());
        }
        Ok(game)
    }
}
