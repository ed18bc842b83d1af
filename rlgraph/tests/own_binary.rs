//! A crate outside the workspace, as a user makes one: it depends on `rlgraph` and
//! `rlgraph-cli` by path, registers an environment and a component, trains on them from Rust,
//! and is the `rlgraph` program in three lines of `main`, whose `train` knows the environment.
//!
//! It builds into this workspace's target directory with the workspace's lock file and
//! profile, so the third-party crates are reused; the workspace's own crates are compiled
//! again for it (about 5 minutes on two cores the first time, seconds after), which is why
//! the test command leaves it out: `cargo test -p rlgraph --test own_binary -- --ignored`.

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

/// The user's program: their environment and component, registered, then every subcommand.
const MAIN: &str = r#"
use rlgraph::prelude::*;

/// CartPole under another id, as a user's own environment would be registered.
fn register() {
    register_env("OwnPole-v0", |seed| Ok(Box::new(rlgraph::envs::CartPole::new(seed)) as Box<dyn Env>))
        .expect("a new environment id");
    register_component::<Candle, Halve>("halve", halve::<Candle>).expect("a new component type");
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Halve {}

/// `x / 2`.
fn halve<B: Backend>(_: Halve, _at: &str) -> rlgraph::core::Result<Component<B>> {
    Ok(Component::new("halve")
        .api("call", vec![Param::new("inputs")], |ctx, args| ctx.graph_fn("apply", &[args.get(0)?]))
        .graph_fn(GraphFn::tensors("apply", |_, xs| Ok(vec![B::affine(xs[0], 0.5, 0.0)?])).infer_same()))
}

fn main() -> std::process::ExitCode {
    register();
    rlgraph_cli::main()
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
#[ignore = "builds a crate outside the workspace: about 5 minutes on two cores the first time; \
            run it with `cargo test -p rlgraph --test own_binary -- --ignored`"]
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
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
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
    std::fs::remove_dir_all(&dir).ok();
}
