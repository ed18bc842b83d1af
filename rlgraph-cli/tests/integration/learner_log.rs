//! A distributed run recorded with `--record` and replayed by `rlgraph replay` in one process:
//! the replay ends with the live learner's checkpoint, byte for byte. Ape-X with two actor
//! processes and two replay shards here; IMPALA and a learner killed and restarted in
//! `distributed.rs`, beside the runs they record.

use std::path::Path;

use serde_json::Value as Json;

use crate::common::rlgraph;

/// `rlgraph replay LOG --out OUT EXTRA`: its summary, or its error.
pub fn replay(log: &Path, out: &Path, extra: &[&str]) -> Result<Json, String> {
    let (log, out) = (log.to_str().unwrap(), out.to_str().unwrap());
    let (code, stdout, stderr) = rlgraph(&[&["replay", log, "--out", out][..], extra].concat());
    match code {
        0 => Ok(serde_json::from_str(&stdout).unwrap()),
        _ => Err(stderr),
    }
}

/// Replays `log` with `--check` into `out` and asserts the replay ends with `run`'s
/// checkpoint bytes and the live learner's updates; the replay's summary.
pub fn assert_replays_to(log: &Path, out: &Path, run: &Path, summary: &Json) -> Json {
    let replayed = replay(log, out, &["--check"]).unwrap_or_else(|e| panic!("the replay failed: {e}"));
    assert_eq!(replayed["updates"], summary["updates"], "{replayed} {summary}");
    assert!(replayed["publications_checked"].as_u64().unwrap() > 0, "{replayed}");
    let live = std::fs::read(run.join("checkpoint.safetensors")).unwrap();
    let again = std::fs::read(out.join("checkpoint.safetensors")).unwrap();
    assert!(live == again, "the replay's checkpoint differs from the live learner's");
    replayed
}

