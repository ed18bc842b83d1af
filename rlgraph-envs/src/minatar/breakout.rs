//! Breakout (`minatar/environments/breakout.py`): a paddle on the bottom row bounces a ball
//! that moves along diagonals into three rows of bricks, +1 a brick; a cleared wall comes
//! back; the ball reaching the bottom past the paddle ends the episode.

use super::state::Reader;
use super::{Cells, Draws, LEFT, RIGHT};

/// Channels of the observation.
pub(crate) const CHANNELS: usize = 4;
const PADDLE: usize = 0;
const BALL: usize = 1;
const TRAIL: usize = 2;
const BRICK: usize = 3;

/// Actions that differ: no-op, left, right.
pub(crate) const MINIMAL_ACTIONS: &[usize] = &[0, 1, 3];

/// The game's state, field for field the Python class's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Breakout {
    ball_x: i64,
    ball_y: i64,
    /// 0 up-left, 1 up-right, 2 down-right, 3 down-left.
    ball_dir: usize,
    pos: i64,
    /// `brick_map[y][x]`.
    bricks: [[bool; 10]; 10],
    strike: bool,
    last_x: i64,
    last_y: i64,
    terminal: bool,
}

impl Breakout {
    /// A state before the first reset (the reference draws its start in `reset`).
    pub(crate) fn new() -> Self {
        let mut game = Breakout {
            ball_x: 0,
            ball_y: 3,
            ball_dir: 2,
            pos: 4,
            bricks: [[false; 10]; 10],
            strike: false,
            last_x: 0,
            last_y: 3,
            terminal: false,
        };
        game.fill_bricks();
        game
    }

    fn fill_bricks(&mut self) {
        for row in &mut self.bricks[1..4] {
            *row = [true; 10];
        }
    }

    /// `reset()`: one draw picks the ball's start (left going right, or right going left).
    pub(crate) fn reset(&mut self, rng: &mut dyn Draws) {
        let (x, dir) = [(0, 2), (9, 3)][rng.randint(0, 2) as usize];
        *self = Breakout::new();
        self.ball_x = x;
        self.ball_dir = dir;
        self.last_x = x;
    }

    /// `act(a)` with `a` one of the six actions.
    pub(crate) fn act(&mut self, a: usize, _rng: &mut dyn Draws) -> (i64, bool) {
        let mut r = 0;
        if self.terminal {
            return (r, true);
        }
        match a {
            LEFT => self.pos = (self.pos - 1).max(0),
            RIGHT => self.pos = (self.pos + 1).min(9),
            _ => {}
        }
        self.last_x = self.ball_x;
        self.last_y = self.ball_y;
        let (dx, dy) = [(-1, -1), (1, -1), (1, 1), (-1, 1)][self.ball_dir];
        let (mut new_x, mut new_y) = (self.ball_x + dx, self.ball_y + dy);
        let mut strike_toggle = false;
        if !(0..=9).contains(&new_x) {
            new_x = new_x.clamp(0, 9);
            self.ball_dir = [1, 0, 3, 2][self.ball_dir];
        }
        if new_y < 0 {
            new_y = 0;
            self.ball_dir = [3, 2, 1, 0][self.ball_dir];
        } else if self.bricks[new_y as usize][new_x as usize] {
            strike_toggle = true;
            if !self.strike {
                r += 1;
                self.strike = true;
                self.bricks[new_y as usize][new_x as usize] = false;
                new_y = self.last_y;
                self.ball_dir = [3, 2, 1, 0][self.ball_dir];
            }
        } else if new_y == 9 {
            if self.bricks.iter().flatten().all(|b| !b) {
                self.fill_bricks();
            }
            if self.ball_x == self.pos {
                self.ball_dir = [3, 2, 1, 0][self.ball_dir];
                new_y = self.last_y;
            } else if new_x == self.pos {
                self.ball_dir = [2, 3, 0, 1][self.ball_dir];
                new_y = self.last_y;
            } else {
                self.terminal = true;
            }
        }
        if !strike_toggle {
            self.strike = false;
        }
        self.ball_x = new_x;
        self.ball_y = new_y;
        (r, self.terminal)
    }

    /// `state()`, into `cells` (zeroed).
    pub(crate) fn observe(&self, cells: &mut Cells) {
        cells.set(self.ball_y, self.ball_x, BALL);
        cells.set(9, self.pos, PADDLE);
        cells.set(self.last_y, self.last_x, TRAIL);
        for (y, row) in self.bricks.iter().enumerate() {
            for (x, &b) in row.iter().enumerate() {
                if b {
                    cells.set(y as i64, x as i64, BRICK);
                }
            }
        }
    }

    /// The state as numbers: ball x, y and direction, paddle, strike, last x and y, the
    /// terminal flag, then the 100 bricks row by row.
    pub(crate) fn encode(&self, out: &mut Vec<f64>) {
        out.extend(
            [
                self.ball_x,
                self.ball_y,
                self.ball_dir as i64,
                self.pos,
                i64::from(self.strike),
                self.last_x,
                self.last_y,
                i64::from(self.terminal),
            ]
            .map(|v| v as f64),
        );
        out.extend(self.bricks.iter().flatten().map(|&b| f64::from(u8::from(b))));
    }

    /// The state `encode` wrote, checked. Only a terminal state has the ball on the bottom
    /// row (the reference would index past the board stepping from one that is not).
    pub(crate) fn decode(r: &mut Reader) -> Result<Self, String> {
        let ball_x = r.int("ball_x", 0, 9)?;
        let ball_y = r.int("ball_y", 0, 9)?;
        let ball_dir = r.int("ball_dir", 0, 3)? as usize;
        let pos = r.int("paddle position", 0, 9)?;
        let strike = r.flag("strike")?;
        let last_x = r.int("last_x", 0, 9)?;
        let last_y = r.int("last_y", 0, 9)?;
        let terminal = r.flag("terminal")?;
        let mut bricks = [[false; 10]; 10];
        for (y, row) in bricks.iter_mut().enumerate() {
            for (x, b) in row.iter_mut().enumerate() {
                *b = r.flag(format_args!("brick at row {y}, column {x}"))?;
            }
        }
        // Only rows 1 to 3 ever hold bricks; a brick on the bottom row would let a striking
        // ball through it and off the board.
        if let Some(y) = (0..10).find(|&y| !(1..=3).contains(&y) && bricks[y].iter().any(|&b| b)) {
            return Err(format!("row {y} holds a brick; the game keeps bricks in rows 1 to 3"));
        }
        if ball_y == 9 && !terminal {
            return Err("the ball is on the bottom row (9) of a state that is not terminal".into());
        }
        Ok(Breakout {
            ball_x,
            ball_y,
            ball_dir,
            pos,
            bricks,
            strike,
            last_x,
            last_y,
            terminal,
        })
    }
}
