//! `rlgraph train` end to end: the summary, the files under `--out`, resuming, and errors.

use crate::common;
use crate::common::event_file;

use common::rlgraph;

#[test]
fn trains_writes_metrics_and_a_checkpoint_and_resumes() {
    let dir = std::env::temp_dir().join(format!("rlgraph-train-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let args = [
        "train",
        "configs/dqn-gridworld-2x2.json",
        "--env",
        "GridWorld-2x2",
        "--timesteps",
        "400",
        "--seed",
        "3",
    ];
    let (code, stdout, stderr) = rlgraph(&[&args[..], &["--out", &out]].concat());
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for key in [
        "timesteps_executed",
        "episodes_executed",
        "env_frames_per_second",
        "mean_episode_reward",
        "mean_episode_reward_last_10_episodes",
        "max_episode_reward",
        "final_episode_reward",
        "wall_clock_seconds",
    ] {
        assert!(summary.get(key).is_some(), "{key} missing from {summary}");
    }
    assert_eq!(summary["timesteps_executed"], 400);
    let csv = std::fs::read_to_string(dir.join("episodes.csv")).unwrap();
    assert_eq!(
        csv.lines().count() as u64 - 1,
        summary["episodes_executed"].as_u64().unwrap()
    );
    assert!(dir.join("checkpoint.safetensors").is_file());
    // The training curve: one point of its line per episode in episodes.csv.
    let curve = std::fs::read_to_string(dir.join("curve.svg")).unwrap();
    let line = curve
        .split("<polyline points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(
        line.split(' ').count() as u64,
        summary["episodes_executed"].as_u64().unwrap()
    );
    // The same seed gives the same run.
    let (_, again, _) = rlgraph(&args);
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["mean_episode_reward"], summary["mean_episode_reward"]);
    // Resuming from the checkpoint works.
    let (code, _, stderr) = rlgraph(&[&args[..], &["--resume", &out]].concat());
    assert_eq!(code, 0, "{stderr}");
    // The trained agent plays greedy episodes from the directory.
    let (code, stdout, stderr) = rlgraph(&["evaluate", &out, "--env", "GridWorld-2x2", "--episodes", "3"]);
    assert_eq!(code, 0, "{stderr}");
    let eval: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(eval["episodes"], 3);
    assert_eq!(eval["returns"].as_array().unwrap().len(), 3);
    // The checkpoint holds host values, so libtorch plays it too (where it is built in).
    let (code, stdout, stderr) = rlgraph(&[
        "evaluate",
        &out,
        "--env",
        "GridWorld-2x2",
        "--episodes",
        "3",
        "--backend",
        "tch",
    ]);
    if cfg!(feature = "tch") {
        assert_eq!(code, 0, "{stderr}");
        let on_tch: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(on_tch["episodes"], 3);
    } else {
        assert_eq!(code, 2);
        assert!(stderr.contains("--features tch"), "{stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_shipped_dqn_config_solves_cartpole_by_greedy_evaluation_within_50000_steps() {
    // #21's target: 100 greedy episodes (Gymnasium's definition of solving CartPole-v1)
    // averaging at least 475, within 50,000 training steps. The run stops at that round.
    let (code, stdout, stderr) = rlgraph(&[
        "train",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "50000",
        "--eval-every",
        "2500",
        "--target-return",
        "475",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rounds = summary["evaluations"].as_array().unwrap();
    let (last, earlier) = rounds.split_last().expect("at least one round");
    assert!(last["mean_return"].as_f64().unwrap() >= 475.0, "{summary}");
    assert!(
        earlier.iter().all(|e| e["mean_return"].as_f64().unwrap() < 475.0),
        "{summary}"
    );
    assert_eq!(summary["solved_at_timestep"], last["timestep"], "{summary}");
    assert!(summary["solved_at_timestep"].as_u64().unwrap() <= 50_000, "{summary}");
    for (k, e) in rounds.iter().enumerate() {
        assert_eq!(
            e["timestep"],
            2500 * (k as u64 + 1),
            "rounds fall on multiples: {summary}"
        );
    }
    assert_eq!(summary["timesteps_executed"], last["timestep"], "{summary}");
}

#[test]
fn the_configs_execution_seed_is_the_seed_unless_seed_is_given() {
    let dir = std::env::temp_dir().join(format!("rlgraph-config-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/dqn-gridworld-2x2.json"
        ))
        .unwrap(),
    )
    .unwrap();
    config["execution_spec"] = serde_json::json!({"seed": 3, "session_config": {}});
    let seeded = dir.join("seeded.json");
    std::fs::write(&seeded, config.to_string()).unwrap();
    // The per-episode returns of a 400-step run of `config` with `extra` arguments.
    let returns = |config: &str, extra: &[&str], name: &str| {
        let out = dir.join(name);
        let out = out.to_str().unwrap();
        let base = [
            "train",
            config,
            "--env",
            "GridWorld-2x2",
            "--timesteps",
            "400",
            "--out",
            out,
        ];
        let (code, _, stderr) = rlgraph(&[&base[..], extra].concat());
        assert_eq!(code, 0, "{stderr}");
        (
            std::fs::read_to_string(dir.join(name).join("episodes.csv")).unwrap(),
            stderr,
        )
    };
    let seeded = seeded.to_str().unwrap();
    let (from_config, stderr) = returns(seeded, &[], "from-config");
    // The TensorFlow key is noted once, though the config is read for the seed and the agent.
    assert_eq!(stderr.matches("execution_spec.session_config").count(), 1, "{stderr}");
    let (flag_3, _) = returns("configs/dqn-gridworld-2x2.json", &["--seed", "3"], "flag-3");
    let (flag_0, _) = returns("configs/dqn-gridworld-2x2.json", &["--seed", "0"], "flag-0");
    assert_ne!(
        flag_3, flag_0,
        "seeds 0 and 3 must give different runs for this test to mean anything"
    );
    assert_eq!(from_config, flag_3);
    // --seed wins over the config's seed.
    let (overridden, _) = returns(seeded, &["--seed", "0"], "overridden");
    assert_eq!(overridden, flag_0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_configs_and_envs_are_one_line_errors() {
    // RLgraph's Ape-X config on an environment with continuous actions, which DQN cannot take.
    let (code, _, stderr) = rlgraph(&[
        "train",
        "configs/rlgraph/apex_agent_cartpole.json",
        "--env",
        "Pendulum-v1",
    ]);
    assert_eq!(code, 2);
    // One error line; keys accepted without a use are noted on lines of their own.
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("note: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        stderr.contains("note: configs/rlgraph/apex_agent_cartpole.json: config.execution_spec.ray_spec"),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: configs/rlgraph/apex_agent_cartpole.json: config.execution_spec.session_config"),
        "{stderr}"
    );
    let (code, _, stderr) = rlgraph(&["train", "configs/dqn-cartpole.json", "--env", "Pong-v5"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("Pong-v5"), "{stderr}");
    // Counts and targets that cannot mean anything are refused by flag.
    for (flag, value) in [
        ("--num-envs", "0"),
        ("--num-envs", "100000000"),
        ("--target-return", "NaN"),
        ("--eval-every", "0"),
    ] {
        let (code, _, stderr) = rlgraph(&[
            "train",
            "configs/dqn-cartpole.json",
            "--env",
            "CartPole-v1",
            flag,
            value,
        ]);
        assert_eq!(code, 2, "{flag} {value}");
        assert!(
            stderr.contains(flag) && !stderr.contains("panicked"),
            "{flag} {value}: {stderr}"
        );
    }
    // Evaluation episodes are counted like environment copies, and need an interval.
    for extra in [
        &["--eval-every", "10", "--eval-episodes", "0"][..],
        &["--eval-episodes", "5"],
    ] {
        let (code, _, stderr) =
            rlgraph(&[&["train", "configs/dqn-cartpole.json", "--env", "CartPole-v1"], extra].concat());
        assert_eq!(code, 2, "{extra:?}");
        assert!(
            stderr.contains("--eval-e") && !stderr.contains("panicked"),
            "{extra:?}: {stderr}"
        );
    }
    // Without --device the config's device stands, so a device that does not exist is refused
    // by its key instead of being replaced by the CPU.
    let dir = std::env::temp_dir().join(format!("rlgraph-tpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("tpu.json");
    let json = r#"{"type": "dqn", "network_spec": [{"type": "dense", "units": 4}], "execution_spec": {"default_device": "tpu:7"}}"#;
    std::fs::write(&config, json).unwrap();
    let (code, _, stderr) = rlgraph(&[
        "train",
        config.to_str().unwrap(),
        "--env",
        "CartPole-v1",
        "--timesteps",
        "10",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("config.execution_spec.default_device") && stderr.contains("tpu:7"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_agent_type_trains_checkpoints_and_evaluates() {
    for (config, env) in [
        ("configs/ppo-cartpole.json", "CartPole-v1"),
        ("configs/actor-critic-cartpole.json", "CartPole-v1"),
        ("configs/random-cartpole.json", "CartPole-v1"),
        ("configs/impala-gridworld-2x2.json", "GridWorld-2x2"),
    ] {
        let dir = std::env::temp_dir().join(format!("rlgraph-cli-agents-{}-{}", config.len(), std::process::id()));
        let out = dir.to_string_lossy().to_string();
        let args = [
            "train",
            config,
            "--env",
            env,
            "--timesteps",
            "1200",
            "--seed",
            "3",
            "--out",
            &out,
        ];
        let (code, stdout, stderr) = rlgraph(&args);
        assert_eq!(code, 0, "{config}: {stderr}");
        let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert!(
            summary["timesteps_executed"].as_u64().unwrap() >= 1200,
            "{config}: {summary}"
        );
        // One TensorBoard record per finished episode, after the file-version record.
        let events = event_file(&dir).unwrap_or_else(|| panic!("{config}: no event file"));
        let bytes = std::fs::read(events).unwrap();
        let mut records = 0;
        let mut at = 0;
        while at + 12 <= bytes.len() {
            let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
            at += 12 + len + 4;
            records += 1;
        }
        assert_eq!(at, bytes.len(), "{config}: records fill the file exactly");
        let episodes = summary["episodes_executed"].as_u64().unwrap() as usize;
        assert!(
            records > episodes,
            "{config}: {records} records for {episodes} episodes"
        );
        let (code, _, stderr) = rlgraph(&[&args[..], &["--resume", &out, "--checkpoint-every", "500"]].concat());
        assert_eq!(code, 0, "{config}: {stderr}");
        let (code, stdout, stderr) = rlgraph(&["evaluate", &out, "--env", env, "--episodes", "2"]);
        assert_eq!(code, 0, "{config}: {stderr}");
        let eval: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(eval["returns"].as_array().unwrap().len(), 2, "{config}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn graph_prints_the_agents_meta_graph() {
    let (code, dot, stderr) = rlgraph(&["graph", "configs/dqn-cartpole.json", "--env", "CartPole-v1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        dot.starts_with("digraph") && dot.contains("target-policy") && dot.contains("cluster"),
        "{dot}"
    );
    let (code, json, _) = rlgraph(&[
        "graph",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let graph: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(graph.to_string().contains("dqn-agent/loss"), "the loss is in the graph");
    let graph_with = |extra: &[&str]| {
        let mut args = vec!["graph", "configs/dqn-cartpole.json", "--env", "CartPole-v1"];
        args.extend_from_slice(extra);
        rlgraph(&args)
    };
    // The call-level picture has a node per API call, many more than the component boxes.
    let (code, calls, _) = graph_with(&["--view", "calls"]);
    assert_eq!(code, 0);
    let boxes = |dot: &str| {
        dot.lines()
            .filter(|l| l.contains("[label=") && !l.contains("->"))
            .count()
    };
    assert!(
        boxes(&calls) > boxes(&dot),
        "{} calls, {} components",
        boxes(&calls),
        boxes(&dot)
    );
    let (code, shallow, _) = graph_with(&["--depth", "1", "--method", "update"]);
    assert_eq!(code, 0);
    assert!(
        shallow.contains("policy (+") && !shallow.contains("target-sync"),
        "{shallow}"
    );
    for (bad, says) in [
        (vec!["--method", "updte"], "update"),
        (vec!["--view", "calls", "--depth", "1"], "--view components"),
        (vec!["--view", "plan"], "needs --method"),
        (vec!["--view", "planned"], "components, calls or plan"),
    ] {
        let (code, _, stderr) = graph_with(&bad);
        assert_ne!(code, 0, "{bad:?}");
        assert!(stderr.contains(says), "{bad:?}: {stderr}");
    }
    // The meta graph is backend-free: libtorch's build of it draws the same picture.
    let (code, on_tch, stderr) = rlgraph(&[
        "graph",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--backend",
        "tch",
    ]);
    if cfg!(feature = "tch") {
        assert_eq!((code, on_tch), (0, dot), "{stderr}");
    } else {
        assert_eq!(code, 2);
        assert!(stderr.contains("--features tch"), "{stderr}");
    }
    let (code, _, stderr) = rlgraph(&[
        "graph",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--backend",
        "jax",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("\"jax\"") && stderr.contains("candle or tch"),
        "{stderr}"
    );
}

#[test]
fn trains_ppo_on_device_resident_envs() {
    // The shipped config with a batch of 1,024 frames: rollouts of 16 steps over 64 copies.
    let dir = std::env::temp_dir().join(format!("rlgraph-tensor-train-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/ppo-cartpole-tensor.json"
    ))
    .unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    config["update_spec"]["batch_size"] = 1024.into();
    config["update_spec"]["sample_size"] = 256.into();
    config["update_spec"]["num_iterations"] = 2.into();
    config["memory_spec"]["capacity"] = 1024.into();
    let path = dir.join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = dir.join("out");
    let args = [
        "train",
        path.to_str().unwrap(),
        "--env",
        "CartPole-v1",
        "--tensor-envs",
        "64",
        "--timesteps",
        "2048",
        "--out",
        out.to_str().unwrap(),
        "--eval-every",
        "1024",
        "--eval-episodes",
        "2",
    ];
    let (code, stdout, stderr) = rlgraph(&args);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["tensor_envs"], 64);
    // 1,024 frames per rollout (16 steps of 64 copies), two rollouts, one update each.
    assert_eq!(summary["timesteps_executed"], 2048);
    assert_eq!(summary["updates"], 2);
    // A greedy round of 2 host CartPole episodes after each rollout (each at a multiple of
    // 1,024), in the summary and in TensorBoard beside the training episodes.
    let rounds = summary["evaluations"].as_array().unwrap();
    let at: Vec<u64> = rounds.iter().map(|r| r["timestep"].as_u64().unwrap()).collect();
    assert_eq!(at, [1024, 2048], "{summary}");
    assert!(rounds
        .iter()
        .all(|r| (1.0..=500.0).contains(&r["mean_return"].as_f64().unwrap())));
    let bytes = std::fs::read(event_file(&out).expect("an event file")).unwrap();
    let has = |tag: &str| bytes.windows(tag.len()).any(|w| w == tag.as_bytes());
    assert!(has("eval/return") && has("episode/return"));
    let episodes = summary["episodes_executed"].as_u64().unwrap();
    assert!(episodes > 0, "random CartPole episodes end within 32 steps: {summary}");
    let csv = std::fs::read_to_string(out.join("episodes.csv")).unwrap();
    assert_eq!(csv.lines().count() as u64 - 1, episodes);
    // Only PPO trains on device-resident copies; the error names the config and the type.
    let (code, _, stderr) = rlgraph(&[
        "train",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--tensor-envs",
        "8",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("dqn-cartpole.json") && stderr.contains("--tensor-envs"),
        "{stderr}"
    );
    // Actor-critic shares PPO's folder but offers no device training: refused before it trains.
    let (code, _, stderr) = rlgraph(&[
        "train",
        "configs/actor-critic-cartpole.json",
        "--env",
        "CartPole-v1",
        "--tensor-envs",
        "8",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(r#"trains configs of type "ppo", not "actor_critic""#),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn trains_under_the_ga3c_executor_and_evaluates_its_model() {
    let dir = std::env::temp_dir().join(format!("rlgraph-ga3c-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let args = [
        "train",
        "configs/ga3c-actor-critic-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "3000",
        "--out",
        &out,
        "--eval-every",
        "1000",
        "--eval-episodes",
        "3",
    ];
    let (code, stdout, stderr) = rlgraph(&args);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["executor"], "ga3c");
    let g = &summary["ga3c"];
    for key in [
        "predictions_per_second",
        "trainings_per_second",
        "mean_prediction_batch",
        "mean_prediction_queue",
        "mean_training_queue",
    ] {
        assert!(g[key].as_f64().is_some(), "{key} missing from {summary}");
    }
    assert!(g["policy_lag"]["mean"].as_f64().is_some(), "{summary}");
    assert_eq!(g["final_counts"]["agents"], 16);
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(on_disk["ga3c"]["forward_passes"], g["forward_passes"]);
    let events = event_file(&dir).expect("an event file");
    let bytes = std::fs::read(events).unwrap();
    let has = |tag: &str| bytes.windows(tag.len()).any(|w| w == tag.as_bytes());
    assert!(has("ga3c/predictions_per_second") && has("ga3c/mean_policy_lag") && has("episode/return"));
    // Greedy rounds as the frames passed 1,000, 2,000 and 3,000: the watcher looks every
    // 20 ms, so two boundaries passed in one look give one round. Each is 3 CartPole
    // episodes, so its mean is a return CartPole can give (1 to 500).
    let rounds = summary["evaluations"].as_array().expect("evaluations in the summary");
    assert!((1..=3).contains(&rounds.len()), "{summary}");
    let mut last = 0;
    for r in rounds {
        let (at, mean) = (r["timestep"].as_u64().unwrap(), r["mean_return"].as_f64().unwrap());
        assert!(at >= 1000 && at > last && (1.0..=500.0).contains(&mean), "{summary}");
        last = at;
    }
    assert!(has("eval/return"));
    // The learned model plays greedy episodes.
    let (code, stdout, stderr) = rlgraph(&["evaluate", &out, "--env", "CartPole-v1", "--episodes", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let eval: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(eval["returns"].as_array().unwrap().len(), 2);
    // A second leg resumed from the first's checkpoint counts on from its frames, episodes,
    // updates and rounds (the agents' environments start new episodes), and saves as it goes.
    let out2 = dir.join("second");
    let second = [
        "train",
        "configs/ga3c-actor-critic-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "6000",
        "--resume",
        &out,
        "--out",
        out2.to_str().unwrap(),
        "--checkpoint-every",
        "1000",
        "--eval-every",
        "1000",
        "--eval-episodes",
        "3",
    ];
    let (code, stdout, stderr) = rlgraph(&second);
    assert_eq!(code, 0, "{stderr}");
    let resumed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let first_frames = summary["timesteps_executed"].as_u64().unwrap();
    assert_eq!(resumed["resumed_at_timestep"].as_u64(), Some(first_frames), "{resumed}");
    assert!(
        (6000..=6000 + 16).contains(&resumed["timesteps_executed"].as_u64().unwrap()),
        "{resumed}"
    );
    assert!(resumed["updates"].as_u64() >= summary["updates"].as_u64(), "{resumed}");
    let csv = |d: &std::path::Path| std::fs::read_to_string(d.join("episodes.csv")).unwrap();
    assert!(
        csv(&out2).starts_with(&csv(&dir)),
        "the first leg's episodes come first"
    );
    let rounds2 = resumed["evaluations"].as_array().unwrap();
    assert_eq!(rounds2[..rounds.len()], rounds[..], "{resumed}");
    assert!(rounds2.len() > rounds.len(), "{resumed}");
    assert!(rounds2[rounds.len()..]
        .iter()
        .all(|r| r["timestep"].as_u64().unwrap() > first_frames));
    assert!(out2.join("ga3c-checkpoint.safetensors").exists());
    // A third leg without --eval-every keeps the earlier rounds (and its TensorBoard log
    // starts past them). It pauses at 6,500 of 9,000 frames (at most a step per agent past,
    // as the agents stop stepping at the mark however late the watcher looks), and a fourth
    // leg resumes from that pause to the end.
    let out3 = dir.join("third");
    let leg = |pause: &[&str], resume: &std::path::Path| {
        let args = [
            &[
                "train",
                "configs/ga3c-actor-critic-cartpole.json",
                "--env",
                "CartPole-v1",
                "--timesteps",
                "9000",
                "--resume",
                resume.to_str().unwrap(),
                "--out",
                out3.to_str().unwrap(),
            ][..],
            pause,
        ]
        .concat();
        let (code, stdout, stderr) = rlgraph(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()
    };
    let third = leg(&["--pause-at", "6500"], &out2);
    assert_eq!(third["evaluations"], resumed["evaluations"], "{third}");
    let paused = third["paused_at_timestep"].as_u64().expect("paused");
    assert!((6500..=6500 + 16).contains(&paused), "{third}");
    assert_eq!(third["timesteps_executed"].as_u64(), Some(paused), "{third}");
    let fourth = leg(&[], &out3);
    assert_eq!(fourth["resumed_at_timestep"].as_u64(), Some(paused), "{fourth}");
    assert!(fourth["timesteps_executed"].as_u64().unwrap() >= 9000, "{fourth}");
    assert!(fourth["paused_at_timestep"].is_null(), "{fourth}");
    // A checkpoint of another network is refused, naming a variable, and nothing runs.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/ga3c-actor-critic-cartpole.json"
    ))
    .unwrap();
    let mut other: serde_json::Value = serde_json::from_str(&text).unwrap();
    other["network_spec"][0]["units"] = 7.into();
    let other_path = dir.join("other.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let (code, stdout, stderr) = rlgraph(&[
        "train",
        other_path.to_str().unwrap(),
        "--env",
        "CartPole-v1",
        "--resume",
        out2.to_str().unwrap(),
        "--timesteps",
        "100",
    ]);
    assert_ne!(code, 0, "{stdout}");
    assert!(
        stderr.contains("ga3c-checkpoint.safetensors") && stderr.contains("networks"),
        "{stderr}"
    );
    // The single-threaded worker's copies are refused, by name.
    let (code, _, stderr) = rlgraph(&[&args[..], &["--num-envs", "4"]].concat());
    assert_ne!(code, 0);
    assert!(stderr.contains("--num-envs"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_diverging_run_stops_naming_the_step_unless_told_to_go_on() {
    // Adam at learning rate 1e300: the first update's step is ~1e300 per weight, so the next
    // loss is infinite or NaN. The same under each executor: the single-threaded worker
    // (DQN), PPO on device-resident environments (--tensor-envs) and GA3C's threads.
    let dir = std::env::temp_dir().join(format!("rlgraph-diverge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let read = |name: &str| -> serde_json::Value {
        let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let dqn = serde_json::json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8, "activation": "relu"}],
        "update_spec": {"steps_before_update": 16, "update_interval": 1, "batch_size": 8}
    });
    let mut ppo = read("ppo-cartpole-tensor.json");
    ppo["memory_spec"]["capacity"] = 64.into();
    ppo["update_spec"] = serde_json::json!({"update_mode": "time_steps", "do_updates": true,
        "update_interval": 64, "batch_size": 64, "num_iterations": 4, "sample_size": 16});
    let mut ga3c = read("ga3c-actor-critic-cartpole.json");
    ga3c["execution_spec"]["ga3c_spec"]["num_agents"] = 2.into();
    // Each run's length, its executor's flags, and the steps by which it must have diverged
    // (DQN's first update is at step 16).
    let runs = [
        ("dqn", dqn, 200, &[][..], 16..=200),
        ("ppo", ppo, 1000, &["--tensor-envs", "8"][..], 1..=1000),
        ("ga3c", ga3c, 1000, &[][..], 1..=1000),
    ];
    for (name, mut json, timesteps, extra, diverged_by) in runs {
        json["optimizer_spec"] = serde_json::json!({"type": "adam", "learning_rate": 1e300});
        let config = dir.join(format!("{name}.json"));
        std::fs::write(&config, json.to_string()).unwrap();
        let (config, timesteps) = (config.to_str().unwrap(), timesteps.to_string());
        let run = |more: &[&str]| {
            let mut args = vec!["train", config, "--env", "CartPole-v1", "--timesteps", &timesteps];
            args.extend_from_slice(extra);
            args.extend_from_slice(more);
            rlgraph(&args)
        };
        let (code, _, stderr) = run(&[]);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(
            stderr.contains("training diverged at step") && stderr.contains("--on-divergence warn"),
            "{name}: {stderr}"
        );
        let (code, stdout, stderr) = run(&["--on-divergence", "warn"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert!(
            summary["diverged_at_timestep"]
                .as_u64()
                .is_some_and(|s| diverged_by.contains(&s)),
            "{name}: {summary}"
        );
        assert!(stderr.contains("warning: training diverged"), "{name}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `rlgraph train`'s summary's `threads` for a short CartPole run, pinned to CPU 0 by
/// `taskset` or not, with `--threads` as given, on `backend`.
fn threads_of(pinned: bool, threads: Option<&str>, backend: &str) -> serde_json::Value {
    let mut cmd = match pinned {
        true => {
            let mut c = std::process::Command::new("taskset");
            c.args(["-c", "0", env!("CARGO_BIN_EXE_rlgraph")]);
            c
        }
        false => std::process::Command::new(env!("CARGO_BIN_EXE_rlgraph")),
    };
    cmd.args([
        "train",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "60",
        "--backend",
        backend,
    ])
    .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
    .env_remove("RLGRAPH_THREADS");
    if let Some(t) = threads {
        cmd.args(["--threads", t]);
    }
    let out = cmd.output().expect("taskset and rlgraph run (taskset is util-linux's)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').rfind(|l| !l.is_empty()).unwrap()).unwrap();
    summary["threads"].clone()
}

#[test]
fn the_kernel_threads_follow_the_cpus_the_process_may_use() {
    // The CPUs this test may use, as the operating system sees its affinity and quota.
    let own = std::thread::available_parallelism().map_or(1, |n| n.get());
    let backend = if cfg!(feature = "tch") { "tch" } else { "candle" };
    // Pinned to one CPU, "all" is one thread, and libtorch is told so.
    let pinned = threads_of(true, Some("all"), backend);
    assert_eq!(
        (&pinned["available_cpus"], &pinned["kernel"]),
        (&1.into(), &1.into()),
        "{pinned}"
    );
    // Unpinned, "all" is every CPU this process may use, and a count is capped by them.
    let free = threads_of(false, Some("all"), backend);
    assert_eq!(
        (&free["available_cpus"], &free["kernel"]),
        (&own.into(), &own.into()),
        "{free}"
    );
    assert_eq!(
        threads_of(false, Some("64"), backend)["kernel"],
        serde_json::json!(own.min(64))
    );
    // By default one thread, with no variable set.
    let default = threads_of(false, None, backend);
    assert_eq!(default["kernel"], 1, "{default}");
    if cfg!(feature = "tch") {
        assert_eq!(pinned["libtorch"], 1, "{pinned}");
        assert_eq!(free["libtorch"], serde_json::json!(own), "{free}");
        assert_eq!(default["libtorch"], 1, "{default}");
    }
}

#[test]
fn evaluate_records_each_episode_as_a_gif_or_refuses_an_environment_that_cannot_draw() {
    let dir = std::env::temp_dir().join(format!("rlgraph-video-{}", std::process::id()));
    let (run, video) = (dir.join("run"), dir.join("video"));
    let (run_s, video_s) = (run.to_string_lossy().to_string(), video.to_string_lossy().to_string());
    let args = [
        "train",
        "configs/random-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "20",
        "--out",
        &run_s,
    ];
    let (code, _, stderr) = rlgraph(&args);
    assert_eq!(code, 0, "{stderr}");
    let eval = [
        "evaluate",
        &run_s,
        "--env",
        "CartPole-v1",
        "--episodes",
        "2",
        "--video",
        &video_s,
    ];
    let (code, stdout, stderr) = rlgraph(&eval);
    assert_eq!(code, 0, "{stderr}");
    let returns: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for i in 0..2 {
        // CartPole pays 1 per step: one frame after the reset and one per step.
        let steps = returns["returns"][i].as_f64().unwrap() as usize;
        let file = std::fs::File::open(video.join(format!("episode-{i}.gif"))).unwrap();
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::RGBA);
        let mut decoder = options.read_info(file).unwrap();
        assert_eq!((decoder.width(), decoder.height()), (600, 400));
        let mut frames = 0;
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            // Every frame shows the cart's black and the pole's brown, losslessly.
            let colours: std::collections::HashSet<&[u8]> = frame.buffer.chunks(4).map(|p| &p[..3]).collect();
            assert!(
                colours.contains(&[0u8, 0, 0][..]) && colours.contains(&[202u8, 152, 101][..]),
                "frame {frames}"
            );
            frames += 1;
        }
        assert_eq!(frames, steps + 1, "episode {i}");
    }
    // Acrobot cannot draw itself: refused before any episode plays or any folder is made.
    let acrobot = dir.join("acrobot").to_string_lossy().to_string();
    let args = [
        "train",
        "configs/random-cartpole.json",
        "--env",
        "Acrobot-v1",
        "--timesteps",
        "20",
        "--out",
        &acrobot,
    ];
    assert_eq!(rlgraph(&args).0, 0);
    let elsewhere = dir.join("no-video").to_string_lossy().to_string();
    let (code, _, stderr) = rlgraph(&["evaluate", &acrobot, "--env", "Acrobot-v1", "--video", &elsewhere]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--video") && stderr.contains("cannot render"),
        "{stderr}"
    );
    assert!(!dir.join("no-video").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn video_every_records_a_greedy_episode_on_each_multiple_of_its_steps() {
    let dir = std::env::temp_dir().join(format!("rlgraph-video-every-{}", std::process::id()));
    let run = dir.join("run").to_string_lossy().to_string();
    let args = [
        "train",
        "configs/random-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "50",
        "--video-every",
        "20",
        "--out",
        &run,
    ];
    let (code, _, stderr) = rlgraph(&args);
    assert_eq!(code, 0, "{stderr}");
    let mut names: Vec<String> = std::fs::read_dir(dir.join("run/videos"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["step-20.gif", "step-40.gif"]);
    for name in &names {
        let file = std::fs::File::open(dir.join("run/videos").join(name)).unwrap();
        let mut decoder = gif::DecodeOptions::new().read_info(file).unwrap();
        assert_eq!((decoder.width(), decoder.height()), (600, 400));
        // At least the reset's frame and one step's.
        let mut frames = 0;
        while decoder.read_next_frame().unwrap().is_some() {
            frames += 1;
        }
        assert!(frames >= 2, "{name}: {frames} frames");
    }
    // Refused before the run starts: an environment that cannot draw itself, and no --out.
    let acrobot = dir.join("acrobot").to_string_lossy().to_string();
    let mut refused = args;
    refused[3] = "Acrobot-v1";
    refused[9] = &acrobot;
    let (code, _, stderr) = rlgraph(&refused);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--video-every") && stderr.contains("cannot render"),
        "{stderr}"
    );
    assert!(!dir.join("acrobot/summary.json").exists());
    let (code, _, stderr) = rlgraph(&args[..8]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--out"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
