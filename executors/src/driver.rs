//! `drive`: the one loop every training entry point runs a [`Worker`] through, whatever the
//! layout (one thread, device-resident copies, GA3C's threads): resume, run to a length,
//! write TensorBoard events as it goes, and leave `episodes.csv` and a checkpoint behind.

use std::path::PathBuf;

use rlgraph_core::{CoreError, Result};
use serde_json::Value as Json;

use crate::tensorboard::EventWriter;
use crate::worker::Worker;
use crate::worker_stats::{Progress, RunLength, WorkerStats};

/// `train/loss` goes to TensorBoard at most once per this many of the run's steps.
const LOSS_EVERY: u64 = 100;

/// Where a driven run starts from, how long it goes and what it leaves behind.
#[derive(Clone, Debug)]
pub struct DriveOptions {
    /// How long the run goes, over every leg.
    pub length: RunLength,
    /// A checkpoint (written by [`Worker::save_checkpoint`]) to resume from before running.
    pub resume: Option<PathBuf>,
    /// A directory for the run's TensorBoard event file and `episodes.csv`.
    pub out: Option<PathBuf>,
    /// Where the final checkpoint goes (usually inside `out`).
    pub checkpoint: Option<PathBuf>,
}

impl DriveOptions {
    /// A run of `length` that starts afresh and writes nothing.
    pub fn new(length: RunLength) -> Self {
        DriveOptions {
            length,
            resume: None,
            out: None,
            checkpoint: None,
        }
    }
}

/// What a progress observer sees: the worker's report and where the whole run stands.
#[derive(Clone, Copy, Debug)]
pub struct RunProgress<'a> {
    /// The run's steps so far, earlier legs included.
    pub step: u64,
    /// The run's finished episodes so far, earlier legs included.
    pub episodes: u64,
    /// The worker's own report on this leg.
    pub leg: &'a Progress<'a>,
}

/// How a driven run ended.
#[derive(Clone, Debug)]
pub struct Driven {
    /// This leg's statistics (its speed, its outcome).
    pub leg: WorkerStats,
    /// The whole run's statistics, earlier legs included.
    pub run: WorkerStats,
    /// The step the run resumed at, if it resumed.
    pub resumed_at: Option<u64>,
    /// The step a `pause_at` stopped the run at, short of its length.
    pub paused_at: Option<u64>,
}

impl Driven {
    /// The run as `summary.json` holds it: the whole run's statistics, this leg's wall-clock
    /// seconds, and where it resumed and paused.
    pub fn summary(&self) -> Json {
        let mut summary = self.run.to_json();
        summary["wall_clock_seconds"] = self.leg.runtime_seconds.into();
        if let Some(at) = self.resumed_at {
            summary["resumed_at_timestep"] = at.into();
        }
        if let Some(at) = self.paused_at {
            summary["paused_at_timestep"] = at.into();
        }
        summary
    }
}

