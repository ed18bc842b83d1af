//! `rlgraph train` for a config whose `execution_spec.executor` is `"ga3c"`: GA3C's agent,
//! predictor and trainer threads as a layout of the one driver, with their throughput, queue
//! depths and policy lag in the progress bar, `summary.json` and TensorBoard.

use executors::ga3c::Ga3cExecutor;
use rlgraph_core::Backend;
use serde_json::Value as Json;

use crate::output_files::write_file;
use crate::run_outputs::{drive, vector_env, GA3C_CHECKPOINT_FILE, GA3C_MODEL_FILE};
use crate::train_args::TrainArgs;

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
        let envs = vector_env(&args.env, args.eval_episodes, args.seed, args.bridge_processes)?;
        executor = executor.with_evaluation(executors::Evaluation::new(every, envs));
    }
    if let Some(dir) = &args.record {
        let recording = executors::input_log::Recording {
            dir: dir.clone(),
            segment_bytes: args.record_segment_mib << 20,
            config: config.clone(),
            code_version: crate::replay_command::code_version(),
        };
        executor = executor.with_recording(&recording).map_err(|e| e.to_string())?;
    }
    if let (Some(dir), true) = (&args.out, args.checkpoint_every > 0) {
        executor = executor.with_checkpoints(args.checkpoint_every, dir.join(GA3C_CHECKPOINT_FILE));
    }
    let mut summary = drive::<B, _>(args, &mut executor, 200_000, GA3C_CHECKPOINT_FILE)?;
    // GA3C's own measures beside the run's statistics.
    if let Some(stats) = executor.last_stats() {
        summary["ga3c"] = stats.to_json()["ga3c"].take();
    }
    summary["executor"] = "ga3c".into();
    if let Some(dir) = &args.out {
        write_file(dir, "summary.json", summary.to_string().as_bytes())?;
        executor
            .export_model(&dir.join(GA3C_MODEL_FILE))
            .map_err(|e| e.to_string())?;
    }
    Ok(summary.to_string())
}
