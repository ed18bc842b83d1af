//! `CartPoleNoVel-v1`: CartPole whose observation keeps the cart's position and the pole's
//! angle and drops both velocities (sb3-contrib's partially observable benchmark for recurrent
//! policies). A policy has to remember earlier observations to tell which way the pole moves.

use rlgraph_spaces::{Space, Value};

use crate::cartpole::{CartPole, THETA_THRESHOLD, X_THRESHOLD};
use crate::env::{float_box, observation, Env, EnvSnapshot, Result, Step};
use crate::render::RgbFrame;

/// CartPole-v1's dynamics, rewards and limits; observations `(x, theta)`.
pub struct CartPoleNoVel {
    inner: CartPole,
    state_space: Space,
}

impl CartPoleNoVel {
    /// The id `make` knows it by.
    pub const ID: &'static str = "CartPoleNoVel-v1";

    /// A new CartPoleNoVel-v1, seeded with `seed` until the first `reset` with a seed.
    pub fn new(seed: u64) -> Self {
        let high = vec![X_THRESHOLD * 2.0, THETA_THRESHOLD * 2.0];
        let low = high.iter().map(|h| -h).collect();
        CartPoleNoVel {
            inner: CartPole::new(seed),
            state_space: float_box(low, high),
        }
    }

    fn observe(&self) -> Value {
        let [x, _, theta, _] = self.inner.state();
        observation(&[x, theta])
    }
}

impl Env for CartPoleNoVel {
    fn id(&self) -> &str {
        Self::ID
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        self.inner.action_space()
    }

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        self.inner.reset(seed)?;
        Ok(self.observe())
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        let step = self.inner.step(action)?;
        Ok(Step {
            observation: self.observe(),
            ..step
        })
    }

    fn state(&self) -> Option<Vec<f64>> {
        Env::state(&self.inner)
    }

    fn set_state(&mut self, state: &[f64]) -> Result<()> {
        self.inner.set_state(state)
    }

    fn render(&mut self) -> Result<RgbFrame> {
        self.inner.render()
    }

    fn snapshot(&self) -> Option<EnvSnapshot> {
        self.inner.snapshot()
    }

    fn restore_snapshot(&mut self, snapshot: &EnvSnapshot) -> Result<()> {
        self.inner.restore_snapshot(snapshot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_are_cartpoles_without_the_velocities() {
        let (mut full, mut partial) = (CartPole::new(0), CartPoleNoVel::new(0));
        let a = full.reset(Some(7)).unwrap();
        let b = partial.reset(Some(7)).unwrap();
        let floats = |v: &Value| match v {
            Value::Float32(a) => a.data().to_vec(),
            other => panic!("not floats: {other:?}"),
        };
        let pick = |v: &Value| {
            let v = floats(v);
            vec![v[0], v[2]]
        };
        assert_eq!(floats(&b), pick(&a));
        for i in 0..40 {
            let action = Value::i32(i % 2);
            let (s, t) = (full.step(&action).unwrap(), partial.step(&action).unwrap());
            assert_eq!(floats(&t.observation), pick(&s.observation));
            assert!(partial.state_space().contains(&t.observation));
            assert_eq!(
                (s.reward, s.terminated, s.truncated),
                (t.reward, t.terminated, t.truncated)
            );
            if s.terminated {
                return;
            }
        }
    }
}