/// Runs `worker` as `options` say: resumes from `options.resume`, runs until the whole run
/// reaches `options.length`, calling `observe` at each report, writes each finished episode,
/// evaluation round, the loss and the layout's gauges to a TensorBoard event file in
/// `options.out`, and at the end `episodes.csv` there and the checkpoint at
/// `options.checkpoint`.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use executors::{drive, DriveOptions, RunLength, SingleThreadedWorker};
/// use rlgraph_envs::{make, Stepping, VectorEnv};
/// let env = make("CartPole-v1", 0)?;
/// let config = serde_json::json!({"type": "random"});
/// let agent = agents::build_agent::<backend_candle::Candle>(&config, env.state_space(), env.action_space(), 0)?;
/// let mut worker = SingleThreadedWorker::new(agent, VectorEnv::new(vec![env], Stepping::Sequential)?, 0);
/// let length = RunLength { timesteps: 500, episodes: None, pause_at: None };
/// let mut reports = 0;
/// let driven = drive(&mut worker, &DriveOptions::new(length), &mut |_| reports += 1)?;
/// assert!(driven.run.timesteps_executed >= 500 && reports > 0);
/// assert_eq!(driven.summary()["timesteps_executed"], driven.run.timesteps_executed);
/// # Ok(())
/// # }
/// ```
pub fn drive<W: Worker + ?Sized>(
    worker: &mut W,
    options: &DriveOptions,
    observe: &mut dyn FnMut(&RunProgress<'_>),
) -> Result<Driven> {
    if let Some(path) = &options.resume {
        worker.resume(path)?;
    }
    // Progress counts the whole run: a resumed leg starts where the last one stopped.
    let before = worker.tally().clone();
    let mut events = match &options.out {
        Some(dir) => Some(EventWriter::create(dir).map_err(|reason| out_error(dir, reason))?),
        None => None,
    };
    let mut event_error = None;
    // Episodes count from this leg's start, evaluation rounds over the whole run.
    let mut logged = Logged {
        episodes: 0,
        evaluations: before.evaluations.len(),
        loss_at: None,
    };
    let mut report = |p: &Progress<'_>| {
        let step = before.timesteps + p.timesteps;
        if let Some(w) = events.as_mut() {
            if let Err(e) = logged.write(w, p, step) {
                event_error.get_or_insert(e);
            }
        }
        observe(&RunProgress {
            step,
            episodes: before.episodes.len() as u64 + p.episodes,
            leg: p,
        });
    };
    let leg = worker.execute_run(options.length, &mut report)?;
    let out = options.out.as_deref().unwrap_or(std::path::Path::new("."));
    if let Some(reason) = event_error {
        return Err(out_error(out, reason));
    }
    if let Some(w) = events.as_mut() {
        w.flush().map_err(|reason| out_error(out, reason))?;
    }
    let run = worker.run_stats(&leg);
    let at = worker.tally().timesteps;
    let length = options.length;
    let paused = at < length.timesteps && length.pause_at.is_some() && leg.solved_at_timestep.is_none();
    let driven = Driven {
        resumed_at: options.resume.as_ref().map(|_| before.timesteps),
        paused_at: paused.then_some(at),
        leg,
        run,
    };
    if let Some(dir) = &options.out {
        let path = dir.join("episodes.csv");
        // Atomically, as every file a run leaves: a killed run leaves the old file or the new.
        rlgraph_core::atomic_file::write_atomically(&path, worker.tally().episodes.csv().as_bytes())
            .map_err(|e| out_error(&path, e.to_string()))?;
    }
    if let Some(path) = &options.checkpoint {
        worker.save_checkpoint(path)?;
    }
    Ok(driven)
}

/// What has gone to the event file so far.
struct Logged {
    /// This leg's episodes written.
    episodes: usize,
    /// The run's evaluation rounds written.
    evaluations: usize,
    /// The step the loss was last written at.
    loss_at: Option<u64>,
}

impl Logged {
    /// Writes what report `p` adds (at the run's `step`): its new episodes and rounds, the
    /// loss where `LOSS_EVERY` steps have passed, and the layout's gauges.
    fn write(&mut self, w: &mut EventWriter, p: &Progress<'_>, step: u64) -> std::result::Result<(), String> {
        for r in p.episode_rewards.get(self.episodes..).unwrap_or_default() {
            w.scalar("episode/return", step, *r)?;
        }
        for e in p.evaluations.get(self.evaluations..).unwrap_or_default() {
            w.scalar("eval/return", e.timestep, e.mean_return)?;
        }
        self.episodes = p.episode_rewards.len();
        self.evaluations = p.evaluations.len();
        if let Some(loss) = p.loss {
            if self.loss_at.is_none_or(|at| step / LOSS_EVERY > at / LOSS_EVERY) {
                self.loss_at = Some(step);
                w.scalar("train/loss", step, loss)?;
            }
        }
        for (tag, value) in p.gauges.iter().filter(|(_, v)| v.is_finite()) {
            w.scalar(tag, step, *value)?;
        }
        Ok(())
    }
}

