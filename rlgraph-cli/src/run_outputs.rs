//! What every training command shares: its environment copies, its `--out` directory
//! (config, checkpoint file names), the driver with its progress bar, and its warnings.

use executors::{DriveOptions, RunLength, RunProgress, Worker};
use indicatif::{ProgressBar, ProgressStyle};
use rlgraph_core::Backend;
use rlgraph_envs::VectorEnv;
use serde_json::Value as Json;

use crate::output_files::{stderr_line, write_file};
use crate::train_args::TrainArgs;

/// The file `--out` checkpoints into and `--resume` reads.
pub const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

/// GA3C's checkpoint in an `--out` directory, which `--resume` reads: the learner
/// (variables, optimizer state, counters) and the run's counts, episodes and rounds.
pub const GA3C_CHECKPOINT_FILE: &str = "ga3c-checkpoint.safetensors";

/// A GA3C run's learned model in an `--out` directory, in `Agent::export_model`'s format
/// (GA3C's checkpoint holds its learner and run counts, not an agent's checkpoint).
pub const GA3C_MODEL_FILE: &str = "model.safetensors";

/// Under `--on-divergence warn`, says on stderr that the model is not usable.
pub(crate) fn warn_if_diverged(stats: &executors::WorkerStats) {
    if let Some(step) = stats.diverged_at_timestep {
        crate::output_files::stderr_line(&format!(
            "warning: training diverged at step {step} (a NaN or infinite loss or weight); the model is not usable"
        ));
    }
}

/// `copies` copies of `env`, copy `i` seeded `seed + i`, as [`VectorEnv::make`] makes them:
/// bridged Gymnasium copies run in `bridge_processes` processes (default: one per core), each
/// stepping its share with one message.
pub(crate) fn vector_env(
    env: &str,
    copies: usize,
    seed: u64,
    bridge_processes: Option<usize>,
) -> Result<VectorEnv, String> {
    VectorEnv::make(env, copies, seed, bridge_processes).map_err(|e| e.to_string())
}

/// With `--out`: creates the directory and copies the config into it, so that the directory
/// is resumable from the start.
fn prepare_out_dir(args: &TrainArgs) -> Result<(), String> {
    let Some(dir) = &args.out else { return Ok(()) };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let config = std::fs::read(&args.config).map_err(|e| format!("cannot read {}: {e}", args.config.display()))?;
    write_file(dir, "config.json", &config)
}

/// Runs `worker` through the library's driver as `args` say, as `rlgraph train` does on every
/// layout: resumes from `--resume`, shows progress on a bar, pauses at `--pause-at`, and with
/// `--out` writes TensorBoard events, `episodes.csv` and the final checkpoint (`checkpoint`
/// names the file, in `--out` and in `--resume`). Returns the summary (whole run, this leg's
/// speed), which the caller completes and writes. A run of `--episodes` without
/// `--timesteps` is bounded by 1,000,000 steps, one of neither by `default_steps`.
pub(crate) fn drive<B: Backend, W: Worker>(
    args: &TrainArgs,
    worker: &mut W,
    default_steps: u64,
    checkpoint: &str,
) -> Result<Json, String> {
    prepare_out_dir(args)?;
    let total = args.timesteps.unwrap_or(if args.episodes.is_some() {
        1_000_000
    } else {
        default_steps
    });
    let options = DriveOptions {
        length: RunLength {
            timesteps: total,
            episodes: args.episodes,
            pause_at: args.pause_at,
        },
        resume: args.resume.as_ref().map(|dir| dir.join(checkpoint)),
        out: args.out.clone(),
        checkpoint: args.out.as_ref().map(|dir| dir.join(checkpoint)),
    };
    let bar = progress_bar(total);
    let mut last_draw = None;
    let driven = executors::drive(worker, &options, &mut |r: &RunProgress<'_>| {
        let p = r.leg;
        if last_draw.is_some_and(|at| p.timesteps - at < 200) {
            return;
        }
        last_draw = Some(p.timesteps);
        bar.set_message(progress_message(r));
        bar.set_position(r.step);
    });
    bar.finish_and_clear();
    let driven = driven.map_err(|e| e.to_string())?;
    warn_if_diverged(&driven.leg);
    if let Some(dir) = &args.out {
        let title = format!("{} on {}", args.config.display(), args.env);
        draw_curve(dir, &title, &driven.run.episode_rewards);
    }
    let mut summary = driven.summary();
    summary["env"] = args.env.clone().into();
    summary["backend"] = B::NAME.into();
    Ok(summary)
}

/// Draws `curve.svg` in `dir` from the whole run's episode `returns` (what `episodes.csv`
/// holds): the mean return of the last 100 episodes. A file that cannot be written gets a
/// note instead: the run itself succeeded.
fn draw_curve(dir: &std::path::Path, title: &str, returns: &[f64]) {
    let svg = rlgraph_bench::report::episode_curve(title, returns, 100);
    if let Err(e) = write_file(dir, "curve.svg", svg.as_bytes()) {
        stderr_line(&format!("note: --out: no curve.svg: {e}"));
    }
}

/// What a progress bar says of a report: the run's episodes, the mean return of this leg's
/// last 10, the last evaluation round, this leg's steps per second and the layout's gauges.
pub(crate) fn progress_message(r: &RunProgress<'_>) -> String {
    let p = r.leg;
    let recent = &p.episode_rewards[p.episode_rewards.len().saturating_sub(10)..];
    let mean = match recent.len() {
        0 => f64::NAN,
        n => recent.iter().sum::<f64>() / n as f64,
    };
    let mut message = format!("| episodes {} | mean return (last 10) {mean:.1}", r.episodes);
    if let Some(e) = p.evaluations.last() {
        message.push_str(&format!(" | eval {:.1}", e.mean_return));
    }
    message.push_str(&format!(" | {:.0} steps/s", p.timesteps as f64 / p.elapsed.max(1e-9)));
    for (tag, value) in p.gauges {
        let name = tag.rsplit('/').next().unwrap_or(tag);
        // Counts (updates, queue depths, threads) read as counts.
        match value.fract() == 0.0 && value.abs() < 1e15 {
            true => message.push_str(&format!(" | {name} {value:.0}")),
            false => message.push_str(&format!(" | {name} {value:.1}")),
        }
    }
    message
}

/// The training progress bar over `total` steps.
pub(crate) fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} steps {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
