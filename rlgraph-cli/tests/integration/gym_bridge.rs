//! `rlgraph` on Gymnasium environments through the bridge: `rlgraph env gym:CartPole-v1
//! --state` steps exactly as the native CartPole does, a Dict-observation environment made
//! in `tests/python/rlgraph_test_envs.py` trains, and an unconvertible space is refused by
//! name. Python is found as in rlgraph-envs' bridge tests (skipped without one unless
//! `RLGRAPH_REQUIRE_GYM` is set).

use std::process::Command;

use crate::common::python;

const TEST_ENVS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python");

/// Runs `rlgraph ARGS` in the folder of the test environments (so that `python -c` imports
/// them) with the bridge's Python; returns (exit code, stdout, stderr).
fn rlgraph_with(python: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(args)
        .current_dir(TEST_ENVS)
        .env("RLGRAPH_PYTHON", python)
        .output()
        .expect("the rlgraph binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn env_state_flag_steps_the_bridge_exactly_as_the_native_cartpole() {
    let Some(python) = python() else { return };
    let args = |env: &'static str| {
        [
            "env",
            env,
            "--seed",
            "3",
            "--state",
            "0.01,-0.02,0.03,0.04",
            "--actions",
            "1,0,1,1,0",
        ]
    };
    let (code, bridged, err) = rlgraph_with(&python, &args("gym:CartPole-v1"));
    assert_eq!(code, 0, "{err}");
    let (code, native, err) = rlgraph_with(&python, &args("CartPole-v1"));
    assert_eq!(code, 0, "{err}");
    let (bridged, native): (Vec<&str>, Vec<&str>) = (bridged.lines().collect(), native.lines().collect());
    assert_eq!(bridged.len(), 6);
    // The resets draw from different generators (NumPy's PCG64 and ChaCha8); from the set
    // state on, every transition is the same to the last bit.
    assert!(
        bridged[0].contains(r#""state_set":[0.01,-0.02,0.03,0.04]"#),
        "{}",
        bridged[0]
    );
    assert_eq!(bridged[1..], native[1..]);
}

#[test]
fn a_dict_observation_environment_trains_through_the_bridge() {
    let Some(python) = python() else { return };
    let (code, out, err) = rlgraph_with(
        &python,
        &[
            "train",
            "dqn-dict-obs.json",
            "--env",
            "gym:rlgraph_test_envs:DictObs-v0",
            "--timesteps",
            "400",
            "--num-envs",
            "2",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["env"], "gym:rlgraph_test_envs:DictObs-v0");
    assert_eq!(summary["timesteps_executed"], 400);
    // Episodes are cut at 20 steps: 400 steps make 20 episodes.
    assert_eq!(summary["episodes_executed"], 20, "{summary}");
    assert!(summary["updates"].as_u64().unwrap() > 0, "{summary}");
    // Reward 1 when the action names the observed target: chance scores 10 of 20. The
    // target is in the observation, so the learner soon does better.
    assert!(
        summary["mean_episode_reward_last_10_episodes"].as_f64().unwrap() > 12.0,
        "{summary}"
    );
}

#[test]
fn an_unconvertible_space_is_refused_by_name() {
    let Some(python) = python() else { return };
    let (code, out, err) = rlgraph_with(&python, &["env", "gym:rlgraph_test_envs:TextObs-v0"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("gym:rlgraph_test_envs:TextObs-v0") && err.contains("/note: Text"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn rlgraphs_dqn_pong_config_runs_on_atari_pong() {
    let Some(python) = python() else { return };
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/rlgraph/dqn_agent_for_pong.json"
    );
    // As RLgraph's DQN Pong test steps it: each action repeated for 4 frames (the last two
    // max-pooled), and 1 to 30 no-ops after every reset.
    let env = "gym:PongNoFrameskip-v4?frameskip=4&max_num_noops=30";
    let run = |config: &str, steps: &str| rlgraph_with(&python, &["train", config, "--env", env, "--timesteps", steps]);
    let summary = |(code, out, err): (i32, String, String)| -> serde_json::Value {
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(out.lines().last().unwrap()).unwrap()
    };
    // Verbatim: its updates start at step 50,000, so 1,500 steps crop, resize, gray, stack
    // four frames per copy, act and store.
    let verbatim = summary(run(config, "1500"));
    assert_eq!(verbatim["timesteps_executed"], 1500, "{verbatim}");
    assert_eq!(verbatim["updates"], 0, "{verbatim}");
    // Updates from step 500 (the one change). The worker counts steps from 1 and updates at
    // the first step t >= 500, then every 4th (RLgraph's update_interval), so steps 1..=600
    // bring t = 500, 504, ..., 600: 26 updates of 32 stacked 80x80 frames.
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    json["update_spec"]["steps_before_update"] = 500.into();
    let early = std::env::temp_dir().join(format!("rlgraph-pong-{}.json", std::process::id()));
    std::fs::write(&early, json.to_string()).unwrap();
    let ran = run(early.to_str().unwrap(), "600");
    // Removed before any assertion, so a failing run leaves nothing behind.
    std::fs::remove_file(&early).ok();
    let learning = summary(ran);
    assert_eq!(learning["updates"], 26, "{learning}");
    assert!(learning["diverged_at_timestep"].is_null(), "{learning}");
}

#[test]
fn rlgraphs_ape_x_pong_config_launches_with_byte_records_stored_once() {
    let Some(python) = python() else { return };
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    // RLgraph's apex_pong.json, scaled to a short run: one actor of two copies, updates from
    // frame 200 on batches of 16, records sent 50 at a time.
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/configs/rlgraph/apex_pong.json")).unwrap())
            .unwrap();
    json["update_spec"]["steps_before_update"] = 200.into();
    json["update_spec"]["batch_size"] = 16.into();
    let ray = &mut json["execution_spec"]["ray_spec"];
    ray["executor_spec"]["num_worker_samples"] = 50.into();
    ray["executor_spec"]["weight_sync_steps"] = 100.into();
    ray["worker_spec"]["num_worker_environments"] = 2.into();
    let dir = std::env::temp_dir().join(format!("rlgraph-apex-pong-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("apex_pong_short.json");
    std::fs::write(&config, json.to_string()).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(["launch"])
        .arg(&config)
        .args(["--env", "gym:PongNoFrameskip-v4?frameskip=4&max_num_noops=30"])
        .args([
            "--actors",
            "1",
            "--replay-shards",
            "1",
            "--timesteps",
            "800",
            "--seed",
            "1",
            "--out",
        ])
        .arg(dir.join("run"))
        .env("RLGRAPH_PYTHON", &python)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = crate::common::roles::finish(child, std::time::Duration::from_secs(300));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary["timesteps_executed"].as_u64().unwrap() >= 800, "{summary}");
    assert!(summary["updates"].as_u64().unwrap() > 0, "{summary}");
    let shard = &summary["distributed"]["shards"][0];
    assert!(shard["records_inserted"].as_u64().unwrap() >= 500, "{summary}");
    assert_eq!(shard["refused"], 0, "{summary}");
    // The shard stored the actor's 84x84 byte frames once each, and stacks as frame numbers.
    let (header, _) = crate::common::safetensors_header(&dir.join("run/replay-0.safetensors"));
    let find = |suffix: &str| {
        header
            .iter()
            .find(|(k, _)| k.ends_with(suffix))
            .unwrap_or_else(|| panic!("no tensor ending in {suffix}: {:?}", header.keys()))
            .1
            .clone()
    };
    let frames = find("records#frames");
    assert_eq!(frames["dtype"], "U8", "{frames}");
    assert_eq!(frames["shape"][1], 84 * 84, "{frames}");
    assert_eq!(find("records/states#frame_ids")["shape"][1], 4);
    assert!(
        !header.keys().any(|k| k.ends_with("records/states")),
        "no whole stacks stored"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn float64_observations_arrive_as_float32_and_are_otherwise_refused_when_the_agent_is_built() {
    let Some(python) = python() else { return };
    let env = "gym:rlgraph_test_envs:Float64Obs-v0";
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/ppo-cartpole.json");
    // RLgraph's force_float32: the bridge sends MuJoCo-style float64 states as float32.
    let (code, out, err) = rlgraph_with(&python, &["train", config, "--env", env, "--timesteps", "200"]);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["timesteps_executed"], 200, "{summary}");
    // Kept float64, the network refuses them when the agent is built, saying what to do.
    let wide = format!("{env}?force_float32=false");
    let (code, _, err) = rlgraph_with(&python, &["train", config, "--env", &wide, "--timesteps", "200"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("float64") && err.contains("convert_type") && !err.contains("backtrace"),
        "{err}"
    );
}

/// The shipped DQN CartPole config (the tests run in the test environments' folder).
const CARTPOLE_DQN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/dqn-cartpole.json");

#[test]
fn bridged_copies_train_the_same_run_in_any_number_of_processes() {
    let Some(python) = python() else { return };
    // Five CartPole copies in one, two or five bridge processes: each copy keeps its seed and
    // its place in the batch, so the three runs are one run.
    let run = |processes: &str| {
        let (code, out, err) = rlgraph_with(
            &python,
            &[
                "train",
                CARTPOLE_DQN,
                "--env",
                "gym:CartPole-v1",
                "--timesteps",
                "600",
                "--num-envs",
                "5",
                "--bridge-processes",
                processes,
            ],
        );
        assert_eq!(code, 0, "{err}");
        let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        let keys = [
            "episodes_executed",
            "mean_episode_reward",
            "final_episode_reward",
            "updates",
        ];
        keys.map(|k| summary[k].clone())
    };
    let one = run("1");
    assert!(one[0].as_u64().unwrap() > 5, "{one:?}");
    assert_eq!(run("2"), one);
    assert_eq!(run("5"), one);
    let (code, _, err) = rlgraph_with(
        &python,
        &[
            "train",
            CARTPOLE_DQN,
            "--env",
            "gym:CartPole-v1",
            "--bridge-processes",
            "0",
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("--bridge-processes"), "{err}");
}
