//! The user's programs, run as a user runs them: their `rlgraph` trains on their environment
//! with their layer from a JSON config and runs their own algorithm, and their own program
//! composes a DQN from values.

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

/// The user's program, run from their crate's folder: its exit status, stdout and stderr.
fn own_rl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_own-rl"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_users_algorithm_learns_resumes_exactly_plays_greedily_and_is_refused_where_it_cannot_run() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (straight, paused) = (tmp.join("own-rl-reinforce"), tmp.join("own-rl-reinforce-paused"));
    for dir in [&straight, &paused] {
        let _ = std::fs::remove_dir_all(dir);
    }
    let train = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "train",
            "reinforce.json",
            "--env",
            "CartPole-v1",
            "--timesteps",
            "60000",
            "--seed",
            "3",
        ];
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(extra);
        summary_of(own_rl(&args))
    };
    let whole = train(&straight, &[]);
    // A uniformly random policy's CartPole episodes last about 22 steps; REINFORCE's mean
    // over the whole run, early episodes included, is several times that.
    assert!(whole["mean_episode_reward"].as_f64().unwrap() > 90.0, "{whole}");
    // Paused halfway and resumed, the run is the same run.
    train(&paused, &["--pause-at", "30000"]);
    let resumed = train(&paused, &["--resume", paused.to_str().unwrap()]);
    for key in [
        "timesteps_executed",
        "episodes_executed",
        "mean_episode_reward",
        "final_episode_reward",
    ] {
        assert_eq!(whole[key], resumed[key], "{key}: {whole} against {resumed}");
    }
    let learned = |dir: &Path| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join("checkpoint.safetensors")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["agent"].clone()
    };
    assert_eq!(learned(&straight), learned(&paused));
    // Greedy, the learned policy balances far longer than it did on average while learning.
    let played = summary_of(own_rl(&[
        "evaluate",
        straight.to_str().unwrap(),
        "--env",
        "CartPole-v1",
        "--episodes",
        "5",
    ]));
    assert!(played["mean_return"].as_f64().unwrap() > 200.0, "{played}");
    // Refused by name: a typo setting, a layout it cannot run in, spaces it does not take.
    let refused = |config: &str, env: &str, extra: &[&str]| {
        let file = tmp.join("own-rl-bad.json");
        std::fs::write(&file, config).unwrap();
        let mut args = vec!["train", file.to_str().unwrap(), "--env", env, "--timesteps", "10"];
        args.extend(extra);
        let run = own_rl(&args);
        assert!(!run.status.success());
        String::from_utf8_lossy(&run.stderr).to_string()
    };
    let e = refused(r#"{"type": "reinforce", "learning_rat": 0.1}"#, "CartPole-v1", &[]);
    assert!(e.contains("config.learning_rat") && e.contains("learning_rate"), "{e}");
    let e = refused(
        r#"{"type": "reinforce", "execution_spec": {"executor": "ga3c"}}"#,
        "CartPole-v1",
        &[],
    );
    assert!(e.contains("ga3c") && e.contains(r#"not type "reinforce""#), "{e}");
    let e = refused(r#"{"type": "reinforce"}"#, "CartPole-v1", &["--tensor-envs", "4"]);
    assert!(e.contains("--tensor-envs") && e.contains(r#"not "reinforce""#), "{e}");
    // REINFORCE learns on the host, so it offers the distributed roles nothing either.
    let launched = own_rl(&["launch", "reinforce.json", "--env", "CartPole-v1"]);
    let e = String::from_utf8_lossy(&launched.stderr);
    assert!(
        !launched.status.success() && e.contains(r#""reinforce" does not run across processes"#),
        "{e}"
    );
    let e = refused(r#"{"type": "reinforce"}"#, "Pendulum-v1", &[]);
    assert!(
        e.contains("reinforce takes a float box of states and one integer action"),
        "{e}"
    );
    // The config schema the user's program prints knows the algorithm's settings.
    let schema = own_rl(&["schema"]);
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    let settings = &schema["$defs"]["registered_reinforce"]["properties"];
    assert!(settings.get("baseline_learning_rate").is_some(), "{settings}");
    for dir in [&straight, &paused] {
        std::fs::remove_dir_all(dir).ok();
    }
}
