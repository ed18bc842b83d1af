//! Exact resume from the command line, and outputs that survive SIGKILL. The reference for
//! every comparison is the same run done straight through: a paused-and-resumed run, or one
//! killed at a random moment and resumed from its last periodic checkpoint, must end with
//! the same checkpoint and episode list, byte for byte.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::rlgraph;
use rand::{Rng, SeedableRng};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rlgraph-resume-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn summary(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Straight, then paused at `pause` and resumed: both end with identical files.
fn resumes_exactly(config: &str, env: &str, total: u64, pause: u64) {
    // Two copies step together, so the pause lands on the next even step.
    let paused = pause.div_ceil(2) * 2;
    resumes_exactly_on(config, env, total, (pause, paused), &["--num-envs", "2"]);
}

/// [`resumes_exactly`] on the copies `copies` asks for, the pause landing at `pause.1`; the
/// first leg also checkpoints every 128 steps and the second every 96, which must change
/// nothing.
fn resumes_exactly_on(config: &str, env: &str, total: u64, pause: (u64, u64), copies: &[&str]) {
    let base = scratch(Path::new(config).file_stem().unwrap().to_str().unwrap());
    let (straight, legs) = (base.join("straight"), base.join("legs"));
    let total_arg = total.to_string();
    let run = |out: &Path, extra: &[&str]| {
        let args = [
            &["train", config, "--env", env, "--timesteps", &total_arg, "--seed", "5"][..],
            copies,
            &["--out", out.to_str().unwrap()],
            extra,
        ]
        .concat();
        let (code, stdout, stderr) = rlgraph(&args);
        assert_eq!(code, 0, "{config} {extra:?}: {stderr}");
        summary(&stdout)
    };
    let whole = run(&straight, &[]);
    let first = run(
        &legs,
        &["--pause-at", &pause.0.to_string(), "--checkpoint-every", "128"],
    );
    assert_eq!(first["paused_at_timestep"], pause.1, "{config}: {first}");
    let last = run(&legs, &["--resume", legs.to_str().unwrap(), "--checkpoint-every", "96"]);
    assert_eq!(last["resumed_at_timestep"], first["paused_at_timestep"], "{config}");
    for file in ["checkpoint.safetensors", "episodes.csv"] {
        assert!(
            read(&straight.join(file)) == read(&legs.join(file)),
            "{config}: {file} differs between the straight and the resumed run"
        );
    }
    for key in [
        "timesteps_executed",
        "episodes_executed",
        "updates",
        "mean_episode_reward",
        "evaluations",
    ] {
        assert_eq!(whole[key], last[key], "{config}: {key}");
    }
    assert!(
        whole["updates"].as_u64().unwrap() > 0,
        "{config} never updated: {whole}"
    );
    std::fs::remove_dir_all(&base).ok();
}

#[test]
fn dqn_resumes_exactly() {
    // Ape-X's config: n-step buffers, prioritized replay and worker-side priorities.
    resumes_exactly("configs/apex-cartpole.json", "CartPole-v1", 1200, 531);
    resumes_exactly("configs/dqn-cartpole.json", "CartPole-v1", 1000, 400);
}

#[test]
fn ppo_resumes_exactly() {
    resumes_exactly("configs/ppo-cartpole.json", "CartPole-v1", 1200, 531);
}

#[test]
fn ppo_on_native_mujoco_resumes_exactly() {
    // Hopper-v5 in this process: the checkpoint holds MuJoCo's whole integration state (the
    // solver's warm start too), so the resumed copies step on bit for bit. Updates every
    // 2,048 steps, the pause between them.
    if common::python().is_none() {
        return;
    }
    resumes_exactly("configs/benchmarks/mujoco/ppo-hopper.json", "Hopper-v5", 4600, 2531);
}

#[test]
fn impala_resumes_exactly() {
    resumes_exactly("configs/impala-gridworld-2x2.json", "GridWorld-2x2", 1200, 531);
}

#[test]
fn ppo_on_device_resident_copies_resumes_exactly_and_evaluates_where_the_straight_run_does() {
    // Rollouts of 8 steps over 8 copies (64 frames per update): the pause at 300 lands at the
    // end of the fifth rollout, 320. Greedy rounds of 2 host episodes every 128 frames fall
    // after the rollouts ending at 128, 256, 384, ... in both runs.
    let dir = scratch("tensor-config");
    std::fs::create_dir_all(&dir).unwrap();
    let mut config: serde_json::Value = serde_json::from_slice(&read(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/ppo-cartpole-tensor.json"
    ))))
    .unwrap();
    config["memory_spec"]["capacity"] = 64.into();
    config["update_spec"] = serde_json::json!({"update_mode": "time_steps", "do_updates": true,
        "update_interval": 64, "batch_size": 64, "num_iterations": 4, "sample_size": 16});
    let path = dir.join("ppo-tensor-small.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let copies = ["--tensor-envs", "8", "--eval-every", "128", "--eval-episodes", "2"];
    resumes_exactly_on(path.to_str().unwrap(), "CartPole-v1", 640, (300, 320), &copies);
    // Another count of copies is refused by name, naming the flag to fix.
    let out = dir.join("out");
    let base = [
        "train",
        path.to_str().unwrap(),
        "--env",
        "CartPole-v1",
        "--timesteps",
        "256",
    ];
    let out_args = ["--out", out.to_str().unwrap()];
    let (code, _, stderr) = rlgraph(&[&base[..], &out_args, &["--tensor-envs", "8", "--pause-at", "64"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = rlgraph(
        &[
            &base[..],
            &out_args,
            &["--tensor-envs", "4", "--resume", out.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("8 device-resident copies, this run has 4") && stderr.contains("--tensor-envs"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn resuming_with_other_copies_or_another_environment_is_refused_by_name() {
    let dir = scratch("mismatch");
    let out = dir.to_str().unwrap();
    let args = ["train", "configs/dqn-cartpole.json", "--timesteps", "300", "--out", out];
    let (code, _, stderr) = rlgraph(&[&args[..], &["--env", "CartPole-v1", "--pause-at", "100"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) =
        rlgraph(&[&args[..], &["--env", "CartPole-v1", "--resume", out, "--num-envs", "3"]].concat());
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("1 environment copies, this run has 3") && stderr.contains("--num-envs"),
        "{stderr}"
    );
    let (code, _, stderr) = rlgraph(&[&args[..], &["--env", "Acrobot-v1", "--resume", out]].concat());
    assert_ne!(code, 0);
    assert!(stderr.contains("error"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Kills `rlgraph train` with SIGKILL at seeded random moments. Whatever it leaves must be
/// whole: `config.json` as given, a checkpoint that passes its checksum, and no torn summary
/// or CSV. Resumed from what was left (or started again, when no checkpoint was written
/// yet), the run ends exactly as the straight run does.
#[test]
fn sigkill_at_random_moments_leaves_whole_files_and_resumes_exactly() {
    let base = scratch("sigkill");
    let config = "configs/dqn-cartpole.json";
    let args = |out: &Path| {
        [
            "train",
            config,
            "--env",
            "CartPole-v1",
            "--timesteps",
            "1500",
            "--checkpoint-every",
            "100",
            "--seed",
            "2",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let straight = base.join("straight");
    let (code, _, stderr) = rlgraph(&args(&straight).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{stderr}");
    let started = Instant::now();
    let (code, _, _) = rlgraph(
        &args(&base.join("timing"))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, 0);
    let full_run = started.elapsed();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    let mut killed_mid_run = 0;
    for trial in 0..12 {
        let out = base.join(format!("killed-{trial}"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
            .args(args(&out))
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Anywhere from start-up to a little past the end of a run.
        let delay = full_run.mul_f64(rng.random_range(0.0..1.1));
        std::thread::sleep(delay.min(Duration::from_secs(30)));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().ok();
        child.wait().unwrap();
        killed_mid_run += usize::from(!finished);
        eprintln!(
            "trial {trial}: killed after {delay:?} (full run {full_run:?}), finished: {finished}, checkpoint: {}",
            out.join("checkpoint.safetensors").exists()
        );
        if out.join("config.json").exists() {
            let given = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(config);
            assert!(
                read(&out.join("config.json")) == read(&given),
                "trial {trial}: torn config.json"
            );
        }
        for json in ["summary.json"] {
            if out.join(json).exists() {
                serde_json::from_slice::<serde_json::Value>(&read(&out.join(json)))
                    .unwrap_or_else(|e| panic!("trial {trial}: torn {json}: {e}"));
            }
        }
        if out.join("episodes.csv").exists() {
            let csv = String::from_utf8(read(&out.join("episodes.csv"))).unwrap();
            assert!(
                csv.starts_with("episode,timestep,return\n") && csv.ends_with('\n'),
                "trial {trial}: torn CSV"
            );
        }
        let mut again: Vec<String> = args(&out);
        if out.join("checkpoint.safetensors").exists() {
            again.extend(["--resume".to_string(), out.to_str().unwrap().to_string()]);
        }
        let (code, _, stderr) = rlgraph(&again.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "trial {trial} (killed after {delay:?}): {stderr}");
        for file in ["checkpoint.safetensors", "episodes.csv"] {
            assert!(
                read(&straight.join(file)) == read(&out.join(file)),
                "trial {trial} (killed after {delay:?}): {file} differs from the straight run's"
            );
        }
    }
    // The delays are seeded but the machine's speed is not; most kills land mid-run.
    assert!(killed_mid_run >= 1, "none of 12 kills landed mid-run");
    std::fs::remove_dir_all(&base).ok();
}
