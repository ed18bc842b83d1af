//! Steps per second of the native MinAtar games on one thread, with uniformly random actions
//! and a reset at each episode end, against the `minatar` package running the same loop
//! through `gymnasium.make` in the Python of `RLGRAPH_PYTHON` (skipped when it cannot import
//! minatar).
//!
//! ```sh
//! RLGRAPH_PYTHON=.gym-venv/bin/python cargo run --release -p rlgraph-envs --example minatar_speed
//! ```

use std::process::Command;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_envs::make;
use rlgraph_spaces::Value;

const GAMES: [&str; 5] = ["Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders"];
const NATIVE_STEPS: usize = 2_000_000;
const PYTHON_STEPS: usize = 100_000;

/// The package's loop: `steps` random actions (drawn up front), resetting at each end.
const PYTHON: &str = r#"
import sys, time, logging, warnings
logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
import numpy as np, gymnasium as gym
from minatar.gym import register_envs
register_envs()
env = gym.make(f"MinAtar/{sys.argv[1]}-v1")
steps = int(sys.argv[2])
env.reset(seed=0)
actions = np.random.RandomState(1).randint(env.action_space.n, size=steps).tolist()
start = time.perf_counter()
for a in actions:
    obs, r, term, trunc, _ = env.step(a)
    if term or trunc:
        env.reset()
print(steps / (time.perf_counter() - start))
"#;

fn native(game: &str) -> f64 {
    let id = format!("MinAtar/{game}-v1");
    let mut env = make(&id, 0).expect("a MinAtar id");
    let n = env.action_space().num_categories().unwrap_or(1) as i32;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let actions: Vec<i32> = (0..NATIVE_STEPS).map(|_| rng.random_range(0..n)).collect();
    env.reset(Some(0)).expect("resets");
    let start = Instant::now();
    for &a in &actions {
        let step = env.step(&Value::i32(a)).expect("steps");
        if step.terminated || step.truncated {
            env.reset(None).expect("resets");
        }
    }
    NATIVE_STEPS as f64 / start.elapsed().as_secs_f64()
}

fn python(game: &str) -> Option<f64> {
    let python = rlgraph_envs::gym::python();
    let out = Command::new(&python)
        .args(["-c", PYTHON, game, &PYTHON_STEPS.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("{python}: {}", String::from_utf8_lossy(&out.stderr).trim());
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    println!("game           native steps/s   minatar steps/s   ratio");
    for game in GAMES {
        let ours = native(game);
        match python(game) {
            Some(theirs) => println!("{game:<14} {ours:>14.0}   {theirs:>15.0}   {:>5.0}x", ours / theirs),
            None => println!("{game:<14} {ours:>14.0}   {:>15}", "-"),
        }
    }
}
