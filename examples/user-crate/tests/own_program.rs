//! The user's programs, run as a user runs them: their `rlgraph` trains on their environment
//! with their layer from a JSON config, and their own program composes a DQN from values.

use std::path::Path;
use std::process::Command;

fn summary_of(run: std::process::Output) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    serde_json::from_slice(&run.stdout).expect("the run prints its summary as JSON")
}

#[test]
fn the_users_rlgraph_program_trains_on_their_environment_with_their_layer() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("own-rl-run");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_own-rl"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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
    let summary = summary_of(run);
    assert_eq!(summary["env"], "OwnPole-v0");
    assert!(summary["timesteps_executed"].as_u64().unwrap() >= 600, "{summary}");
    assert_eq!(summary["evaluations"].as_array().unwrap().len(), 2, "{summary}");
    assert!(out.join("checkpoint.safetensors").exists());
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn the_users_own_program_composes_a_dqn_from_values() {
    let run = Command::new(env!("CARGO_BIN_EXE_compose")).output().unwrap();
    let summary = summary_of(run);
    assert_eq!(summary["timesteps_executed"], 400, "{summary}");
    // One update every 4 steps once 32 are stored: (400 - 32) / 4 = 92.
    let updates = summary["updates"].as_u64().unwrap();
    assert!((91..=93).contains(&updates), "{summary}");
}
