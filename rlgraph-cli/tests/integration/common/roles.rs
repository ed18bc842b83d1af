//! Distributed roles as child processes: killed when a test ends, pass or fail; waited for
//! with a bound; and the learner's progress lines read as they come, so a test can act at a
//! point of the run (a number of frames) rather than after a guessed time.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `rlgraph serve` of `configs/apex-cartpole.json` on CartPole-v1 as `role` number `index`
/// of the cluster in `spec`, with `options` (seed, frames, ...), its stdout piped; started
/// through `wrapper` (`ip netns exec NS`, say) when it is not empty.
pub fn serve_command(wrapper: &[&str], spec: &Path, role: &str, index: usize, options: &[&str]) -> Command {
    let rlgraph = env!("CARGO_BIN_EXE_rlgraph");
    let mut cmd = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(rlgraph);
            c
        }
        None => Command::new(rlgraph),
    };
    cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["serve", "configs/apex-cartpole.json", "--env", "CartPole-v1"])
        .args(["--role", role, "--index", &index.to_string()])
        .arg("--cluster")
        .arg(spec)
        .args(options)
        .stdout(Stdio::piped());
    cmd
}

/// One process killed when the test ends, pass or fail, unless handed on to be waited for.
pub struct Guard(Option<Child>);

impl Guard {
    /// Guards `child`.
    pub fn new(child: Child) -> Self {
        Guard(Some(child))
    }

    /// Kills the process now (as SIGKILL: no chance to clean up) and reaps it.
    pub fn kill(&mut self) {
        if let Some(c) = &mut self.0 {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// Sends the process SIGTERM, as Kubernetes and Slurm do before they kill it.
    pub fn terminate(&self) {
        if let Some(c) = &self.0 {
            let sent = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status()
                .unwrap();
            assert!(sent.success(), "kill -TERM {}", c.id());
        }
    }

    /// The process's resident memory in KiB (from `/proc`), while it runs.
    pub fn resident_kib(&self) -> u64 {
        let c = self.0.as_ref().expect("a guarded process");
        let status = std::fs::read_to_string(format!("/proc/{}/status", c.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("a VmRSS line");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.0.as_mut().is_some_and(|c| c.try_wait().unwrap().is_none())
    }

    /// The process, no longer guarded (to wait for it with [`finish`]).
    pub fn into_child(mut self) -> Child {
        self.0.take().expect("guarded once")
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits for `child` at most `limit`, killing it after; its output.
pub fn finish(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("a process ran past {limit:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A learner's progress lines (`rlgraph serve --role learner --log-every-secs 1` with its
/// stderr piped), each with when it came.
#[derive(Clone, Default)]
pub struct Progress(Arc<Mutex<Vec<(Instant, String)>>>);

impl Progress {
    /// Reads `learner`'s stderr on a thread of its own until it closes.
    pub fn follow(learner: &mut Child) -> Self {
        let progress = Progress::default();
        let (lines, stderr) = (progress.0.clone(), learner.stderr.take().expect("a piped stderr"));
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // A test that panicked while holding the lock has already failed.
                if let Ok(mut lines) = lines.lock() {
                    lines.push((Instant::now(), line));
                }
            }
        });
        progress
    }

    /// (when, frames, updates) of each progress line so far
    /// (`learner: frames 2001/8000 | episodes .. | updates 377 | ..`).
    pub fn figures(&self) -> Vec<(Instant, u64, u64)> {
        let lines = self.0.lock().unwrap();
        lines
            .iter()
            .filter_map(|(t, line)| {
                let frames = line.strip_prefix("learner: frames ")?.split('/').next()?.parse().ok()?;
                let updates = line.split("| updates ").nth(1)?.split(' ').next()?.parse().ok()?;
                Some((*t, frames, updates))
            })
            .collect()
    }

    /// Waits (at most 120 s) until the learner reports at least `frames` frames.
    pub fn wait_for_frames(&self, frames: u64) {
        let start = Instant::now();
        while self.figures().last().is_none_or(|&(_, f, _)| f < frames) {
            if start.elapsed() > Duration::from_secs(120) {
                // The lines are copied out first: a panic while holding the lock would poison it.
                let lines: Vec<String> = self.0.lock().unwrap().iter().map(|(_, l)| l.clone()).collect();
                panic!(
                    "the learner did not reach {frames} frames in 120 s:\n{}",
                    lines.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
