//! The replay of a learner's input log (`executors::input_log::replay_log`): every loss and
//! publication checked against the log, the first that differs named by update, segment and
//! byte; and a log of another program version, backend or run, or an unrecorded resume,
//! refused by name.

use std::path::Path;

use backend_candle::Candle;
use executors::distributed::distributed_algorithm;
use executors::input_log::{replay_log, weights_crc, LogHeader, LogRecord, LogWriter, ReplayOptions, LOG_FORMAT};
use rand::SeedableRng;
use rlgraph_core::spaces::Space;
use serde_json::{json, Value as Json};

/// The shipped Ape-X CartPole config.
fn config() -> Json {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/apex-cartpole.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// CartPole's spaces.
fn spaces() -> (Space, Space) {
    let env = rlgraph_envs::make("CartPole-v1", 0).unwrap();
    (env.state_space().clone(), env.action_space().clone())
}

/// The header a log of this program and the config, seeded `seed`, starts with.
fn header(code_version: &str, seed: u64) -> LogHeader {
    let (s, a) = spaces();
    LogHeader {
        format: LOG_FORMAT,
        code_version: code_version.into(),
        config: config(),
        state_space: serde_json::to_value(&s).unwrap(),
        action_space: serde_json::to_value(&a).unwrap(),
        seed,
        backend: "candle".into(),
        layout: "distributed".into(),
    }
}

/// What a live learner of the config, seeded 7, does on two sampled batches: the records
/// its log would hold (a publication before and after).
fn live_records() -> Vec<LogRecord> {
    let (s, a) = spaces();
    let mut learner = distributed_algorithm::<Candle>(&config())
        .unwrap()
        .learner(&s, &a, 7)
        .unwrap();
    let records = agents::transition_space(&s, &a).unwrap().with_batch_rank(true);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut out = Vec::new();
    let first = learner.publish().unwrap();
    out.push(LogRecord::Published {
        version: first.version,
        weights_crc: weights_crc(&first),
    });
    for t in [0.25, 0.5] {
        let batch = records.sample(Some(32), &mut rng);
        let learned = learner.learn(&batch, t).unwrap();
        out.push(LogRecord::Learned {
            time_percentage: t,
            loss: learned.loss,
            updates: learner.updates(),
            batch,
        });
    }
    let last = learner.publish().unwrap();
    out.push(LogRecord::Published {
        version: last.version,
        weights_crc: weights_crc(&last),
    });
    out
}

/// Writes a process's records (one report where none are given: a process that logs
/// nothing leaves no segment).
fn write_log(dir: &Path, header: LogHeader, records: &[LogRecord]) {
    let report = [LogRecord::Reported {
        frames: 1,
        episode_returns: vec![],
    }];
    let records = if records.is_empty() { &report[..] } else { records };
    let mut w = LogWriter::open(dir, header, 1 << 20).unwrap();
    for r in records {
        w.append(r).unwrap();
    }
}

/// Options for a replay into a folder of its own under `dir`.
fn options(dir: &Path, check: bool) -> ReplayOptions {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ReplayOptions {
        checkpoint: dir.join(format!("out-{n}/checkpoint.safetensors")),
        until: None,
        check,
        config: None,
        code_version: "this".into(),
        allow_other_version: false,
    }
}

#[test]
fn a_replay_checks_every_loss_and_publication_and_names_the_first_that_differs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let live = live_records();
    write_log(&log, header("this", 7), &live);
    let outcome = replay_log::<Candle>(&log, &options(dir.path(), true)).unwrap();
    assert_eq!((outcome.updates, outcome.publications_checked), (2, 2));
    assert_eq!(outcome.first_loss_difference, None);

    // The second update's loss altered in the log: --check stops there, naming it.
    let mut altered = live.clone();
    if let LogRecord::Learned { loss, .. } = &mut altered[2] {
        *loss += 1e-6;
    }
    let other = dir.path().join("altered");
    write_log(&other, header("this", 7), &altered);
    let e = replay_log::<Candle>(&other, &options(dir.path(), true))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("update 2: the replayed loss") && e.contains("segment-000000.rlog at byte"),
        "{e}"
    );
    // Without --check the replay goes on and reports the first update that differed.
    let outcome = replay_log::<Candle>(&other, &options(dir.path(), false)).unwrap();
    assert_eq!(outcome.first_loss_difference, Some(2));

    // The last publication's checksum altered: the weights after update 2 are named.
    let mut altered = live;
    if let LogRecord::Published { weights_crc, .. } = &mut altered[3] {
        *weights_crc ^= 1;
    }
    let other = dir.path().join("weights");
    write_log(&other, header("this", 7), &altered);
    let e = replay_log::<Candle>(&other, &options(dir.path(), true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("update 2: the weights of version 2 differ"), "{e}");

    // A folder that holds a run's files is not written into.
    let used = options(dir.path(), false);
    replay_log::<Candle>(&log, &used).unwrap();
    let e = replay_log::<Candle>(&log, &used).unwrap_err().to_string();
    assert!(e.contains("already holds a run's files"), "{e}");
}

#[test]
fn another_program_version_backend_or_run_and_an_unrecorded_resume_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    write_log(&log, header("older", 7), &[]);
    let e = replay_log::<Candle>(&log, &options(dir.path(), false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("written by older, and this is this") && e.contains("--allow-other-version"),
        "{e}"
    );
    let allowed = ReplayOptions {
        allow_other_version: true,
        ..options(dir.path(), false)
    };
    let outcome = replay_log::<Candle>(&log, &allowed).unwrap();
    assert!(outcome.notes[0].contains("written by older"), "{:?}", outcome.notes);

    let tch = dir.path().join("tch");
    write_log(
        &tch,
        LogHeader {
            backend: "tch".into(),
            ..header("this", 7)
        },
        &[],
    );
    let e = replay_log::<Candle>(&tch, &options(dir.path(), false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the run learned on tch; another backend rounds differently"),
        "{e}"
    );

    // A second process of the same run that resumed from a checkpoint the log never saw.
    let resumed = dir.path().join("resumed");
    write_log(&resumed, header("this", 7), &[]);
    write_log(&resumed, header("this", 7), &[LogRecord::Resumed { updates: 5 }]);
    let e = replay_log::<Candle>(&resumed, &options(dir.path(), false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("segment-000001.rlog at byte") && e.contains("update 5"),
        "{e}"
    );
    // A log whose later process is of another run cannot be written, nor replayed.
    let e = LogWriter::open(&resumed, header("this", 8), 1 << 20)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("another seed"), "{e}");
    let json = json!({"not": "a config"});
    let e = replay_log::<Candle>(
        &resumed,
        &ReplayOptions {
            config: Some(json),
            ..options(dir.path(), false)
        },
    )
    .unwrap_err()
    .to_string();
    assert!(!e.is_empty());
}
