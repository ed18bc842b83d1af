//! Profiling from the command line: `rlgraph train --profile DIR` records a run, `rlgraph
//! profile report DIR` prints its breakdown and draws the chart, `rlgraph profile
//! calibrate` measures what the profiler's own events cost so reports can subtract it.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use cpu_time::ProcessTime;
use rlgraph_core::profiler::{self, Breakdown, Calibration, CalibrationRun, Event, Level};
use rlgraph_core::Backend;
use rlgraph_envs::{make, Stepping, VectorEnv};
use serde_json::{json, Value as Json};

use crate::backend_choice::{on_backend, OnBackend};
use crate::output_files::write_json;

/// Arguments of `rlgraph profile`.
#[derive(Args)]
pub struct ProfileArgs {
    #[command(subcommand)]
    command: ProfileCommand,
}

#[derive(Subcommand)]
enum ProfileCommand {
    /// Print the breakdown of a run recorded with `rlgraph train --profile DIR` and draw it
    /// as `DIR/breakdown.svg`.
    Report {
        /// The directory `train --profile` wrote.
        dir: PathBuf,
        /// The calibration to subtract (default: `DIR/calibration.json` when present).
        #[arg(long)]
        calibration: Option<PathBuf>,
    },
    /// Measure the cost of the profiler's events on a training workload (profiling off,
    /// annotations only, full capture), then check the correction on fresh runs.
    Calibrate(CalibrateArgs),
}

/// Arguments of `rlgraph profile calibrate`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// The agent config of the workload.
    config: PathBuf,
    /// Its environment.
    #[arg(long)]
    env: String,
    /// Environment steps per run.
    #[arg(long, default_value_t = 3000)]
    timesteps: u64,
    /// Runs per level; each level's fastest run counts (the least disturbed by the machine).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The seed of every run.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where to write the calibration.
    #[arg(long, default_value = "calibration.json")]
    out: PathBuf,
    /// The backend: candle (default) or tch.
    #[arg(long, default_value = "candle")]
    backend: String,
}

/// Runs `rlgraph profile ...`.
pub fn run(args: &ProfileArgs) -> Result<String, String> {
    match &args.command {
        ProfileCommand::Report { dir, calibration } => report(dir, calibration.as_deref()),
        ProfileCommand::Calibrate(c) => on_backend(&c.backend, c),
    }
}

/// Turns full capture on for a `train --profile DIR` run.
pub fn start(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let _ = profiler::global().take_events();
    profiler::set_level(Level::Full);
    Ok(())
}

/// Ends a `train --profile DIR` run: writes the raw events and the Chrome trace, and
/// returns the summary's `profile` entry.
pub fn finish(dir: &Path) -> Result<Json, String> {
    profiler::set_level(Level::Off);
    let events = profiler::global().take_events();
    write_json(&dir.join("events.json"), &events)?;
    write_json(&dir.join("trace.json"), &profiler::chrome_trace(&events))?;
    let breakdown = Breakdown::from_events(&events);
    Ok(json!({
        "dir": dir.display().to_string(),
        "annotation_events": breakdown.annotation_events,
        "capture_events": breakdown.capture_events,
        "operations_ms": operations_ms(&breakdown),
    }))
}