#[test]
fn a_recorded_ape_x_run_with_two_actors_and_two_shards_replays_to_the_same_checkpoint_bytes() {
    let dir = std::env::temp_dir().join(format!("rlgraph-record-apex-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (run, log) = (dir.join("run"), dir.join("log"));
    let (code, stdout, stderr) = rlgraph(&[
        "launch",
        "configs/apex-cartpole.json",
        "--env",
        "CartPole-v1",
        "--actors",
        "2",
        "--replay-shards",
        "2",
        "--timesteps",
        "6000",
        "--seed",
        "5",
        "--eval-every",
        "1000",
        "--eval-episodes",
        "2",
        "--checkpoint-every",
        "40",
        "--out",
        run.to_str().unwrap(),
        "--record",
        log.to_str().unwrap(),
        "--record-segment-mib",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let summary: Json = serde_json::from_str(&stdout).unwrap();
    let updates = summary["updates"].as_u64().unwrap();
    assert!(updates > 40, "{summary}");
    let log_bytes = summary["distributed"]["log_bytes"].as_u64().unwrap();
    // 1 MiB segments: the log rolled over as it grew, each segment but the last full.
    let mut sizes: Vec<(std::path::PathBuf, u64)> = std::fs::read_dir(&log)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.path(), e.metadata().unwrap().len())
        })
        .filter(|(p, _)| p.extension().is_some_and(|x| x == "rlog"))
        .collect();
    sizes.sort();
    assert!(sizes.len() >= 2, "{log_bytes} bytes in {sizes:?}");
    assert!(sizes[..sizes.len() - 1].iter().all(|(_, n)| *n >= 1 << 20), "{sizes:?}");
    assert_eq!(
        sizes.iter().map(|(_, n)| n - 8).sum::<u64>(),
        log_bytes,
        "8 bytes of magic per segment"
    );

    // Both shards' batches, the evaluation rounds' publications and the periodic checkpoints
    // replay to the live learner's last checkpoint.
    let replayed = assert_replays_to(&log, &dir.join("replay"), &run, &summary);
    assert_eq!(replayed["frames"], summary["timesteps_executed"], "{replayed}");
    assert_eq!(replayed["processes"], 1);
    // The live learner's TensorBoard losses (one per progress report) are the replay's
    // (one per update), in order.
    let losses = |d: &Path| {
        let file = crate::common::event_file(d).unwrap();
        executors::tensorboard::read_scalars(&file, "train/loss").unwrap()
    };
    let (live, again) = (losses(&run), losses(&dir.join("replay")));
    assert_eq!(again.len() as u64, updates, "one loss per update");
    assert!(!live.is_empty());
    let mut rest = again.iter().map(|(_, x)| x.to_bits());
    assert!(
        live.iter().all(|(_, x)| rest.any(|y| y == x.to_bits())),
        "every live loss is among the replay's, in order: {live:?}"
    );

    // Never into the live run's folder (or any that holds a run's files).
    let e = replay(&log, &run, &[]).unwrap_err();
    assert!(e.contains("already holds a run's files"), "{e}");

    // Stopped at update 10: a checkpoint of a learner that has done 10 updates.
    let until = replay(&log, &dir.join("until"), &["--until", "10"]).unwrap();
    assert_eq!(until["updates"], 10, "{until}");
    let (header, _) = crate::common::safetensors_header(&dir.join("until/checkpoint.safetensors"));
    assert!(header.contains_key("__metadata__"));

    // The same experience through another learning rate: it runs and learns otherwise.
    let mut config: Json = serde_json::from_str(
        &std::fs::read_to_string(Path::new(crate::ROOT).join("configs/apex-cartpole.json")).unwrap(),
    )
    .unwrap();
    let lr = config["optimizer_spec"]["learning_rate"].as_f64().unwrap();
    config["optimizer_spec"]["learning_rate"] = (lr * 10.0).into();
    std::fs::write(dir.join("faster.json"), config.to_string()).unwrap();
    let other = replay(
        &log,
        &dir.join("other"),
        &["--config", dir.join("faster.json").to_str().unwrap()],
    )
    .unwrap();
    assert_eq!(other["updates"], summary["updates"], "{other}");
    assert!(
        std::fs::read(run.join("checkpoint.safetensors")).unwrap()
            != std::fs::read(dir.join("other/checkpoint.safetensors")).unwrap()
    );

    // A flipped byte in the middle of the first segment is refused by segment and offset.
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    for entry in std::fs::read_dir(&log).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, bad.join(path.file_name().unwrap())).unwrap();
    }
    let first = bad.join("segment-000000.rlog");
    let mut bytes = std::fs::read(&first).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&first, &bytes).unwrap();
    let e = replay(&bad, &dir.join("bad-out"), &[]).unwrap_err();
    assert!(
        e.contains("segment-000000.rlog at byte") && e.contains("checksum"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_recorded_ga3c_run_resumed_once_replays_to_its_checkpoint_bytes() {
    let dir = std::env::temp_dir().join(format!("rlgraph-record-ga3c-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (first, second, log) = (dir.join("first"), dir.join("second"), dir.join("log"));
    let leg = |frames: &str, extra: &[&str]| -> Json {
        let args = [
            &[
                "train",
                "configs/ga3c-actor-critic-cartpole.json",
                "--env",
                "CartPole-v1",
                "--timesteps",
                frames,
                "--seed",
                "4",
                "--eval-every",
                "1000",
                "--eval-episodes",
                "2",
                "--record",
                log.to_str().unwrap(),
            ][..],
            extra,
        ]
        .concat();
        let (code, stdout, stderr) = rlgraph(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    // Sixteen agent threads race for one predictor and one trainer: which segments meet in an
    // update is the threads' doing, and the log keeps the order the learner saw.
    leg("2000", &["--out", first.to_str().unwrap()]);
    let summary = leg(
        "4000",
        &[
            "--resume",
            first.to_str().unwrap(),
            "--out",
            second.to_str().unwrap(),
            "--checkpoint-every",
            "1000",
        ],
    );
    let replayed = replay(&log, &dir.join("replay"), &["--check"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replayed["updates"], summary["updates"], "{replayed}");
    assert_eq!(replayed["processes"], 2, "{replayed}");
    assert_eq!(replayed["frames"], summary["timesteps_executed"], "{replayed}");
    assert!(replayed["publications_checked"].as_u64().unwrap() > 1, "{replayed}");
    let live = std::fs::read(second.join("ga3c-checkpoint.safetensors")).unwrap();
    let again = std::fs::read(dir.join("replay/ga3c-checkpoint.safetensors")).unwrap();
    assert!(live == again, "the replay's checkpoint differs from the live learner's");
    // A log is one run's: a single-process run may not record.
    let (code, _, stderr) = rlgraph(&[
        "train",
        "configs/ppo-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "100",
        "--record",
        log.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("--record") && stderr.contains("one process"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
