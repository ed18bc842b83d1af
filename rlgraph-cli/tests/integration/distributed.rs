//! Ape-X as separate processes on loopback: `rlgraph launch` with two actors, one replay
//! shard and a learner learns CartPole; an actor killed with SIGKILL and restarted rejoins
//! from the learner's current weights and the run still learns. Every process is bounded in
//! time and killed if the test fails. IMPALA, with and without an LSTM, learns the grid world
//! across processes; TD3, registered as a user's algorithm is, learns Pendulum on the same
//! roles. Roles whose launcher is killed with SIGKILL end too.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::common::cluster::{assert_learned, free_port, summary_of, Cluster};
use crate::common::roles::{finish, Guard};
use crate::learner_log::assert_replays_to;

const RLGRAPH: &str = env!("CARGO_BIN_EXE_rlgraph");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// `rlgraph launch` of the CartPole Ape-X config with `--emit kind`, to be given its options.
fn emit_command(kind: &str) -> Command {
    let mut cmd = Command::new(RLGRAPH);
    cmd.current_dir(ROOT).args([
        "launch",
        "configs/apex-cartpole.json",
        "--env",
        "CartPole-v1",
        "--emit",
        kind,
    ]);
    cmd
}

/// The short Ape-X run the TLS and Slurm tests launch: two actors, one shard, 2,000 frames.
const SHORT_RUN: [&str; 8] = [
    "--actors",
    "2",
    "--replay-shards",
    "1",
    "--timesteps",
    "2000",
    "--seed",
    "3",
];

/// Runs `rlgraph launch CONFIG --env ENV ARGS --out DIR` (at most 300 s), asserts every
/// process it started ended well, and returns the learner's summary.
fn launch(config: &str, env: &str, args: &[&str], dir: &Path) -> Json {
    let _ = std::fs::remove_dir_all(dir);
    let child = Command::new(RLGRAPH)
        .current_dir(ROOT)
        .args(["launch", config, "--env", env])
        .args(args)
        .arg("--out")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = finish(child, Duration::from_secs(300));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let summary: Json = serde_json::from_slice(&out.stdout).unwrap();
    for (name, exit) in summary["launch"]["exits"].as_object().unwrap() {
        assert_eq!(exit, "exit status: 0", "{name}");
    }
    summary
}

