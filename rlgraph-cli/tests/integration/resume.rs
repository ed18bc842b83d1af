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
    let base = scratch(Path::new(config).file_stem().unwrap().to_str().unwrap());
    let (straight, legs) = (base.join("straight"), base.join("legs"));
    let total_arg = total.to_string();
    let run = |out: &Path, extra: &[&str]| {
        let args = [
            &[
                "train",
                config,
                "--env",
                env,
                "--timesteps",
                &total_arg,
                "--num-envs",
                "2",
                "--seed",
                "5",
            ][..],
            &["--out", out.to_str().unwrap()],
            extra,
        ]
        .concat();
        let (code, stdout, stderr) = rlgraph(&args);
        assert_eq!(code, 0, "{config} {extra:?}: {stderr}");
        summary(&stdout)
    };
    let whole = run(&straight, &[]);
    let first = run(&legs, &["--pause-at", &pause.to_string()]);
    // Two copies step together, so the pause lands on the next even step.
    assert_eq!(first["paused_at_timestep"], pause.div_ceil(2) * 2, "{config}: {first}");
    let last = run(&legs, &["--resume", legs.to_str().unwrap()]);
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
fn impala_resumes_exactly() {
    resumes_exactly("configs/impala-gridworld-2x2.json", "GridWorld-2x2", 1200, 531);
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
                csv.starts_with("episode,return\n") && csv.ends_with('\n'),
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