fn out_error(path: &std::path::Path, reason: String) -> CoreError {
    CoreError::Config {
        at: format!("run output {}", path.display()),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::run_tally::RunTally;

    /// Steps 50 at a time, finishing an episode (return = its number) every 100 steps, with
    /// a loss of 1.0 and one gauge; its checkpoint is its step count as text.
    #[derive(Default)]
    struct Counting {
        tally: RunTally,
    }

    impl Worker for Counting {
        fn execute_run(&mut self, length: RunLength, progress: &mut dyn FnMut(&Progress<'_>)) -> Result<WorkerStats> {
            let (start, first) = (self.tally.timesteps, self.tally.episodes.len());
            let stop = length.stop_at();
            while self.tally.timesteps < stop {
                self.tally.timesteps += 50;
                if self.tally.timesteps.is_multiple_of(100) {
                    let n = self.tally.episodes.len() as f64 + 1.0;
                    self.tally.episodes.push(n, self.tally.timesteps);
                }
                let leg = &self.tally.episodes.returns()[first..];
                progress(&Progress {
                    timesteps: self.tally.timesteps - start,
                    episodes: leg.len() as u64,
                    episode_rewards: leg,
                    loss: Some(1.0),
                    elapsed: 1.0,
                    evaluations: &[],
                    gauges: &[("layout/queue", 3.0), ("layout/not_yet", f64::NAN)],
                });
            }
            let leg = self.tally.episodes.returns()[first..].to_vec();
            Ok(WorkerStats::from_returns(
                self.tally.timesteps - start,
                leg,
                0,
                1.0,
                None,
            ))
        }

        fn save_checkpoint(&mut self, path: &Path) -> Result<()> {
            std::fs::write(path, self.tally.timesteps.to_string()).map_err(|e| out_error(path, e.to_string()))
        }

        fn resume(&mut self, path: &Path) -> Result<()> {
            let text = std::fs::read_to_string(path).map_err(|e| out_error(path, e.to_string()))?;
            let steps: u64 = text.parse().map_err(|_| out_error(path, text.clone()))?;
            self.tally.timesteps = steps;
            self.tally.episodes = Default::default();
            for n in 1..=steps / 100 {
                self.tally.episodes.push(n as f64, n * 100);
            }
            Ok(())
        }

        fn tally(&self) -> &RunTally {
            &self.tally
        }
    }

    fn count(haystack: &[u8], needle: &str) -> usize {
        haystack
            .windows(needle.len())
            .filter(|w| *w == needle.as_bytes())
            .count()
    }

    #[test]
    fn a_paused_and_resumed_run_logs_and_counts_the_whole_run_once() {
        let dir = std::env::temp_dir().join(format!("rlgraph-driver-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (first, second) = (dir.join("first"), dir.join("second"));
        let checkpoint = first.join("checkpoint");
        let length = RunLength {
            timesteps: 1000,
            episodes: None,
            pause_at: Some(600),
        };
        let options = DriveOptions {
            out: Some(first.clone()),
            checkpoint: Some(checkpoint.clone()),
            ..DriveOptions::new(length)
        };
        let mut seen = vec![];
        let paused = drive(&mut Counting::default(), &options, &mut |r| {
            seen.push((r.step, r.episodes))
        })
        .unwrap();
        assert_eq!(paused.paused_at, Some(600));
        assert_eq!(paused.resumed_at, None);
        assert_eq!(seen.last(), Some(&(600, 6)));
        let resumed_options = DriveOptions {
            length: RunLength {
                pause_at: None,
                ..length
            },
            resume: Some(checkpoint),
            out: Some(second.clone()),
            checkpoint: Some(second.join("checkpoint")),
        };
        seen.clear();
        let mut worker = Counting::default();
        let resumed = drive(&mut worker, &resumed_options, &mut |r| seen.push((r.step, r.episodes))).unwrap();
        // The second leg's reports count on from step 600 and episode 6.
        assert_eq!(seen.first(), Some(&(650, 6)));
        assert_eq!(seen.last(), Some(&(1000, 10)));
        assert_eq!((resumed.resumed_at, resumed.paused_at), (Some(600), None));
        assert_eq!(resumed.run.timesteps_executed, 1000);
        assert_eq!(resumed.summary()["resumed_at_timestep"], 600);
        let csv = std::fs::read_to_string(second.join("episodes.csv")).unwrap();
        // A header and ten episodes, each at the step it ended, the first leg's too.
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 11, "{csv}");
        assert_eq!(rows[..2], ["episode,timestep,return", "1,100,1"]);
        assert_eq!(rows[10], "10,1000,10");
        assert_eq!(std::fs::read_to_string(second.join("checkpoint")).unwrap(), "1000");
        let events = |d: &Path| {
            let file = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().contains("tfevents"))
                .unwrap();
            std::fs::read(file).unwrap()
        };
        let (a, b) = (events(&first), events(&second));
        // Each episode once, in the leg that finished it; a loss at the first report and at
        // each hundred the run passes (50, 100, ..., 600, then 650, 700, ..., 1000).
        assert_eq!((count(&a, "episode/return"), count(&b, "episode/return")), (6, 4));
        assert_eq!((count(&a, "train/loss"), count(&b, "train/loss")), (7, 5));
        // A gauge at every report; one that is not a number is left out.
        assert_eq!((count(&a, "layout/queue"), count(&b, "layout/queue")), (12, 8));
        assert_eq!(count(&a, "layout/not_yet"), 0);
        std::fs::remove_dir_all(&dir).ok();
    }
}
