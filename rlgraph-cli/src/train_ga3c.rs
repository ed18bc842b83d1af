//! `rlgraph train` for a config whose `execution_spec.executor` is `"ga3c"`: GA3C's agent,
//! predictor and trainer threads, with their throughput, queue depths and policy lag in the
//! progress bar, `summary.json` and TensorBoard.

use executors::ga3c::{Ga3cExecutor, Ga3cProgress};
use rlgraph_core::Backend;
use serde_json::Value as Json;

use crate::output_files::write_file;
use crate::run_outputs::{open_out_dir, progress_bar, vector_env, warn_if_diverged, GA3C_MODEL_FILE};
use crate::train_args::TrainArgs;
use executors::EventWriter;

/// GA3C's checkpoint in an `--out` directory, which `--resume` reads: the learner
/// (variables, optimizer state, counters) and the run's counts, episodes and rounds.
pub const CHECKPOINT_FILE: &str = "ga3c-checkpoint.safetensors";

/// Trains `config` under the GA3C executor; returns the JSON summary.
pub fn train_ga3c<B: Backend>(args: &TrainArgs, config: &Json) -> Result<String, String> {
    if args.num_envs != 1 || args.video_every.is_some() {
        return Err(format!(
            "{}: the ga3c executor runs one environment per agent thread (ga3c_spec.num_agents); \
             --num-envs and --video-every do not apply (record its model's episodes afterwards with \
             rlgraph evaluate --video)",
            args.config.display()
        ));
    }
    let mut executor = Ga3cExecutor::<B>::new(config, &args.env, args.seed)
        .map_err(|e| format!("{}: {e}", args.config.display()))?
        .with_divergence(args.on_divergence);
    if let Some(target) = args.target_return {
        executor = executor.with_target_return(target);
    }
    if let Some(every) = args.eval_every {
        let envs = vector_env(&args.env, args.eval_episodes, args.seed)?;
        executor = executor.with_evaluation(executors::Evaluation::new(every, envs));
    }
    if let Some(dir) = &args.resume {
        executor = executor.with_resume(dir.join(CHECKPOINT_FILE));
    }
    if let (Some(dir), true) = (&args.out, args.checkpoint_every > 0) {
        executor = executor.with_checkpoints(args.checkpoint_every, dir.join(CHECKPOINT_FILE));
    }
    let mut events = open_out_dir(args)?;
    let total = args
        .timesteps
        .unwrap_or(if args.episodes.is_some() { 1_000_000 } else { 200_000 });
    let length = executors::RunLength {
        timesteps: total,
        episodes: args.episodes,
        pause_at: args.pause_at,
    };
    let bar = progress_bar(total);
    // Set at the first report, past what a resumed run's earlier legs logged.
    let mut logged: Option<(usize, usize)> = None;
    let mut event_error = None;
    let stats = executor
        .execute_run(length, |p: &Ga3cProgress| {
            if let Some(w) = events.as_mut() {
                let logged = logged.get_or_insert(p.resumed);
                if let Err(e) = log_events(w, p, logged) {
                    event_error.get_or_insert(e);
                }
            }
            let recent = &p.episode_rewards[p.episode_rewards.len().saturating_sub(100)..];
            let mean = recent.iter().sum::<f64>() / recent.len().max(1) as f64;
            let eval = p
                .evaluations
                .last()
                .map_or(String::new(), |e| format!(" | eval {:.1}", e.mean_return));
            bar.set_position(p.frames);
            bar.set_message(format!(
                "| return (last 100) {mean:.1}{eval} | {:.0} pred/s, batch {:.1} | {:.1} train/s | queues {}/{} | lag {:.2} | NA {} NP {} NT {}",
                p.predictions_per_second,
                p.mean_prediction_batch,
                p.trainings_per_second,
                p.prediction_queue,
                p.training_queue,
                p.mean_lag,
                p.counts.agents,
                p.counts.predictors,
                p.counts.trainers,
            ));
        })
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    warn_if_diverged(&stats.worker);
    if let Some(e) = event_error {
        return Err(e);
    }
    let mut summary = stats.to_json();
    summary["wall_clock_seconds"] = stats.worker.runtime_seconds.into();
    summary["env"] = args.env.clone().into();
    summary["backend"] = B::NAME.into();
    summary["executor"] = "ga3c".into();
    if let Some(at) = executor.resumed_at() {
        summary["resumed_at_timestep"] = at.into();
    }
    let frames = stats.worker.timesteps_executed;
    if frames < total && args.pause_at.is_some() && stats.worker.solved_at_timestep.is_none() {
        summary["paused_at_timestep"] = frames.into();
    }
    if let (Some(dir), Some(w)) = (&args.out, events.as_mut()) {
        w.flush()?;
        write_file(dir, "episodes.csv", stats.worker.episodes_csv().as_bytes())?;
        write_file(dir, "summary.json", summary.to_string().as_bytes())?;
        executor
            .export_model(&dir.join(GA3C_MODEL_FILE))
            .map_err(|e| e.to_string())?;
        executor
            .save_checkpoint(&dir.join(CHECKPOINT_FILE))
            .map_err(|e| e.to_string())?;
    }
    Ok(summary.to_string())
}

/// Episode returns and evaluation rounds as they finish (`logged` counts both so far), and
/// the executor's rates at each report.
fn log_events(w: &mut EventWriter, p: &Ga3cProgress, logged: &mut (usize, usize)) -> Result<(), String> {
    for r in p.episode_rewards.get(logged.0..).unwrap_or_default() {
        w.scalar("episode/return", p.frames, *r)?;
    }
    for e in p.evaluations.get(logged.1..).unwrap_or_default() {
        w.scalar("eval/return", e.timestep, e.mean_return)?;
    }
    *logged = (p.episode_rewards.len(), p.evaluations.len());
    for (tag, value) in [
        ("ga3c/predictions_per_second", p.predictions_per_second),
        ("ga3c/trainings_per_second", p.trainings_per_second),
        ("ga3c/mean_prediction_batch", p.mean_prediction_batch),
        ("ga3c/prediction_queue", p.prediction_queue as f64),
        ("ga3c/training_queue", p.training_queue as f64),
        ("ga3c/mean_policy_lag", p.mean_lag),
        ("ga3c/agents", p.counts.agents as f64),
        ("ga3c/predictors", p.counts.predictors as f64),
        ("ga3c/trainers", p.counts.trainers as f64),
    ] {
        if value.is_finite() {
            w.scalar(tag, p.frames, value)?;
        }
    }
    if let Some(loss) = p.loss {
        w.scalar("train/loss", p.frames, loss)?;
    }
    Ok(())
}