#[test]
fn ape_x_with_two_actor_processes_and_a_replay_shard_learns_cartpole() {
    let dir = std::env::temp_dir().join(format!("rlgraph-launch-test-{}", std::process::id()));
    let args = [
        "--actors",
        "2",
        "--replay-shards",
        "1",
        "--timesteps",
        "8000",
        "--seed",
        "1",
        "--eval-every",
        "2000",
        "--eval-episodes",
        "3",
    ];
    let summary = launch("configs/apex-cartpole.json", "CartPole-v1", &args, &dir);
    assert_learned(&dir, &summary);
    // The learner played a greedy round between two updates after the run's frames passed
    // each multiple of 2,000 (not at 8,000: the run ends there), one per multiple.
    let rounds: Vec<(u64, f64)> = summary["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["timestep"].as_u64().unwrap(), r["mean_return"].as_f64().unwrap()))
        .collect();
    let multiples: Vec<u64> = rounds.iter().map(|(t, _)| t / 2000).collect();
    assert_eq!(multiples, [1, 2, 3], "{summary}");
    assert!(rounds.iter().all(|(_, r)| (8.0..=500.0).contains(r)), "{summary}");
    // The learner runs through the same driver as `rlgraph train`: the rounds, every
    // episode, the loss and the learner's own gauges reach TensorBoard.
    for tag in [
        "eval/return",
        "episode/return",
        "train/loss",
        "distributed/weight_lag_updates",
    ] {
        assert!(crate::common::events_have(&dir, tag), "{tag} is in TensorBoard");
    }
    let episodes = std::fs::read_to_string(dir.join("episodes.csv")).unwrap();
    assert_eq!(
        episodes.lines().count() as u64,
        summary["episodes_executed"].as_u64().unwrap() + 1,
        "a header and a line per episode"
    );
    let d = &summary["distributed"];
    assert_eq!(d["actors"], 2, "{summary}");
    let shard = &d["shards"][0];
    // Every frame becomes a 3-step record once its episode or the next 3 frames are done.
    assert!(shard["records_inserted"].as_u64().unwrap() >= 7000, "{summary}");
    assert_eq!(shard["refused"], 0);
    assert_eq!(
        shard["priority_updates"].as_u64().unwrap() + d["priority_updates_dropped"].as_u64().unwrap(),
        summary["updates"].as_u64().unwrap(),
        "every update's priorities reached the shard or were counted as dropped: {summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_launch_over_mutual_tls_runs_on_the_files_rlgraph_certs_makes() {
    let dir = std::env::temp_dir().join(format!("rlgraph-tls-launch-{}", std::process::id()));
    let certs = dir.with_extension("certs");
    let _ = std::fs::remove_dir_all(&certs);
    let make = || {
        Command::new(RLGRAPH)
            .args(["certs", "--out"])
            .arg(&certs)
            .output()
            .unwrap()
    };
    let made = make();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let files: Json = serde_json::from_slice(&made.stdout).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let key = std::fs::metadata(certs.join("key.pem")).unwrap();
        assert_eq!(key.permissions().mode() & 0o777, 0o600, "the key is its owner's only");
    }
    let again = make();
    assert!(!again.status.success(), "files already there are not replaced");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    let path = |key: &str| files[key].as_str().unwrap().to_string();
    let (cert, key, ca) = (path("tls_cert"), path("tls_key"), path("tls_ca"));
    let tls = ["--tls-cert", &cert, "--tls-key", &key, "--tls-ca", &ca];
    let summary = launch(
        "configs/apex-cartpole.json",
        "CartPole-v1",
        &[&SHORT_RUN[..], &tls[..]].concat(),
        &dir,
    );
    assert!(summary["timesteps_executed"].as_u64().unwrap() >= 2000, "{summary}");
    assert!(summary["updates"].as_u64().unwrap() > 0, "{summary}");
    // Records crossed to the shard and batches back to the learner over mutual TLS; how many
    // arrived before the short run ended depends on the machine's load (the count of every
    // frame's record is the plain-text run's test, above).
    let shard = &summary["distributed"]["shards"][0];
    assert!(shard["records_inserted"].as_u64().unwrap() > 0, "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&certs).unwrap();
}

#[test]
fn an_actor_killed_with_sigkill_rejoins_from_the_current_weights_and_the_run_still_learns() {
    let cluster = Cluster::new("actor-kill", 1, 2);
    let out = cluster.dir.join("out");
    let _replay = cluster.serve("replay", 0, &[]);
    let (learner, progress) = cluster.learner(&["--out", out.to_str().unwrap()]);
    let _other = cluster.serve("actor", 1, &[]);
    let mut victim = cluster.serve("actor", 0, &[]);
    // Let the run get going, then kill actor 0 without warning.
    progress.wait_for_frames(4000);
    victim.kill();
    std::thread::sleep(Duration::from_millis(200));
    let restarted = cluster.serve("actor", 0, &[]);

    let summary = summary_of(learner);
    assert_learned(&out, &summary);
    let actor = finish(restarted.into_child(), Duration::from_secs(30));
    assert!(actor.status.success(), "the restarted actor ends when the run does");
    let actor: Json = serde_json::from_slice(&actor.stdout).unwrap();
    assert!(
        actor["first_version"].as_u64().unwrap() > 1,
        "the restarted actor started from the learner's current weights: {actor}"
    );
    assert!(actor["records_sent"].as_u64().unwrap() > 0, "{actor}");
}

#[test]
fn records_held_while_no_shard_answers_reach_a_late_shard_even_while_the_actors_are_paused() {
    // The learner pauses actors 1,000 frames past its next update (`--max-frames-ahead`), and
    // it cannot update before the shard holds records. Started without a shard, the actors
    // step until the learner pauses them at 1,500 frames, holding every record in their
    // outboxes: they must keep sending those while paused, or the run waits forever.
    let cluster = Cluster::new("late-shard", 1, 5);
    let out = cluster.dir.join("out");
    let (learner, progress) = cluster.learner(&["--out", out.to_str().unwrap()]);
    let _actors = [cluster.serve("actor", 0, &[]), cluster.serve("actor", 1, &[])];
    progress.wait_for_frames(1500);
    assert!(
        progress.figures().iter().all(|&(_, _, updates)| updates == 0),
        "no update without a shard"
    );
    let _replay = cluster.serve("replay", 0, &[]);
    progress.wait_for_frames(4000);
    let summary = summary_of(learner);
    assert_learned(&out, &summary);
}

#[test]
fn a_replay_shard_killed_leaves_the_run_learning_from_the_other() {
    let cluster = Cluster::new("shard-kill", 2, 4);
    let out = cluster.dir.join("out");
    let mut victim = cluster.serve("replay", 1, &[]);
    let _others = [
        cluster.serve("replay", 0, &[]),
        cluster.serve("actor", 0, &[]),
        cluster.serve("actor", 1, &[]),
    ];
    let (learner, progress) = cluster.learner(&["--out", out.to_str().unwrap()]);
    progress.wait_for_frames(4000);
    victim.kill();

    let summary = summary_of(learner);
    assert_learned(&out, &summary);
    // Only the shard still alive answered the learner's last call.
    assert_eq!(
        summary["distributed"]["shards"].as_array().unwrap().len(),
        1,
        "{summary}"
    );
}

#[test]
fn a_learner_killed_and_restarted_resumes_from_its_checkpoint_and_the_run_still_learns() {
    let cluster = Cluster::new("learner-kill", 1, 3);
    let out = cluster.dir.join("out");
    let out_arg = out.to_str().unwrap();
    let _replay = cluster.serve("replay", 0, &[]);
    let actors = [cluster.serve("actor", 0, &[]), cluster.serve("actor", 1, &[])];
    // Both learners record into one log, which replays across the kill.
    let log = cluster.dir.join("log");
    let eval = [
        "--eval-every",
        "1000",
        "--eval-episodes",
        "2",
        "--record",
        log.to_str().unwrap(),
    ];
    let (mut learner, progress) =
        cluster.learner(&[&["--out", out_arg, "--checkpoint-every", "50"][..], &eval].concat());
    // Kill the learner once it has saved a checkpoint and gone on a little.
    let checkpoint = out.join("checkpoint.safetensors");
    let start = Instant::now();
    while !checkpoint.exists() {
        assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint within 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    progress.wait_for_frames(4000);
    learner.kill();
    let restarted = cluster.serve(
        "learner",
        0,
        &[
            &["--resume", out_arg, "--out", out_arg, "--checkpoint-every", "50"][..],
            &eval,
        ]
        .concat(),
    );

    let summary = summary_of(restarted);
    let resumed = summary["distributed"]["resumed_at_update"].as_u64();
    assert!(resumed.is_some_and(|u| u >= 50), "{summary}");
    assert!(summary["updates"].as_u64().unwrap() > resumed.unwrap(), "{summary}");
    assert_learned(&out, &summary);
    // The rounds saved with the checkpoint came back with it: the resumed learner counts on
    // from the checkpoint's frames, replays only the multiples passed after it, and the run
    // ends with at most one round per multiple of 1,000 frames.
    let multiples: Vec<u64> = summary["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["timestep"].as_u64().unwrap() / 1000)
        .collect();
    assert!(
        multiples.len() >= 3 && multiples.windows(2).all(|w| w[0] < w[1]),
        "{summary}"
    );
    // The actors reconnected to the new learner and ended with the run.
    for actor in actors {
        assert!(finish(actor.into_child(), Duration::from_secs(30)).status.success());
    }
    // The killed learner's records after its last checkpoint are undone in the replay as the
    // restart undid them: the replay ends with the restarted learner's checkpoint.
    let replayed = assert_replays_to(&log, &cluster.dir.join("replayed"), &out, &summary);
    assert_eq!(replayed["processes"], 2, "{replayed}");
}

#[test]
fn a_learner_given_sigterm_saves_leaves_actors_and_shards_running_and_its_successor_resumes() {
    // Long enough that the signal lands mid-run on a fast machine (some 24,000 frames/s).
    let cluster = Cluster::new("learner-term", 1, 3).with_frames(150_000);
    let out = cluster.dir.join("out");
    let out_arg = out.to_str().unwrap();
    let options = ["--out", out_arg, "--resume-if-present", "--checkpoint-every", "100000"];
    let mut replay = cluster.serve("replay", 0, &[]);
    let mut actors = [cluster.serve("actor", 0, &[]), cluster.serve("actor", 1, &[])];
    // No checkpoint yet: --resume-if-present starts the run afresh.
    let (learner, progress) = cluster.learner(&options);
    progress.wait_for_frames(4000);
    learner.terminate();
    let first = summary_of(learner);
    assert_eq!(first["distributed"]["preempted"], true, "{first}");
    assert_eq!(first["distributed"]["resumed_at_update"], Json::Null, "{first}");
    let (frames, updates) = (
        first["timesteps_executed"].as_u64().unwrap(),
        first["updates"].as_u64().unwrap(),
    );
    assert!((4000..150_000).contains(&frames) && updates > 0, "{first}");
    // The run is not over: the shard and the actors wait for the next learner.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(replay.running(), "the shard was left running");
    assert!(actors.iter_mut().all(Guard::running), "the actors were left running");

    // It saved where it stopped (no periodic checkpoint came before: every 100,000 updates),
    // and the next learner, with the same command line, goes on from there.
    let (learner, _) = cluster.learner(&options);
    let summary = summary_of(learner);
    assert_eq!(
        summary["distributed"]["resumed_at_update"].as_u64(),
        Some(updates),
        "{summary}"
    );
    assert_eq!(summary["resumed_at_timestep"].as_u64(), Some(frames), "{summary}");
    assert_eq!(summary["distributed"]["preempted"], false, "{summary}");
    assert!(summary["timesteps_executed"].as_u64().unwrap() >= 150_000, "{summary}");
    assert_learned(&out, &summary);
    for actor in actors {
        assert!(finish(actor.into_child(), Duration::from_secs(30)).status.success());
    }
    assert!(finish(replay.into_child(), Duration::from_secs(30)).status.success());
}

#[test]
fn sixty_four_actor_processes_keep_the_replay_ratio_learn_cartpole_and_hold_their_memory() {
    // 64 actors, one shard and a learner: 66 processes on loopback. The shard fills its
    // 10,000 records by about 12,000 frames; from 25,000 frames on every role's memory stays
    // where it is.
    const ACTORS: usize = 64;
    let cluster = Cluster::new("sixty-four", 1, 13)
        .with_actors(ACTORS)
        .with_frames(60_000);
    let out = cluster.dir.join("out");
    let mut roles = vec![cluster.serve("replay", 0, &[])];
    let (learner, progress) = cluster.learner(&["--out", out.to_str().unwrap()]);
    roles.extend((0..ACTORS).map(|i| cluster.serve("actor", i, &[])));
    progress.wait_for_frames(25_000);
    let middle: Vec<u64> = std::iter::once(&learner)
        .chain(&roles)
        .map(Guard::resident_kib)
        .collect();
    progress.wait_for_frames(55_000);
    let late: Vec<u64> = std::iter::once(&learner)
        .chain(&roles)
        .map(Guard::resident_kib)
        .collect();
    for (i, (m, l)) in middle.iter().zip(&late).enumerate() {
        // 8 MiB of slack for the allocator's own variation.
        assert!(*l <= m + m / 4 + 8 * 1024, "process {i} grew from {m} KiB to {l} KiB");
    }

    let summary = summary_of(learner);
    assert_eq!(
        summary["distributed"]["actors"], ACTORS,
        "every actor reported: {summary}"
    );
    // The config's replay ratio (one update per 4 frames after the first 500) held: never
    // more updates than it allows, and the learner kept up with at least 85% of them (the
    // actors' lead, 1,000 frames, and 64 actors' unreported frames are the rest).
    let frames = summary["timesteps_executed"].as_u64().unwrap();
    let updates = summary["updates"].as_u64().unwrap();
    let due = (frames - 500) / 4 + 1;
    assert!(
        updates <= due && updates * 100 >= due * 85,
        "{updates} updates for {due} due: {summary}"
    );
    assert_learned(&out, &summary);
    eprintln!(
        "64 actors: {frames} frames at {:.0}/s, {updates} of {due} updates due, best return {}, \
         resident KiB at 25,000 and 55,000 frames: learner {} -> {}, shard {} -> {}, largest actor {} -> {}",
        summary["env_frames_per_second"].as_f64().unwrap(),
        summary["max_episode_reward"],
        middle[0],
        late[0],
        middle[1],
        late[1],
        middle[2..].iter().max().unwrap(),
        late[2..].iter().max().unwrap(),
    );
    for role in roles {
        assert!(finish(role.into_child(), Duration::from_secs(60)).status.success());
    }
}

#[test]
fn impala_with_two_actor_processes_learns_the_grid_world() {
    let dir = std::env::temp_dir().join(format!("rlgraph-impala-test-{}", std::process::id()));
    let log = dir.join("log");
    let args = [
        "--actors",
        "2",
        "--timesteps",
        "6000",
        "--seed",
        "0",
        "--record",
        log.to_str().unwrap(),
    ];
    let summary = launch("configs/impala-gridworld-2x2.json", "GridWorld-2x2", &args, &dir);
    // RLgraph's threshold for IMPALA on the 2x2 grid world, as the single-process test.
    assert!(summary["mean_episode_reward"].as_f64().unwrap() > -0.1, "{summary}");
    // Each update takes 4 rollouts of 8 steps: about one per 32 frames (the frames of the
    // rollouts still queued or partial at the end are counted but not learned from).
    let updates = summary["updates"].as_u64().unwrap();
    assert!((150..=200).contains(&updates), "{summary}");
    assert_eq!(summary["distributed"]["actors"], 2, "{summary}");
    assert_eq!(summary["distributed"]["rollouts_refused"], 0, "{summary}");
    // Recorded, the run replays in one process to the learner's checkpoint bytes: the
    // rollouts in the order the learner took them, a publication after every update.
    let replay_dir = std::env::temp_dir().join(format!("rlgraph-impala-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&replay_dir);
    let replayed = assert_replays_to(&log, &replay_dir, &dir, &summary);
    assert_eq!(replayed["publications"].as_u64(), Some(updates + 1), "{replayed}");
    // Before each update, the versions its 4 rollouts were acted with: each one the learner
    // had published by then.
    use executors::input_log::{read_log, LogRecord};
    let (mut published, mut batches) = (0, 0);
    for logged in read_log(&log).unwrap().0 {
        match logged.record {
            LogRecord::Published { version, .. } => published = version,
            LogRecord::ActedWith { versions } => {
                assert_eq!(versions.len(), 4);
                assert!(versions.iter().all(|v| (1..=published).contains(v)), "{versions:?}");
                batches += 1;
            }
            _ => {}
        }
    }
    assert_eq!(batches, updates);
    std::fs::remove_dir_all(&replay_dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn recurrent_impala_with_two_actor_processes_learns_the_grid_world() {
    // The same run with an LSTM after the dense layer: each actor carries its copies' memories,
    // and every rollout crosses the wire with the memory its first step was acted from and
    // where episodes start in it, so the learner unrolls it as the actor stepped.
    let dir = std::env::temp_dir().join(format!("rlgraph-impala-lstm-test-{}", std::process::id()));
    let text = std::fs::read_to_string(format!("{ROOT}/configs/impala-gridworld-2x2.json")).unwrap();
    let mut config: Json = serde_json::from_str(&text).unwrap();
    config["network_spec"]["layers"] = serde_json::json!([
        {"type": "dense", "units": 16, "activation": "tanh", "scope": "hidden"},
        {"type": "lstm", "units": 16, "scope": "lstm"}
    ]);
    let path = std::env::temp_dir().join(format!("rlgraph-impala-lstm-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let args = ["--actors", "2", "--timesteps", "6000", "--seed", "0"];
    let summary = launch(path.to_str().unwrap(), "GridWorld-2x2", &args, &dir);
    assert!(summary["mean_episode_reward"].as_f64().unwrap() > -0.1, "{summary}");
    assert!(summary["updates"].as_u64().unwrap() >= 150, "{summary}");
    assert_eq!(summary["distributed"]["rollouts_refused"], 0, "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn td3_registered_as_a_users_algorithm_would_be_learns_pendulum_on_actor_processes_and_a_replay_shard() {
    // TD3 reaches the distributed roles only through `register_distributed_algorithm`, as a
    // user's algorithm would: actors feed one-step transitions to a uniform replay shard.
    let dir = std::env::temp_dir().join(format!("rlgraph-td3-launch-test-{}", std::process::id()));
    let dense = |scope: &str| serde_json::json!({"type": "dense", "units": 64, "activation": "relu", "scope": scope});
    let config = serde_json::json!({
        "type": "td3",
        "discount": 0.98,
        "memory_spec": {"type": "replay", "capacity": 20000},
        "network_spec": [dense("hidden1"), dense("hidden2")],
        "value_function_spec": [dense("vf-hidden1"), dense("vf-hidden2")],
        "update_spec": {"steps_before_update": 1000, "batch_size": 64}
    });
    let path = std::env::temp_dir().join(format!("rlgraph-td3-launch-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let args = [
        "--actors",
        "2",
        "--replay-shards",
        "1",
        "--timesteps",
        "20000",
        "--seed",
        "2",
        "--eval-every",
        "9000",
        "--eval-episodes",
        "5",
    ];
    let summary = launch(path.to_str().unwrap(), "Pendulum-v1", &args, &dir);
    let frames = summary["timesteps_executed"].as_u64().unwrap();
    let d = &summary["distributed"];
    assert_eq!(d["actors"], 2, "{summary}");
    // Pendulum's episodes last 200 steps; each actor may end in the middle of one.
    let episodes = summary["episodes_executed"].as_u64().unwrap();
    assert!((frames / 200 - 2..=frames / 200).contains(&episodes), "{summary}");
    let shard = &d["shards"][0];
    // A one-step transition per frame, inserted in batches of 50: each actor holds back at
    // most one partial batch when the run ends.
    assert!(shard["records_inserted"].as_u64().unwrap() + 100 >= frames, "{summary}");
    assert_eq!(shard["refused"], 0, "{summary}");
    // A uniform memory: no priorities go back.
    assert_eq!(shard["priority_updates"], 0, "{summary}");
    // The config's replay ratio, one update per frame from frame 1,000, with the actors at
    // most 1,000 frames (`--max-frames-ahead`) and one report (50 frames each) ahead of it.
    let updates = summary["updates"].as_u64().unwrap();
    assert!(
        updates <= frames - 999 && updates + 1000 + 1000 + 2 * 50 >= frames,
        "{updates} updates for {frames} frames: {summary}"
    );
    // A uniformly random policy scores about -1,200 a Pendulum episode; swinging up and
    // holding scores above -200. Greedy after 18,000 frames it swings up (-150 to -210 in
    // four runs); the last episodes the actors played, exploring, are far above random too.
    let rounds = summary["evaluations"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{summary}");
    assert!(rounds[1]["mean_return"].as_f64().unwrap() > -400.0, "{summary}");
    assert!(
        summary["mean_episode_reward_last_10_episodes"].as_f64().unwrap() > -700.0,
        "{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn an_algorithm_that_cannot_run_across_processes_or_has_no_shards_is_refused_before_any_role_starts() {
    let refused = |args: &[&str]| {
        let out = Command::new(RLGRAPH).current_dir(ROOT).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = refused(&["launch", "configs/ppo-cartpole.json", "--env", "CartPole-v1"]);
    assert!(
        e.contains("config.type") && e.contains(r#""ppo" does not run across processes"#) && e.contains("sac"),
        "{e}"
    );
    let e = refused(&[
        "launch",
        "configs/impala-gridworld-2x2.json",
        "--env",
        "GridWorld-2x2",
        "--replay-shards",
        "1",
    ]);
    assert!(e.contains("--replay-shards") && e.contains("no replay shards"), "{e}");
}

/// A Slurm batch script from `rlgraph launch --emit slurm`, run as sbatch would run it on a
/// one-node allocation: Slurm's variables set by the test, `scontrol` and `srun` stood in for
/// by small scripts (srun starts its command once per task with SLURM_PROCID set). The roles
/// find each other through the cluster spec the script writes, and the run learns from
/// what the actors sent.
#[test]
fn an_emitted_slurm_script_runs_ape_x_under_slurms_variables() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("rlgraph-slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let write_exe = |name: &str, text: &str| {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write_exe(
        "scontrol",
        "#!/usr/bin/env bash\n[[ \"$1 $2 $3\" == \"show hostnames localhost\" ]] && echo localhost\n",
    );
    write_exe(
        "srun",
        "#!/usr/bin/env bash\nn=\"${1#--ntasks=}\"; shift\nfor ((i = 0; i < n; i++)); do SLURM_PROCID=$i \"$@\" & done\nwait\n",
    );
    let token = dir.join("token");
    std::fs::write(&token, "slurm-test-token\n").unwrap();
    // Two ports in a row, free when asked.
    let base = (0..50)
        .map(|_| free_port())
        .find(|p| TcpListener::bind(("127.0.0.1", p + 1)).is_ok())
        .unwrap();
    let emitted = emit_command("slurm")
        .args(SHORT_RUN)
        .args(["--base-port", &base.to_string()])
        .arg("--token-file")
        .arg(&token)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(emitted.status.success(), "{}", String::from_utf8_lossy(&emitted.stderr));
    let script = dir.join("run.sbatch");
    std::fs::write(&script, &emitted.stdout).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    // The script and every role it starts in one process group, killed when the test ends,
    // pass or fail (a killed bash runs no EXIT trap).
    use std::os::unix::process::CommandExt;
    let child = Command::new("bash")
        .arg(&script)
        .current_dir(&dir)
        .env("PATH", path)
        .env("RLGRAPH", RLGRAPH)
        .env("SLURM_JOB_NODELIST", "localhost")
        .env("SLURM_JOB_ID", "42")
        .env("SLURM_SUBMIT_DIR", &dir)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    struct Group(u32);
    impl Drop for Group {
        fn drop(&mut self) {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0)])
                .stderr(Stdio::null())
                .status();
        }
    }
    let _group = Group(child.id());
    let out = finish(child, Duration::from_secs(300));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let summary: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary["timesteps_executed"].as_u64().unwrap() >= 2000, "{summary}");
    assert!(summary["updates"].as_u64().unwrap() > 0, "{summary}");
    let shard = &summary["distributed"]["shards"][0];
    assert!(shard["records_inserted"].as_u64().unwrap() >= 1500, "{summary}");
    let cluster = std::fs::read_to_string(dir.join("rlgraph-cluster-42.json")).unwrap();
    // The roles found each other by the node's name, as a real node list gives it.
    assert!(cluster.contains(&format!("\"localhost:{base}\"")), "{cluster}");
    assert!(dir.join("out/checkpoint.safetensors").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `rlgraph launch --emit kubernetes`: manifests that Kubernetes' own schemas accept (checked
/// strictly with `kubernetes-validate`), one StatefulSet per role under a headless Service
/// whose DNS names make the cluster spec, gRPC probes on the servers, every role's index from
/// its pod's ordinal, and the token and TLS files from Secrets.
#[test]
fn emitted_kubernetes_manifests_validate_and_name_each_role_by_dns() {
    let Some(python) = crate::common::python() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("rlgraph-k8s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("token");
    std::fs::write(&token, "k8s-test-token\n").unwrap();
    let emit = |extra: &[&str]| {
        emit_command("kubernetes")
            .args([
                "--actors",
                "3",
                "--replay-shards",
                "2",
                "--timesteps",
                "5000",
                "--image",
                "registry.example/rlgraph:1",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // Without a token: refused, saying how to make the Secret.
    let refused = emit(&[]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("kubectl create secret generic rlgraph-token"));

    // The TLS files must exist: they go into the Secret rlgraph-tls.
    let certs = dir.join("tls");
    let made = Command::new(RLGRAPH)
        .args(["certs", "--out"])
        .arg(&certs)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let file = |name: &str| certs.join(name).to_string_lossy().into_owned();
    let (cert, key, ca) = (file("cert.pem"), file("key.pem"), file("ca.pem"));
    let tls = ["--tls-cert", &cert, "--tls-key", &key, "--tls-ca", &ca];
    let emitted = emit(
        &[
            &["--token-file", token.to_str().unwrap(), "--drain-secs", "30"][..],
            &tls[..],
        ]
        .concat(),
    );
    assert!(emitted.status.success(), "{}", String::from_utf8_lossy(&emitted.stderr));
    let manifests = dir.join("rlgraph.yaml");
    std::fs::write(&manifests, &emitted.stdout).unwrap();
    let validator = std::path::Path::new(&python).with_file_name("kubernetes-validate");
    let validated = Command::new(&validator)
        .arg("--strict")
        .arg(&manifests)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&validated.stdout);
    assert!(
        validated.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&validated.stderr)
    );
    assert_eq!(report.matches("passed").count(), 5, "{report}");

    let summary = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/manifests_summary.py"
        ))
        .arg(&manifests)
        .output()
        .unwrap();
    assert!(summary.status.success(), "{}", String::from_utf8_lossy(&summary.stderr));
    let m: Json = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(
        m["objects"],
        serde_json::json!([
            ["Service", "rlgraph"],
            ["ConfigMap", "rlgraph-config"],
            ["StatefulSet", "rlgraph-learner"],
            ["StatefulSet", "rlgraph-replay"],
            ["StatefulSet", "rlgraph-actor"]
        ])
    );
    assert_eq!(m["service"], serde_json::json!({"clusterIP": "None", "ports": [7100]}));
    // Pod N of StatefulSet S under Service rlgraph is S-N.rlgraph: the names the spec gives.
    assert_eq!(
        m["cluster"],
        serde_json::json!({
            "learner": ["rlgraph-learner-0.rlgraph:7100"],
            "replay": ["rlgraph-replay-0.rlgraph:7100", "rlgraph-replay-1.rlgraph:7100"],
            "actor": ["rlgraph-actor-0", "rlgraph-actor-1", "rlgraph-actor-2"]
        })
    );
    let config: Json =
        serde_json::from_str(&std::fs::read_to_string(format!("{ROOT}/configs/apex-cartpole.json")).unwrap()).unwrap();
    assert_eq!(m["config"], config);
    for (set, replicas, role) in [
        ("rlgraph-learner", 1, "learner"),
        ("rlgraph-replay", 2, "replay"),
        ("rlgraph-actor", 3, "actor"),
    ] {
        let s = &m["sets"][set];
        assert_eq!(
            (s["replicas"].as_u64(), s["serviceName"].as_str()),
            (Some(replicas), Some("rlgraph")),
            "{s}"
        );
        let command: Vec<&str> = s["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(
            command[..5],
            ["rlgraph", "serve", "/etc/rlgraph/config.json", "--role", role],
            "{s}"
        );
        let flag = |f: &str| command.iter().position(|w| *w == f).map(|i| command[i + 1]);
        assert_eq!(flag("--cluster"), Some("/etc/rlgraph/cluster.json"));
        assert_eq!(flag("--token-file"), Some("/etc/rlgraph-token/token"));
        assert_eq!(flag("--tls-ca"), Some("/etc/rlgraph-tls/ca.pem"));
        assert_eq!(flag("--timesteps"), Some("5000"));
        assert_eq!(flag("--index"), None, "the index comes from RLGRAPH_INDEX");
        assert_eq!(s["index_from"], "metadata.labels['apps.kubernetes.io/pod-index']");
        assert_eq!(s["secrets"], serde_json::json!(["rlgraph-tls", "rlgraph-token"]));
        let serves = role != "actor";
        let probe = serde_json::json!({"port": 7100});
        assert_eq!(s["readiness"] == probe && s["liveness"] == probe, serves, "{s}");
        assert_eq!(s["ports"] == serde_json::json!([7100]), serves, "{s}");
        // Kubernetes waits the drain and a minute to save before it kills a pod.
        assert_eq!(flag("--drain-secs"), Some("30"));
        assert_eq!(s["grace"], 90, "{s}");
        // A restarted learner or shard pod goes on from what it saved on its volume.
        assert_eq!(command.contains(&"--resume-if-present"), serves, "{command:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A process's parent, state and start time (in clock ticks since boot), from `/proc`;
/// `None` once it is gone.
#[cfg(target_os = "linux")]
fn proc_stat(pid: u32) -> Option<(u32, String, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ... starttime ...`; comm may hold spaces, so read after its
    // closing paren, where the state is field 3 and the start time field 22.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some((
        fields.get(1)?.parse().ok()?,
        fields.first()?.to_string(),
        fields.get(19)?.parse().ok()?,
    ))
}

/// Processes a test started through another, each named by its pid and start time (so a pid
/// the system hands out again is never taken for it), killed with SIGKILL when dropped if
/// still running: the test ends them, pass or fail.
#[cfg(target_os = "linux")]
struct Grandchildren(Vec<(u32, u64)>);

#[cfg(target_os = "linux")]
impl Grandchildren {
    /// The processes whose parent is `pid`, as pids and start times (not yet guarded: a
    /// partial set seen while the launcher is still starting its roles must not be killed).
    fn of(pid: u32) -> Vec<(u32, u64)> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|p| {
                proc_stat(p)
                    .filter(|(parent, ..)| *parent == pid)
                    .map(|(.., start)| (p, start))
            })
            .collect()
    }

    /// Those still running (a zombie waiting for its new parent to reap it is not).
    fn running(&self) -> Vec<u32> {
        self.0
            .iter()
            .filter(|&&(pid, start)| proc_stat(pid).is_some_and(|(_, state, s)| s == start && state != "Z"))
            .map(|&(pid, _)| pid)
            .collect()
    }
}

#[cfg(target_os = "linux")]
impl Drop for Grandchildren {
    fn drop(&mut self) {
        for pid in self.running() {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn roles_end_when_their_launcher_is_killed_with_sigkill() {
    // A fresh folder: a pid the system hands out again must not find an earlier run's files.
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("run");
    let stderr_path = scratch.path().join("launcher.stderr");
    let child = Command::new(RLGRAPH)
        .current_dir(ROOT)
        .args(["launch", "configs/apex-cartpole.json", "--env", "CartPole-v1"])
        .args(["--actors", "2", "--replay-shards", "1", "--timesteps", "100000000"])
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut launcher = Guard::new(child);
    // A shard, the learner and two actors.
    let began = Instant::now();
    let roles = loop {
        let roles = Grandchildren::of(pid);
        if roles.len() == 4 {
            break Grandchildren(roles);
        }
        if began.elapsed() > Duration::from_secs(60) {
            let state = proc_stat(pid).map(|(_, state, _)| state);
            let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            panic!("the launcher (state {state:?}) started {roles:?} in a minute; its stderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Let them connect and run, so they are killed mid-run rather than while starting.
    std::thread::sleep(Duration::from_secs(2));
    launcher.kill();
    let ended = Instant::now();
    while !roles.running().is_empty() {
        assert!(
            ended.elapsed() < Duration::from_secs(60),
            "roles {:?} outlived their launcher by a minute",
            roles.running()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
