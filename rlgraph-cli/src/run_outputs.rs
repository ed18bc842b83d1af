//! What every training command shares: its environment copies, its `--out` directory
//! (config, TensorBoard events, checkpoint file names), its progress bar and its warnings.

use indicatif::{ProgressBar, ProgressStyle};
use rlgraph_envs::{make, Stepping, VectorEnv};

use crate::output_files::write_file;
use crate::train_args::TrainArgs;
use executors::EventWriter;

/// The file `--out` checkpoints into and `--resume` reads.
pub(crate) const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

/// A GA3C run's learned model in an `--out` directory, in `Agent::export_model`'s format
/// (GA3C's checkpoint holds its learner and run counts, not an agent's checkpoint).
pub const GA3C_MODEL_FILE: &str = "model.safetensors";

/// Writes what a worker's progress report adds since the last one (`logged` counts the
/// episodes and evaluation rounds written so far) as TensorBoard scalars at the run's `step`.
pub(crate) fn log_progress(
    w: &mut EventWriter,
    p: &executors::Progress<'_>,
    step: u64,
    logged: &mut (usize, usize),
) -> Result<(), String> {
    for r in p.episode_rewards.get(logged.0..).unwrap_or_default() {
        w.scalar("episode/return", step, *r)?;
    }
    for e in p.evaluations.get(logged.1..).unwrap_or_default() {
        w.scalar("eval/return", e.timestep, e.mean_return)?;
    }
    *logged = (p.episode_rewards.len(), p.evaluations.len());
    Ok(())
}

/// Under `--on-divergence warn`, says on stderr that the model is not usable.
pub(crate) fn warn_if_diverged(stats: &executors::WorkerStats) {
    if let Some(step) = stats.diverged_at_timestep {
        crate::output_files::stderr_line(&format!(
            "warning: training diverged at step {step} (a NaN or infinite loss or weight); the model is not usable"
        ));
    }
}

/// `copies` copies of `env`, copy `i` seeded `seed + i`, stepped one after another; bridged
/// Gymnasium copies (a Python process each) are stepped in parallel.
pub(crate) fn vector_env(env: &str, copies: usize, seed: u64) -> Result<VectorEnv, String> {
    let envs = (0..copies.max(1))
        .map(|i| make(env, seed + i as u64))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let stepping = match env.starts_with(rlgraph_envs::gym::GYM_PREFIX) {
        true => Stepping::Threaded,
        false => Stepping::Sequential,
    };
    VectorEnv::new(envs, stepping).map_err(|e| e.to_string())
}

/// With `--out`: creates the directory, copies the config into it and opens its TensorBoard
/// event file.
pub(crate) fn open_out_dir(args: &TrainArgs) -> Result<Option<EventWriter>, String> {
    let Some(dir) = &args.out else { return Ok(None) };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let config = std::fs::read(&args.config).map_err(|e| format!("cannot read {}: {e}", args.config.display()))?;
    write_file(dir, "config.json", &config)?;
    EventWriter::create(dir).map(Some)
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
