//! `Acrobot-v1`, with Gymnasium's "book" dynamics, RK4 integration over dt = 0.2, and
//! 500-step limit.

use std::f64::consts::PI;

use rand::Rng;
use rlgraph_spaces::{Space, Value};

use crate::env::{
    core_accessors, core_snapshots, discrete, discrete_action, float_box, observation, Core, Env, Result, Step,
};

/// Seconds per step (one RK4 step).
pub const DT: f64 = 0.2;
/// Length of link 1.
pub const L1: f64 = 1.0;
/// Mass of link 1.
pub const M1: f64 = 1.0;
/// Mass of link 2.
pub const M2: f64 = 1.0;
/// Position of link 1's centre of mass.
pub const LC1: f64 = 0.5;
/// Position of link 2's centre of mass.
pub const LC2: f64 = 0.5;
/// Moment of inertia of link 1.
pub const I1: f64 = 1.0;
/// Moment of inertia of link 2.
pub const I2: f64 = 1.0;
/// Gravity.
pub const G: f64 = 9.8;
/// Speed limit of joint 1.
pub const MAX_VEL_1: f64 = 4.0 * PI;
/// Speed limit of joint 2.
pub const MAX_VEL_2: f64 = 9.0 * PI;
/// The torque of each action.
pub const TORQUES: [f64; 3] = [-1.0, 0.0, 1.0];

/// Two links hanging down; torque -1, 0 or +1 on the joint between them; -1 per step until
/// the tip swings above the bar (`-cos(t1) - cos(t1 + t2) > 1`).
pub struct Acrobot {
    state: [f64; 4],
    core: Core,
}

/// `x` wrapped into `[lo, hi]` by whole turns, as Gymnasium's `wrap`.
fn wrap(mut x: f64, lo: f64, hi: f64) -> f64 {
    let diff = hi - lo;
    while x > hi {
        x -= diff;
    }
    while x < lo {
        x += diff;
    }
    x
}

/// The time derivative of `(theta1, theta2, dtheta1, dtheta2)` under torque `a`.
fn dsdt(s: [f64; 4], a: f64) -> [f64; 4] {
    let [theta1, theta2, dtheta1, dtheta2] = s;
    let d1 = M1 * LC1 * LC1 + M2 * (L1 * L1 + LC2 * LC2 + 2.0 * L1 * LC2 * theta2.cos()) + I1 + I2;
    let d2 = M2 * (LC2 * LC2 + L1 * LC2 * theta2.cos()) + I2;
    let phi2 = M2 * LC2 * G * (theta1 + theta2 - PI / 2.0).cos();
    let phi1 = -M2 * L1 * LC2 * dtheta2 * dtheta2 * theta2.sin()
        - 2.0 * M2 * L1 * LC2 * dtheta2 * dtheta1 * theta2.sin()
        + (M1 * LC1 + M2 * L1) * G * (theta1 - PI / 2.0).cos()
        + phi2;
    let ddtheta2 = (a + d2 / d1 * phi1 - M2 * L1 * LC2 * dtheta1 * dtheta1 * theta2.sin() - phi2)
        / (M2 * LC2 * LC2 + I2 - d2 * d2 / d1);
    let ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    [dtheta1, dtheta2, ddtheta1, ddtheta2]
}

/// One classic fourth-order Runge-Kutta step of length `DT`.
fn rk4(y0: [f64; 4], a: f64) -> [f64; 4] {
    let add = |y: [f64; 4], k: [f64; 4], h: f64| -> [f64; 4] { std::array::from_fn(|i| y[i] + h * k[i]) };
    let k1 = dsdt(y0, a);
    let k2 = dsdt(add(y0, k1, DT / 2.0), a);
    let k3 = dsdt(add(y0, k2, DT / 2.0), a);
    let k4 = dsdt(add(y0, k3, DT), a);
    std::array::from_fn(|i| y0[i] + DT / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
}

impl Acrobot {
    /// A new Acrobot-v1.
    pub fn new(seed: u64) -> Self {
        let high = vec![1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2];
        let low = high.iter().map(|h| -h).collect();
        Acrobot {
            state: [0.0; 4],
            core: Core::new("Acrobot-v1", Some(500), seed, float_box(low, high), discrete(3)),
        }
    }

    /// A start state as `reset` draws it: each element uniform in [-0.1, 0.1).
    pub fn start_state(rng: &mut impl Rng) -> [f64; 4] {
        let (low, high) = Self::START_BOX;
        std::array::from_fn(|i| rng.random_range(low[i]..high[i]))
    }

    /// The box a start state is drawn uniformly from, `(low, high)`: Gymnasium's ±0.1.
    pub const START_BOX: ([f64; 4], [f64; 4]) = ([-0.1; 4], [0.1; 4]);

    fn observe(&self) -> Value {
        let [t1, t2, d1, d2] = self.state;
        observation(&[t1.cos(), t1.sin(), t2.cos(), t2.sin(), d1, d2])
    }
}

impl Env for Acrobot {
    core_accessors!();
    core_snapshots!();

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.state = Self::start_state(self.core.begin(seed));
        Ok(self.observe())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = discrete_action(self.id(), &self.core.action_space, action, 3)?;
        self.core.episode.tick()?;
        let ns = rk4(self.state, TORQUES[a]);
        self.state = [
            wrap(ns[0], -PI, PI),
            wrap(ns[1], -PI, PI),
            ns[2].clamp(-MAX_VEL_1, MAX_VEL_1),
            ns[3].clamp(-MAX_VEL_2, MAX_VEL_2),
        ];
        let [t1, t2, _, _] = self.state;
        let terminated = -t1.cos() - (t2 + t1).cos() > 1.0;
        let truncated = self.core.episode.finish(terminated);
        Ok(Step {
            observation: self.observe(),
            reward: if terminated { 0.0 } else { -1.0 },
            terminated,
            truncated,
        })
    }

    fn state(&self) -> Option<Vec<f64>> {
        Some(self.state.to_vec())
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        let any = (f64::NEG_INFINITY, f64::INFINITY);
        self.state = self.core.set(
            state,
            "theta1, theta2, dtheta1, dtheta2",
            [any, any, (-MAX_VEL_1, MAX_VEL_1), (-MAX_VEL_2, MAX_VEL_2)],
        )?;
        Ok(())
    }
}
