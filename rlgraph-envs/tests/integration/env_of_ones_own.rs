//! An environment written outside the crate from its public helpers, registered by id, made
//! by `make` and checked by `check_env`; and `check_env` refusing environments that break the
//! contract, each by what it breaks.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_envs::{
    check_env, discrete_action, make, observation, register_env, registered_envs, Env, EnvError, EpisodeClock, Result,
    Step,
};
use rlgraph_spaces::{FloatBox, IntBox, Space, Value};

/// A chain of `n` cells: action 1 moves right, 0 left; reaching the right end pays 1 and ends
/// the episode; 10 steps at most. The start cell is drawn from the seed.
struct Chain {
    n: usize,
    at: usize,
    clock: EpisodeClock,
    rng: ChaCha8Rng,
    states: Space,
    actions: Space,
    /// How it breaks the contract, for the refusals below.
    flaw: Flaw,
}

#[derive(Clone, Copy, PartialEq)]
enum Flaw {
    None,
    /// Its observation leaves the state space at the right end.
    OutOfSpace,
    /// Its reward is NaN.
    NanReward,
    /// It ignores the seed of `reset`.
    Unseeded,
}

impl Chain {
    fn new(seed: u64, flaw: Flaw) -> Self {
        Chain {
            n: 4,
            at: 0,
            clock: EpisodeClock::new("Chain-v0", Some(10)),
            rng: ChaCha8Rng::seed_from_u64(seed),
            states: Space::from(FloatBox::bounded([1], 0.0, 1.0).unwrap()),
            actions: Space::from(IntBox::new(2).unwrap()),
            flaw,
        }
    }

    fn observe(&self) -> Value {
        let x = self.at as f64 / (self.n - 1) as f64;
        observation(&[if self.flaw == Flaw::OutOfSpace { 2.0 * x } else { x }])
    }
}

impl Env for Chain {
    fn id(&self) -> &str {
        "Chain-v0"
    }
    fn state_space(&self) -> &Space {
        &self.states
    }
    fn action_space(&self) -> &Space {
        &self.actions
    }
    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        match (seed, self.flaw) {
            // Draws from an RNG it never reseeds: each reset goes on from the last.
            (_, Flaw::Unseeded) => {}
            (Some(seed), _) => self.rng = ChaCha8Rng::seed_from_u64(seed),
            (None, _) => {}
        }
        self.at = self.rng.random_range(0..self.n - 1);
        self.clock.start();
        Ok(self.observe())
    }
    fn step(&mut self, action: &Value) -> Result<Step> {
        let a = discrete_action("Chain-v0", &self.actions, action, 2)?;
        self.clock.tick()?;
        self.at = if a == 1 { self.at + 1 } else { self.at.saturating_sub(1) };
        let terminated = self.at == self.n - 1;
        let reward = match (terminated, self.flaw) {
            (_, Flaw::NanReward) => f64::NAN,
            (true, _) => 1.0,
            (false, _) => 0.0,
        };
        let truncated = self.clock.finish(terminated);
        Ok(Step {
            observation: self.observe(),
            reward,
            terminated,
            truncated,
        })
    }
}

fn contract_reason(e: EnvError) -> String {
    match e {
        EnvError::Contract { env, reason } => {
            assert_eq!(env, "Chain-v0");
            reason
        }
        other => panic!("expected a contract error, got {other}"),
    }
}

#[test]
fn a_registered_environment_is_made_by_id_and_keeps_the_contract() {
    register_env("Chain-v0", |seed| {
        Ok(Box::new(Chain::new(seed, Flaw::None)) as Box<dyn Env>)
    })
    .unwrap();
    assert!(registered_envs().contains(&"Chain-v0".to_string()));
    let mut env = make("Chain-v0", 5).unwrap();
    check_env(env.as_mut(), 5, 200).unwrap();
    // By hand: from any start cell, always moving right ends the episode at the right end
    // with a reward of 1 within 3 steps.
    env.reset(Some(1)).unwrap();
    let mut last = None;
    for _ in 0..3 {
        let step = env.step(&Value::i32(1)).unwrap();
        last = Some(step.clone());
        if step.terminated {
            break;
        }
    }
    let last = last.unwrap();
    assert!(last.terminated && last.reward == 1.0);
    assert_eq!(last.observation, observation(&[1.0]));
    // The episode is over: the clock refuses another step until a reset.
    let e = env.step(&Value::i32(1)).unwrap_err().to_string();
    assert!(e.contains("call reset first"), "{e}");
    // An action outside the space is refused by name.
    env.reset(None).unwrap();
    let e = env.step(&Value::i32(2)).unwrap_err().to_string();
    assert!(e.contains("Chain-v0") && e.contains("not in the action space"), "{e}");
    // An id taken is refused, and the first registration stands.
    let again = register_env("Chain-v0", |seed| {
        Ok(Box::new(Chain::new(seed, Flaw::NanReward)) as Box<dyn Env>)
    });
    assert!(again.unwrap_err().to_string().contains("already registered"));
    check_env(make("Chain-v0", 5).unwrap().as_mut(), 5, 50).unwrap();
    for taken in ["CartPole-v1", "GridWorld-chain", "gym:Chain-v0", " Chain-v1"] {
        let e = register_env(taken, |seed| Ok(Box::new(Chain::new(seed, Flaw::None)) as Box<dyn Env>));
        assert!(e.is_err(), "{taken} was accepted");
    }
    // An unknown id names the registered ones and how to register.
    let e = make("Chain-v9", 0).err().unwrap().to_string();
    assert!(
        e.contains("registered: ") && e.contains("Chain-v0") && e.contains("register_env"),
        "{e}"
    );
}

#[test]
fn check_env_refuses_each_broken_contract_by_name() {
    let reason = |flaw| contract_reason(check_env(&mut Chain::new(0, flaw), 3, 200).unwrap_err());
    let r = reason(Flaw::OutOfSpace);
    // Cell 2 of 0..3 shows as 2 x 2/3 = 1.33, past the box's high of 1.
    assert!(r.contains("not in the state space") && r.contains("[1.33"), "{r}");
    let r = reason(Flaw::NanReward);
    assert!(r.contains("step 1 gives the reward NaN"), "{r}");
    let r = reason(Flaw::Unseeded);
    assert!(r.contains("not reproducible from its seed"), "{r}");
}

#[test]
fn every_built_in_environment_keeps_the_contract() {
    for id in [
        "CartPole-v1",
        "CartPoleNoVel-v1",
        "MountainCar-v0",
        "Acrobot-v1",
        "Pendulum-v1",
        "GridWorld-2x2",
        "GridWorld-4x4-xy",
        "DeterministicEnv",
        "MaskedChoice-v0",
        "MinAtar/Asterix-v1",
        "MinAtar/Breakout-v1",
        "MinAtar/Freeway-v1",
        "MinAtar/Seaquest-v1",
        "MinAtar/SpaceInvaders-v0",
    ] {
        let mut env = make(id, 11).unwrap();
        check_env(env.as_mut(), 11, 300).unwrap_or_else(|e| panic!("{id}: {e}"));
    }
}
