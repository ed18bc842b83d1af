//! Steps per second of the native MinAtar games on one thread, with uniformly random actions
//! and a reset at each episode end, against the `minatar` package running the same loop
//! through `gymnasium.make`, and against gymnax's JAX MinAtar compiled by XLA on one thread:
//! one copy stepped per call, and 1,024 copies vmapped and scanned in one program (its best
//! case). Both in the Python of `RLGRAPH_PYTHON`; a column is skipped when that Python cannot
//! import the package.
//!
//! ```sh
//! RLGRAPH_PYTHON=.bench-venv/bin/python cargo run --release -p rlgraph-envs --example minatar_speed
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

/// gymnax's loop on one XLA thread: `copies` copies with random actions (drawn inside the
/// program), auto-reset as gymnax's `step` does, `steps` steps in all; one copy is stepped by
/// one jitted call per step, more copies by one scan over vmapped steps. Compiling is not timed.
const GYMNAX: &str = r#"
import os, sys, time
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
import jax, gymnax
game, copies, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
env, params = gymnax.make(f"{game}-MinAtar")
if copies == 1:
    step = jax.jit(lambda key, state: env.step(key, state, jax.random.randint(key, (), 0, env.num_actions), params)[1])
    state = env.reset(jax.random.PRNGKey(0), params)[1]
    keys = jax.random.split(jax.random.PRNGKey(1), steps + 1)
    jax.block_until_ready(step(keys[-1], state))
    start = time.perf_counter()
    for i in range(steps):
        state = step(keys[i], state)
    jax.block_until_ready(state)
else:
    reset = jax.vmap(env.reset, in_axes=(0, None))
    vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    def body(carry, _):
        state, key = carry
        key, ka, ks = jax.random.split(key, 3)
        actions = jax.random.randint(ka, (copies,), 0, env.num_actions)
        state = vstep(jax.random.split(ks, copies), state, actions, params)[1]
        return (state, key), None
    run = jax.jit(lambda state, key: jax.lax.scan(body, (state, key), None, length=steps // copies)[0])
    state = reset(jax.random.split(jax.random.PRNGKey(0), copies), params)[1]
    jax.block_until_ready(run(state, jax.random.PRNGKey(1)))
    start = time.perf_counter()
    jax.block_until_ready(run(state, jax.random.PRNGKey(2)))
    steps = steps // copies * copies
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

/// Steps per second `script` prints, run with `args`; `None` (and why, on stderr) when it fails.
fn python(script: &str, args: &[&str]) -> Option<f64> {
    let python = rlgraph_envs::gym::python();
    let out = Command::new(&python).arg("-c").arg(script).args(args).output().ok()?;
    if !out.status.success() {
        eprintln!("{python}: {}", String::from_utf8_lossy(&out.stderr).trim());
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    println!("game           native steps/s   minatar steps/s   gymnax 1 copy   gymnax 1,024 copies");
    let cell = |theirs: Option<f64>, ours: f64| match theirs {
        Some(t) => format!("{t:.0} ({:.1}x)", ours / t),
        None => "-".into(),
    };
    for game in GAMES {
        let ours = native(game);
        let package = python(PYTHON, &[game, &PYTHON_STEPS.to_string()]);
        let one = python(GYMNAX, &[game, "1", "20000"]);
        let many = python(GYMNAX, &[game, "1024", "2048000"]);
        println!(
            "{game:<14} {ours:>14.0}   {:>15}   {:>13}   {:>19}",
            cell(package, ours),
            cell(one, ours),
            cell(many, ours)
        );
    }
}
