//! A crate outside the workspace, as a user makes one: it depends on `rlgraph` and
//! `rlgraph-cli` by path, registers an environment and a component, is the `rlgraph` program
//! in three lines of `main` (whose `train` knows both), and has a second program that trains
//! a DQN composed from Rust values, the user's layer among them.
//!
//! It builds into this workspace's target directory with the workspace's lock file and the
//! test profile's settings, so the third-party crates are reused. The workspace's own crates
//! are compiled again for it (about 2 minutes on two cores the first time, seconds after):
//! cargo hashes a path dependency by its path relative to the workspace that builds it, and
//! for a crate outside the workspace that path differs, as it would for any user.

use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = r#"[package]
name = "own-rl"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
rlgraph = { path = "ROOT/rlgraph" }
rlgraph-cli = { path = "ROOT/rlgraph-cli", features = [FEATURES] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"

[profile.dev]
opt-level = 2
debug = false

[workspace]
"#;

/// The user's library: their environment and component, and the call that registers them.
const LIB: &str = r#"
use rlgraph::prelude::*;

/// Registers CartPole under another id, as a user's own environment would be, and `halve`.
pub fn register() {
    register_env("OwnPole-v0", |seed| Ok(Box::new(rlgraph::envs::CartPole::new(seed)) as Box<dyn Env>))
        .expect("a new environment id");
    register_component::<Candle, Halve>("halve", |_, _| Ok(halve::<Candle>())).expect("a new component type");
}

/// The settings of `halve`: none.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Halve {}

/// `x / 2`, a layer of one's own.
pub fn halve<B: Backend>() -> Component<B> {
    Component::new("halve")
        .api("call", vec![Param::new("inputs")], |ctx, args| ctx.graph_fn("apply", &[args.get(0)?]))
        .graph_fn(GraphFn::tensors("apply", |_, xs| Ok(vec![B::affine(xs[0], 0.5, 0.0)?])).infer_same())
}
"#;

/// The user's `rlgraph` program: every subcommand, knowing their environment and component.
const MAIN: &str = r#"
fn main() -> std::process::ExitCode {
    own_rl::register();
    rlgraph_cli::main()
}
"#;

/// A second program of theirs: a DQN composed from Rust values (their layer among them, no
/// JSON network) trained 400 steps on their environment; it prints the run's summary.
const COMPOSE: &str = r#"
use rlgraph::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    own_rl::register();
    let env = make("OwnPole-v0", 0)?;
    let (states, actions) = (env.state_space().clone(), env.action_space().clone());
    let hidden = dense::<Candle>("hidden", DenseSpec { activation: Activation::Tanh, ..DenseSpec::new(16) });
    let agent = DqnAgent::<Candle>::builder(serde_json::json!({
            "type": "dqn",
            "update_spec": {"update_interval": 4, "batch_size": 16, "steps_before_update": 32},
        }))
        .network(vec![hidden, own_rl::halve::<Candle>()])
        .optimizer(OptimizerSpec::adam(0.001))
        .memory(ReplayMemory::new("replay", &transition_space(&states, &actions)?, 1000)?)
        .build(&states, &actions, 0)?;
    let envs = VectorEnv::new(vec![make("OwnPole-v0", 1)?], Stepping::Sequential)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, 0);
    let length = RunLength { timesteps: 400, episodes: None, pause_at: None };
    let run = drive(&mut worker, &DriveOptions::new(length), &mut |_| {})?;
    println!("{}", run.summary());
    Ok(())
}
"#;

/// A config whose network holds the user's component.
const CONFIG: &str = r#"{
  "type": "dqn",
  "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}, {"type": "halve"}],
  "memory_spec": {"type": "replay", "capacity": 1000},
  "update_spec": {"update_interval": 4, "batch_size": 16, "steps_before_update": 32}
}"#;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

#[test]
fn a_crate_of_ones_own_registers_its_environment_and_component_and_is_the_rlgraph_program() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().to_path_buf();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("own-rl");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // With libtorch at hand, the CLI's features are the test command's (`rlgraph-cli/tch`),
    // whose builds are then reused.
    let features = match std::env::var_os("LIBTORCH") {
        Some(_) => "\"tch\"",
        None => "",
    };
    let manifest = MANIFEST
        .replace("ROOT", root().to_str().unwrap())
        .replace("FEATURES", features);
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir_all(dir.join("src/bin")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    std::fs::write(dir.join("src/bin/compose.rs"), COMPOSE).unwrap();
    std::fs::write(dir.join("config.json"), CONFIG).unwrap();
    // The workspace's exact versions, so the shared target directory's builds are reused.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .current_dir(&dir)
        .args(["build", "--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(built.success(), "the crate builds");
    let exe = target
        .join("debug")
        .join(format!("own-rl{}", std::env::consts::EXE_SUFFIX));
    let out = dir.join("run");
    let run = Command::new(&exe)
        .current_dir(&dir)
        .args([
            "train",
            "config.json",
            "--env",
            "OwnPole-v0",
            "--timesteps",
            "600",
            "--seed",
            "3",
        ])
        .arg("--out")
        .arg(&out)
        .args(["--eval-every", "300", "--eval-episodes", "2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["env"], "OwnPole-v0");
    assert!(summary["timesteps_executed"].as_u64().unwrap() >= 600, "{summary}");
    assert_eq!(summary["evaluations"].as_array().unwrap().len(), 2, "{summary}");
    assert!(out.join("checkpoint.safetensors").exists());

    // Composed from values: one update every 4 steps once 32 are stored, (400 - 32) / 4 = 92.
    let compose = target
        .join("debug")
        .join(format!("compose{}", std::env::consts::EXE_SUFFIX));
    let run = Command::new(&compose).current_dir(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["timesteps_executed"], 400, "{summary}");
    let updates = summary["updates"].as_u64().unwrap();
    assert!((91..=93).contains(&updates), "{summary}");
    std::fs::remove_dir_all(&dir).ok();
}
