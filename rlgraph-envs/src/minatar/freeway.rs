//! Freeway (`minatar/environments/freeway.py`): a chicken crosses eight lanes of cars, moving
//! at most every third step; +1 for reaching the top (which sends it back and draws new car
//! speeds), a car sends it back to the bottom. The game itself ends the episode on its
//! 2,501st step, when its timer of 2,500 runs below zero (as `terminated`: the reference
//! registers no time limit).

use super::state::Reader;
use super::{Cells, Draws, DOWN, UP};

const PLAYER_SPEED: i64 = 3;
const TIME_LIMIT: i64 = 2500;

/// Channels of the observation.
pub(crate) const CHANNELS: usize = 7;
const CHICKEN: usize = 0;
const CAR: usize = 1;
/// The trail channel of speed 1 (speeds 2 to 5 follow).
const SPEED1: usize = 2;

/// Actions that differ: no-op, up, down.
pub(crate) const MINIMAL_ACTIONS: &[usize] = &[0, 2, 4];

/// A car in its lane (the lane's row is its index plus one).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Car {
    x: i64,
    /// Steps until it moves.
    timer: i64,
    /// Steps between moves, negative for leftwards (0 only if NumPy's `sign` gave 0).
    speed: i64,
}

/// The game's state, field for field the Python class's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Freeway {
    cars: [Car; 8],
    pos: i64,
    move_timer: i64,
    terminate_timer: i64,
    terminal: bool,
}

impl Freeway {
    /// A state before the first reset (the reference draws its cars in `reset`).
    pub(crate) fn new() -> Self {
        Freeway {
            cars: [Car {
                x: 0,
                timer: 1,
                speed: 1,
            }; 8],
            pos: 9,
            move_timer: PLAYER_SPEED,
            terminate_timer: TIME_LIMIT,
            terminal: false,
        }
    }

    /// `reset()`: new cars at the left edge.
    pub(crate) fn reset(&mut self, rng: &mut dyn Draws) {
        *self = Freeway::new();
        self.randomize_cars(rng, true);
    }

    /// `_randomize_cars`: eight speeds in 1..=5 (`randint(1, 6, 8)`), then eight signs
    /// (`sign(rand(8) - 0.5)`).
    fn randomize_cars(&mut self, rng: &mut dyn Draws, initialize: bool) {
        let mut speeds = [0i64; 8];
        for s in &mut speeds {
            *s = rng.randint(1, 6);
        }
        for s in &mut speeds {
            let d = rng.rand() - 0.5;
            // NumPy's sign: 0 for exactly 0.5 drawn.
            *s *= if d > 0.0 {
                1
            } else if d < 0.0 {
                -1
            } else {
                0
            };
        }
        for (car, &speed) in self.cars.iter_mut().zip(&speeds) {
            if initialize {
                car.x = 0;
            }
            car.timer = speed.abs();
            car.speed = speed;
        }
    }

    /// `act(a)` with `a` one of the six actions.
    pub(crate) fn act(&mut self, a: usize, rng: &mut dyn Draws) -> (i64, bool) {
        let mut r = 0;
        if self.terminal {
            return (r, true);
        }
        if a == UP && self.move_timer == 0 {
            self.move_timer = PLAYER_SPEED;
            self.pos = (self.pos - 1).max(0);
        } else if a == DOWN && self.move_timer == 0 {
            self.move_timer = PLAYER_SPEED;
            self.pos = (self.pos + 1).min(9);
        }
        if self.pos == 0 {
            r += 1;
            self.randomize_cars(rng, false);
            self.pos = 9;
        }
        for (lane, car) in self.cars.iter_mut().enumerate() {
            let row = lane as i64 + 1;
            if car.x == 4 && row == self.pos {
                self.pos = 9;
            }
            if car.timer == 0 {
                car.timer = car.speed.abs();
                car.x += if car.speed > 0 { 1 } else { -1 };
                if car.x < 0 {
                    car.x = 9;
                } else if car.x > 9 {
                    car.x = 0;
                }
                if car.x == 4 && row == self.pos {
                    self.pos = 9;
                }
            } else {
                car.timer -= 1;
            }
        }
        if self.move_timer > 0 {
            self.move_timer -= 1;
        }
        self.terminate_timer -= 1;
        if self.terminate_timer < 0 {
            self.terminal = true;
        }
        (r, self.terminal)
    }

    /// `state()`, into `cells` (zeroed).
    pub(crate) fn observe(&self, cells: &mut Cells) {
        cells.set(self.pos, 4, CHICKEN);
        // The reference keeps the previous car's trail channel for a car of speed 0 (its
        // loop variable is not reassigned), and fails on a first car of speed 0; that car
        // then gets no trail here.
        let mut trail = None;
        for (lane, car) in self.cars.iter().enumerate() {
            let row = lane as i64 + 1;
            cells.set(row, car.x, CAR);
            let mut back = if car.speed > 0 { car.x - 1 } else { car.x + 1 };
            if back < 0 {
                back = 9;
            } else if back > 9 {
                back = 0;
            }
            if (1..=5).contains(&car.speed.abs()) {
                trail = Some(SPEED1 + car.speed.unsigned_abs() as usize - 1);
            }
            if let Some(channel) = trail {
                cells.set(row, back, channel);
            }
        }
    }

    /// The state as numbers: chicken row, move timer, steps left, the terminal flag, then per
    /// lane the car's x, timer and signed speed.
    pub(crate) fn encode(&self, out: &mut Vec<f64>) {
        out.extend(
            [
                self.pos,
                self.move_timer,
                self.terminate_timer,
                i64::from(self.terminal),
            ]
            .map(|v| v as f64),
        );
        for car in &self.cars {
            out.extend([car.x, car.timer, car.speed].map(|v| v as f64));
        }
    }

    /// The state `encode` wrote, checked.
    pub(crate) fn decode(r: &mut Reader) -> Result<Self, String> {
        let pos = r.int("chicken row", 0, 9)?;
        let move_timer = r.int("move_timer", 0, PLAYER_SPEED)?;
        let terminate_timer = r.int("terminate_timer", -1, TIME_LIMIT)?;
        let terminal = r.flag("terminal")?;
        // The timer reaches -1 only as the game ends; stepping on would take it lower.
        if terminate_timer < 0 && !terminal {
            return Err("terminate_timer is -1 in a state that is not terminal".into());
        }
        let mut cars = [Car {
            x: 0,
            timer: 0,
            speed: 0,
        }; 8];
        for (lane, car) in cars.iter_mut().enumerate() {
            car.x = r.int(format_args!("car {lane} x"), 0, 9)?;
            car.timer = r.int(format_args!("car {lane} timer"), 0, 5)?;
            car.speed = r.int(format_args!("car {lane} speed"), -5, 5)?;
        }
        Ok(Freeway {
            cars,
            pos,
            move_timer,
            terminate_timer,
            terminal,
        })
    }
}