fn operations_ms(b: &Breakdown) -> Json {
    b.by_operation()
        .into_iter()
        .map(|(op, cats)| {
            let by: serde_json::Map<String, Json> = cats
                .iter()
                .map(|(c, ns)| (c.name().to_string(), json!(ns / 1e6)))
                .collect();
            (op, Json::Object(by))
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn report(dir: &Path, calibration: Option<&Path>) -> Result<String, String> {
    let events: Vec<Event> = profiler::read_json(&dir.join("events.json"))
        .map_err(|e| format!("{e} (was it written by rlgraph train --profile?)"))?;
    let raw = Breakdown::from_events(&events);
    let default = dir.join("calibration.json");
    let calibration = match calibration {
        Some(path) => Some(path.to_path_buf()),
        None => default.exists().then_some(default),
    };
    let (breakdown, note) = match &calibration {
        Some(path) => {
            let c: Calibration = profiler::read_json(path).map_err(|e| e.to_string())?;
            let note = format!(
                "corrected with {} ({:.0} ns per annotation, {:.0} ns per capture: {:.1} ms of {:.1} ms removed)",
                path.display(),
                c.annotation_ns,
                c.capture_ns,
                c.overhead(raw.annotation_events, raw.capture_events) / 1e6,
                raw.total() / 1e6
            );
            (raw.corrected(&c), note)
        }
        None => (
            raw.clone(),
            "not corrected: no calibration (run rlgraph profile calibrate)".to_string(),
        ),
    };
    let chart = dir.join("breakdown.svg");
    profiler::chart::stacked_bars(&breakdown.by_operation(), "time per operation, by category", &chart)
        .map_err(|e| e.to_string())?;
    let total = breakdown.total().max(1.0);
    let share = |ops: &[&str]| {
        100.0
            * breakdown
                .by_operation()
                .iter()
                .filter(|(op, _)| ops.contains(&op.as_str()))
                .map(|(_, c)| c.values().sum::<f64>())
                .sum::<f64>()
            / total
    };
    let mut out = breakdown.table();
    out.push_str(&format!(
        "\nshares: inference {:.1}%, backpropagation {:.1}%, simulation {:.1}%, replay {:.1}%\n{note}\nchart: {}",
        share(&["inference"]),
        share(&["backpropagation"]),
        share(&["simulation"]),
        share(&["replay", "storing"]),
        chart.display()
    ));
    Ok(out)
}

/// One training run of the calibration workload at `level`: its time and events. The time
/// is the process's CPU time, which other processes on the machine do not inflate.
fn timed_run<B: Backend>(
    args: &CalibrateArgs,
    json: &Json,
    level: Level,
) -> Result<(CalibrationRun, Vec<Event>), String> {
    let env = make(&args.env, args.seed).map_err(|e| e.to_string())?;
    let agent = crate::agent_commands::build_agent_for::<B>(
        json,
        &args.config,
        env.state_space(),
        env.action_space(),
        args.seed,
    )?;
    let envs = VectorEnv::new(vec![env], Stepping::Sequential).map_err(|e| e.to_string())?;
    let mut worker = executors::SingleThreadedWorker::new(agent, envs, args.seed);
    let _ = profiler::global().take_events();
    profiler::set_level(level);
    let start = ProcessTime::now();
    let result = worker.execute_timesteps(args.timesteps, |_| {});
    let wall_ns = start.elapsed().as_nanos() as f64;
    profiler::set_level(Level::Off);
    result.map_err(|e| e.to_string())?;
    let events = profiler::global().take_events();
    let capture_events = events
        .iter()
        .filter(|e| matches!(e.kind, profiler::Kind::Capture(_)))
        .count() as u64;
    Ok((
        CalibrationRun {
            wall_ns,
            annotation_events: events.len() as u64 - capture_events,
            capture_events,
        },
        events,
    ))
}

impl OnBackend for CalibrateArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        if self.repeats == 0 || self.timesteps == 0 {
            return Err("--repeats and --timesteps must be at least 1".into());
        }
        let json = crate::agent_commands::read_config(&self.config, None)?;
        // Levels interleave, so a slow spell of the machine hits all three alike; each
        // level keeps its fastest run.
        let mut best = [CalibrationRun::default(); 3];
        let levels = [Level::Off, Level::Annotations, Level::Full];
        for round in 0..self.repeats {
            for (i, level) in levels.iter().enumerate() {
                let (run, _) = timed_run::<B>(self, &json, *level)?;
                if round == 0 || run.wall_ns < best[i].wall_ns {
                    best[i] = run;
                }
            }
        }
        // Per-event costs measured directly are steadier than the gaps between whole runs
        // on a busy machine; the runs ride along in the file, with what their gaps imply.
        let from_runs = Calibration::derive(best[0], best[1], best[2]);
        let mut calibration = Calibration::measure(200_000, self.repeats);
        calibration.runs = from_runs.runs;
        write_json(&self.out, &calibration)?;
        // Validation on runs the calibration did not see: pairs of a fresh unprofiled run and
        // a fresh fully profiled one, back to back so both meet the same machine; the median
        // pair's error counts.
        let mut pairs: Vec<(f64, f64, f64)> = vec![];
        for _ in 0..self.repeats {
            let off = timed_run::<B>(self, &json, Level::Off)?.0.wall_ns;
            let (full, _) = timed_run::<B>(self, &json, Level::Full)?;
            let corrected = full.wall_ns - calibration.overhead(full.annotation_events, full.capture_events);
            pairs.push((off, full.wall_ns, corrected));
        }
        pairs.sort_by(|a, b| (a.2 / a.0).total_cmp(&(b.2 / b.0)));
        let (off, full, corrected) = pairs[pairs.len() / 2];
        Ok(json!({
            "calibration": self.out.display().to_string(),
            "annotation_ns": calibration.annotation_ns,
            "capture_ns": calibration.capture_ns,
            "from_run_gaps": {"annotation_ns": from_runs.annotation_ns, "capture_ns": from_runs.capture_ns},
            "validation": {
                "unprofiled_ms": off / 1e6,
                "profiled_ms": full / 1e6,
                "corrected_ms": corrected / 1e6,
                "corrected_error_percent": 100.0 * (corrected - off) / off,
                "uncorrected_error_percent": 100.0 * (full - off) / off,
                "pairs_corrected_error_percent": pairs.iter().map(|p| 100.0 * (p.2 - p.0) / p.0).collect::<Vec<_>>(),
            },
        })
        .to_string())
    }
}
