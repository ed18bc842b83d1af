//! `rlgraph bench`: the tiny suite end to end (every run's curve, the report's table computed
//! again here from the curves, the plots), and bad input: an unknown suite or row, a row that
//! cannot build (refused before any run), and a run that fails (reported, the others go on).

use std::path::Path;

use crate::common::rlgraph;

/// One column of a `curve.csv` against its steps (1: seconds, 3: the greedy return).
fn column(path: &Path, index: usize) -> Vec<(u64, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[0].parse().unwrap(), cells[index].parse().unwrap())
        })
        .collect()
}

/// The rows of a `curve.csv`: (step, eval return).
fn curve(path: &Path) -> Vec<(u64, f64)> {
    column(path, 3)
}

/// The rows of a `curve.csv`: (step, seconds).
fn seconds(path: &Path) -> Vec<(u64, f64)> {
    column(path, 1)
}

#[test]
fn the_tiny_suite_runs_and_reports_what_its_curves_say() {
    let dir = std::env::temp_dir().join(format!("rlgraph-bench-tiny-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, stdout, stderr) = rlgraph(&["bench", "tiny", "--out", &dir.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // Progress: one line per run, counted over the suite.
    assert!(
        stderr.contains("[1/3] ppo-cartpole") && stderr.contains("[3/3] dqn-cartpole"),
        "{stderr}"
    );
    assert!(!stderr.contains("made no update"), "{stderr}");
    // Each run's curve has one point per evaluation round, at the row's interval.
    let ppo: Vec<Vec<(u64, f64)>> = [0, 1]
        .iter()
        .map(|s| curve(&dir.join(format!("ppo-cartpole/seed-{s}/curve.csv"))))
        .collect();
    for c in &ppo {
        assert_eq!(c.iter().map(|p| p.0).collect::<Vec<_>>(), [1000, 2000, 3000]);
    }
    let dqn = curve(&dir.join("dqn-cartpole/seed-0/curve.csv"));
    assert_eq!(dqn.iter().map(|p| p.0).collect::<Vec<_>>(), [1000, 2000]);
    // The table's final return is the mean and sample std of the seeds' last rounds.
    let (a, b) = (ppo[0][2].1, ppo[1][2].1);
    let row = &summary["rows"][0];
    assert_eq!(row["row"], "ppo-cartpole");
    let mean = (a + b) / 2.0;
    assert!(
        (row["final_return"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9,
        "{row}"
    );
    let std = (a - b).abs() / 2f64.sqrt();
    assert!(
        (row["final_return"]["sample_std"].as_f64().unwrap() - std).abs() < 1e-9,
        "{row}"
    );
    // Matched against 500 - 0 exactly when the mean reached 500.
    assert_eq!(row["matches"], serde_json::json!(mean >= 500.0), "{row}");
    assert!(row["runs"] == 2 && row["finished"] == 2, "{row}");
    // The dqn row has no published result: nothing to match.
    assert!(summary["rows"][1]["matches"].is_null(), "{}", summary["rows"][1]);
    // The report: the table with both rows and the published result, two plots per row.
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for needle in [
        "<table>",
        ">ppo-cartpole<",
        ">dqn-cartpole<",
        "500.0 ± 0.0 (rl-baselines3-zoo benchmark.md, ppo, 100k)",
        &format!("{mean:.1} ± {std:.1}"),
    ] {
        assert!(report.contains(needle), "no {needle:?} in the report");
    }
    assert_eq!(report.matches("<svg").count(), 4);
    for f in [
        "ppo-cartpole-steps.svg",
        "ppo-cartpole-seconds.svg",
        "dqn-cartpole-steps.svg",
    ] {
        assert!(
            std::fs::read_to_string(dir.join(f)).unwrap().contains("<polyline"),
            "{f}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_budget_below_the_first_update_is_warned_of() {
    // 1% of the tiny PPO row is 30 steps; its config learns from batches of 1,024.
    let dir = std::env::temp_dir().join(format!("rlgraph-bench-no-update-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let args = [
        "bench",
        "tiny",
        "--rows",
        "ppo-cartpole",
        "--seeds",
        "1",
        "--budget",
        "0.01",
    ];
    let (code, _, stderr) = rlgraph(&[&args[..], &["--out", &dir.to_string_lossy()]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: ppo-cartpole seed 0 made no update in its 30 steps"),
        "{stderr}"
    );
    let summary = std::fs::read_to_string(dir.join("ppo-cartpole/seed-0/summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["updates"], 0, "{summary}");
    assert!(summary["warning"].as_str().unwrap().contains("--budget"), "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_seed_of_a_row_runs_alone_and_a_seed_it_does_not_list_is_refused() {
    let dir = std::env::temp_dir().join(format!("rlgraph-bench-one-seed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_string_lossy().to_string();
    let base = [
        "bench",
        "tiny",
        "--rows",
        "ppo-cartpole",
        "--budget",
        "0.01",
        "--out",
        &out,
    ];
    // The tiny row runs seeds 0 and 1.
    let (code, _, stderr) = rlgraph(&[&base[..], &["--seed", "7"]].concat());
    assert_ne!(code, 0);
    assert!(
        stderr.contains("--seed 7: row ppo-cartpole runs seeds [0, 1], not 7"),
        "{stderr}"
    );
    assert!(!dir.join("ppo-cartpole").exists(), "nothing ran");
    let (code, _, stderr) = rlgraph(&[&base[..], &["--seed", "1"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.join("ppo-cartpole/seed-1/summary.json").is_file());
    assert!(!dir.join("ppo-cartpole/seed-0").exists(), "only seed 1 ran");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_suites_are_refused_before_any_run_and_failed_runs_are_reported() {
    let (code, _, stderr) = rlgraph(&["bench", "atari-everything"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("no suite \"atari-everything\"")
            && stderr.contains("atari, box2d, classic, minatar, mujoco, tiny"),
        "{stderr}"
    );
    let (code, _, stderr) = rlgraph(&["bench", "tiny", "--rows", "sac-cartpole"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("no row \"sac-cartpole\"") && stderr.contains("ppo-cartpole, dqn-cartpole"),
        "{stderr}"
    );
    let (code, _, stderr) = rlgraph(&["bench", "tiny", "--budget", "1.5"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--budget"), "{stderr}");

    let dir = std::env::temp_dir().join(format!("rlgraph-bench-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().to_string()
    };
    // A seed twice, and a last evaluation round short of the end, are refused by place.
    for (row, needle) in [
        (
            r#""seeds": [0, 0], "eval_every": 100"#,
            "rows[0].seeds: seed 0 is given twice",
        ),
        (
            r#""seeds": [0], "eval_every": 30"#,
            "rows[0].eval_every: 100 steps are not whole intervals of 30",
        ),
    ] {
        let suite = write(
            "shape.json",
            &format!(
                r#"{{"name": "shape", "rows": [{{"name": "r", "config": "configs/benchmarks/classic/dqn-cartpole.json",
                    "env": "CartPole-v1", "timesteps": 100, {row}}}]}}"#
            ),
        );
        let (code, _, stderr) = rlgraph(&["bench", &suite]);
        assert_ne!(code, 0);
        assert!(stderr.contains(needle), "{stderr}");
    }
    // A DQN config for a continuous action space does not build: refused, nothing runs.
    let suite = write(
        "bad.json",
        r#"{"name": "bad", "rows": [
            {"name": "ok", "config": "configs/benchmarks/classic/dqn-cartpole.json", "env": "CartPole-v1",
             "timesteps": 100, "seeds": [0], "eval_every": 100},
            {"name": "dqn-pendulum", "config": "configs/benchmarks/classic/dqn-cartpole.json", "env": "Pendulum-v1",
             "timesteps": 100, "seeds": [0], "eval_every": 100}]}"#,
    );
    let out = dir.join("bad-out");
    let (code, _, stderr) = rlgraph(&["bench", &suite, "--out", &out.to_string_lossy()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("row dqn-pendulum") && !stderr.contains("row ok"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused suite wrote {}", out.display());

    // Greedy rounds on an environment of other spaces are refused by both ids.
    let suite = write(
        "eval.json",
        r#"{"name": "eval", "rows": [
            {"name": "mixed", "config": "configs/benchmarks/classic/dqn-cartpole.json", "env": "CartPole-v1",
             "eval_env": "MountainCar-v0", "timesteps": 100, "seeds": [0], "eval_every": 100}]}"#,
    );
    let (code, _, stderr) = rlgraph(&["bench", &suite, "--out", &dir.join("eval-out").to_string_lossy()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("row mixed: eval_env \"MountainCar-v0\" has other spaces than env \"CartPole-v1\""),
        "{stderr}"
    );

    // Adam at learning rate 1e300 diverges at its first update: that run fails, is reported
    // with its error, and the next row still runs.
    let shipped = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/benchmarks/classic/ppo-cartpole.json"
    );
    let mut diverging: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(shipped).unwrap()).unwrap();
    diverging["optimizer_spec"] = serde_json::json!({"type": "adam", "learning_rate": 1e300});
    let config = write("diverging.json", &diverging.to_string());
    let suite = write(
        "failing.json",
        &serde_json::json!({"name": "failing", "rows": [
            {"name": "diverging", "config": config, "env": "CartPole-v1", "timesteps": 3000, "seeds": [0], "eval_every": 1000, "eval_episodes": 2},
            {"name": "fine", "config": "configs/benchmarks/classic/dqn-cartpole.json", "env": "CartPole-v1",
             "timesteps": 500, "seeds": [0], "eval_every": 500, "eval_episodes": 2}]})
        .to_string(),
    );
    let out = dir.join("failing-out");
    let (code, stdout, stderr) = rlgraph(&["bench", &suite, "--out", &out.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["rows"][0]["finished"], 0, "{summary}");
    assert_eq!(summary["rows"][1]["finished"], 1, "{summary}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("seed 0 failed:") && report.contains("diverged"),
        "{report}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_suite_runs_in_pieces_and_a_resumed_run_equals_a_straight_one() {
    let root = std::env::temp_dir().join(format!("rlgraph-bench-pieces-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (pieces, straight) = (root.join("pieces"), root.join("straight"));
    let bench = |out: &Path, extra: &[&str]| {
        let mut args = vec!["bench", "tiny", "--rows", "dqn-cartpole", "--out"];
        let out = out.to_string_lossy().to_string();
        args.push(&out);
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = rlgraph(&args);
        assert_eq!(code, 0, "{stderr}");
        (serde_json::from_str::<serde_json::Value>(&stdout).unwrap(), stderr)
    };
    let run = |dir: &Path| dir.join("dqn-cartpole/seed-0");

    // The first piece stops at step 1,000 of 2,000: one round, a checkpoint, and a row that
    // says it is paused and matches nothing.
    let (summary, _) = bench(&pieces, &["--pause-at", "1000"]);
    let row = &summary["rows"][0];
    assert!(row["paused"] == 1 && row["matches"].is_null(), "{row}");
    assert_eq!(curve(&run(&pieces).join("curve.csv")).len(), 1);
    assert!(run(&pieces).join("checkpoint.safetensors").is_file());
    let report = std::fs::read_to_string(pieces.join("report.html")).unwrap();
    assert!(
        report.contains("(1 paused)") && report.contains("seed 0 paused at step 1000 of 2000"),
        "{report}"
    );
    let first = seconds(&run(&pieces).join("curve.csv"));

    // The second piece continues from the checkpoint to the end and drops it.
    let (summary, stderr) = bench(&pieces, &["--resume"]);
    assert!(
        stderr.contains("dqn-cartpole seed 0: resuming from its checkpoint at step 1000"),
        "{stderr}"
    );
    assert_eq!(summary["rows"][0]["paused"], 0);
    assert!(!run(&pieces).join("checkpoint.safetensors").exists());
    let resumed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run(&pieces).join("summary.json")).unwrap()).unwrap();
    assert_eq!(resumed["resumed_at_timestep"], 1000);
    // The first round is kept as it was; wall seconds count on from it.
    let both = seconds(&run(&pieces).join("curve.csv"));
    assert_eq!((both.len(), both[0]), (2, first[0]));
    assert!(both[1].1 >= both[0].1, "{both:?}");

    // Paused and resumed, the run plays the same rounds as one run straight through (the
    // checkpoint holds the agent, its replay, the environments and the RNGs).
    bench(&straight, &[]);
    assert_eq!(
        curve(&run(&pieces).join("curve.csv")),
        curve(&run(&straight).join("curve.csv"))
    );

    // A third sitting keeps the finished run as it is.
    let (_, stderr) = bench(&pieces, &["--resume"]);
    assert!(stderr.contains("finished earlier, kept"), "{stderr}");
    assert_eq!(seconds(&run(&pieces).join("curve.csv")), both);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn every_shipped_suite_loads_and_the_minatar_and_atari_rows_build_step_and_pause() {
    // Every suite in configs/benchmarks/ reads, and every row's config is there.
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let suites = root.join("configs/benchmarks");
    let mut names = vec![];
    for entry in std::fs::read_dir(&suites).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let suite: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for row in suite["rows"].as_array().unwrap() {
                let config = root.join(row["config"].as_str().unwrap());
                assert!(config.is_file(), "{}: no {}", path.display(), config.display());
            }
            names.push(suite["name"].as_str().unwrap().to_string());
        }
    }
    names.sort();
    assert_eq!(names, ["atari", "box2d", "classic", "minatar", "mujoco", "tiny"]);

    // The MinAtar DQN rows play the reference's action set: its examples/dqn.py acts through
    // `minatar.Environment`, whose `num_actions()` is 6 for every game (the `-v0` ids), not
    // the minimal sets of the `-v1` ids.
    let minatar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("configs/benchmarks/minatar.json")).unwrap()).unwrap();
    for row in minatar["rows"].as_array().unwrap() {
        if row["name"].as_str().unwrap().starts_with("dqn-") {
            assert!(row["env"].as_str().unwrap().ends_with("-v0"), "{row}");
        }
    }

    // The MinAtar DQN rows (the reference's settings) build for each game, act at random
    // through the 5,000-frame warm-up, learn 100 updates and pause with a checkpoint.
    let out = std::env::temp_dir().join(format!("rlgraph-bench-minatar-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let rows = "dqn-asterix-2m,dqn-breakout-2m,dqn-freeway-2m,dqn-seaquest-2m,dqn-space-invaders-2m";
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args([
            "bench",
            "minatar",
            "--rows",
            rows,
            "--seeds",
            "1",
            "--pause-at",
            "5100",
            "--out",
        ])
        .arg(&out)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for row in summary["rows"].as_array().unwrap() {
        let run = out.join(row["row"].as_str().unwrap()).join("seed-1");
        let steps: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
        assert_eq!(steps["paused_at_timestep"], 5100, "{steps}");
        // One update per frame after the warm-up (the first at frame 5,000).
        assert_eq!(steps["updates"], 101, "{steps}");
    }
    assert_eq!(summary["rows"].as_array().unwrap().len(), 5, "{summary}");
    std::fs::remove_dir_all(&out).unwrap();

    // The Atari rows (ale-py through the bridge) build for their games, step 304 times each
    // and pause with a checkpoint: what a GPU machine's first piece starts from. PPO then
    // holds 304 frame stacks, which as JSON overflowed the checkpoint's header.
    let Some(python) = crate::common::python() else {
        return;
    };
    let out = std::env::temp_dir().join(format!("rlgraph-bench-atari-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args([
            "bench",
            "atari",
            "--seeds",
            "1",
            "--pause-at",
            "304",
            "--bridge-processes",
            "1",
            "--out",
        ])
        .arg(&out)
        .current_dir(root)
        .env("RLGRAPH_PYTHON", python)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = summary["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{summary}");
    for row in rows {
        assert!(row["paused"] == 1 && row["matches"].is_null(), "{row}");
        let run = out.join(row["row"].as_str().unwrap()).join("seed-1");
        assert!(run.join("checkpoint.safetensors").is_file(), "{}", run.display());
        let steps: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
        assert_eq!(steps["paused_at_timestep"], 304, "{steps}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}
