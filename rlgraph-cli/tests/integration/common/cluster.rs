//! A cluster of `rlgraph serve` processes on loopback whose roles a test starts, kills and
//! restarts one by one, and what the tests read of a distributed run's output.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value as Json;

use super::roles::{finish, serve_command, Guard, Progress};

/// The returns of `episodes.csv` in `dir`.
pub fn returns(dir: &Path) -> Vec<f64> {
    std::fs::read_to_string(dir.join("episodes.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect()
}

/// DQN's CartPole threshold for a distributed run: RLgraph's best episode of at least 100,
/// and some 20 consecutive episodes in the run's second half averaging at least 50. A random
/// policy averages about 22 (a 20-episode mean of 50 is some ten standard deviations above
/// it), and DQN's curve on CartPole dips and recovers, so one window at the very end is a
/// single noisy sample: in CI a run that reached 102 once ended on a dip of 45 over its last
/// 20 episodes and 53 over its last 10.
pub fn assert_learned(dir: &Path, summary: &Json) {
    let r = returns(dir);
    let second_half = &r[r.len() / 2..];
    let best = second_half
        .windows(20)
        .map(|w| w.iter().sum::<f64>() / 20.0)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(summary["max_episode_reward"].as_f64().unwrap() >= 100.0, "{summary}");
    assert!(
        best >= 50.0,
        "the best 20 episodes of the second half average {best}: {summary}"
    );
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A cluster of one learner, `shards` replay shards and two actors on free loopback ports,
/// whose roles a test starts and kills one by one with `rlgraph serve`. Its runs take 40,000
/// frames: long enough that a test acts on a role while the run is under way (one run takes
/// a few seconds on two cores).
pub struct Cluster {
    /// The cluster's directory: its spec, each process's log, the runs' output.
    pub dir: std::path::PathBuf,
    spec: std::path::PathBuf,
    seed: u64,
    /// The run's frames.
    frames: String,
    /// Processes started so far (numbers each one's log).
    started: std::cell::Cell<usize>,
}

impl Cluster {
    pub fn new(name: &str, shards: usize, seed: u64) -> Self {
        let dir = std::env::temp_dir().join(format!("rlgraph-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let spec = dir.join("cluster.json");
        let replay: Vec<String> = (0..shards).map(|_| format!("\"127.0.0.1:{}\"", free_port())).collect();
        std::fs::write(
            &spec,
            format!(
                r#"{{"learner": ["127.0.0.1:{}"], "replay": [{}], "actor": ["a", "b"]}}"#,
                free_port(),
                replay.join(", ")
            ),
        )
        .unwrap();
        Cluster {
            dir,
            spec,
            seed,
            frames: "40000".into(),
            started: std::cell::Cell::new(0),
        }
    }

    /// The same cluster with `n` actors in its spec (two unless told).
    pub fn with_actors(self, n: usize) -> Self {
        let mut spec: Json = serde_json::from_str(&std::fs::read_to_string(&self.spec).unwrap()).unwrap();
        spec["actor"] = (0..n).map(|i| format!("a{i}")).collect();
        std::fs::write(&self.spec, spec.to_string()).unwrap();
        self
    }

    /// The same cluster with runs of `frames` frames.
    pub fn with_frames(mut self, frames: u64) -> Self {
        self.frames = frames.to_string();
        self
    }

    /// A new file in the cluster's directory for the stderr of `role` number `index`,
    /// printed if the test fails.
    pub fn log(&self, role: &str, index: usize) -> std::fs::File {
        let n = self.started.get();
        self.started.set(n + 1);
        std::fs::File::create(self.dir.join(format!("{n:02}-{role}-{index}.log"))).unwrap()
    }

    /// The log of the last process started as `role` number `index`.
    pub fn latest_log(&self, role: &str, index: usize) -> std::path::PathBuf {
        let suffix = format!("-{role}-{index}.log");
        let mut logs: Vec<_> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with(&suffix))
            .collect();
        logs.sort();
        logs.pop().expect("a log of that role")
    }

    /// `rlgraph serve` as `role` number `index`, with `extra` options.
    pub fn command(&self, role: &str, index: usize, extra: &[&str]) -> Command {
        let seed = self.seed.to_string();
        let mut cmd = serve_command(
            &[],
            &self.spec,
            role,
            index,
            &["--seed", &seed, "--timesteps", &self.frames],
        );
        cmd.args(extra).stderr(self.log(role, index));
        cmd
    }

    /// Starts `role` number `index` with `extra` options.
    pub fn serve(&self, role: &str, index: usize, extra: &[&str]) -> Guard {
        Guard::new(self.command(role, index, extra).spawn().unwrap())
    }

    /// Starts the learner with `extra` options, its progress followed.
    pub fn learner(&self, extra: &[&str]) -> (Guard, Progress) {
        let mut learner = self
            .command("learner", 0, extra)
            .args(["--log-every-secs", "1"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let progress = Progress::follow(&mut learner);
        (Guard::new(learner), progress)
    }
}

/// The learner's summary once it has ended well.
pub fn summary_of(learner: Guard) -> Json {
    let out = finish(learner.into_child(), Duration::from_secs(300));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    serde_json::from_slice(&out.stdout).unwrap()
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut logs: Vec<_> = std::fs::read_dir(&self.dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "log"))
                .collect();
            logs.sort();
            for log in logs {
                eprintln!(
                    "--- {}:\n{}",
                    log.display(),
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
