//! `rlgraph train`: train an agent from an RLgraph JSON config on an environment, with a
//! progress bar, per-episode metrics as CSV and as a TensorBoard event file, periodic and
//! final checkpoints, and a JSON summary at the end.

use std::path::{Path, PathBuf};

use clap::Args;
use executors::SingleThreadedWorker;
use indicatif::{ProgressBar, ProgressStyle};
use rlgraph_core::Backend;

use crate::backend_choice::{on_backend, OnBackend};
use rlgraph_envs::{make, Stepping, VectorEnv};

use crate::output_files::write_file;
use executors::{EventWriter, Worker};
use serde_json::Value as Json;

/// Arguments of `rlgraph train`.
#[derive(Args, Clone)]
pub struct TrainArgs {
    /// The agent config (RLgraph's JSON format).
    pub(crate) config: PathBuf,
    /// The environment id (`CartPole-v1`, `GridWorld-2x2`, ...).
    #[arg(long)]
    pub(crate) env: String,
    /// The backend: candle (default) or tch (needs the `tch` feature).
    #[arg(long, default_value = "candle")]
    backend: String,
    /// The device: `cpu`, or `cuda:N` with the tch backend on a CUDA libtorch (replaces the
    /// config's `execution_spec.default_device`; without either, the CPU).
    #[arg(long)]
    device: Option<String>,
    /// Environment steps to train for, in total: a resumed run counts the steps of its
    /// earlier legs (schedules such as epsilon run over this many).
    #[arg(long, conflicts_with = "episodes")]
    pub(crate) timesteps: Option<u64>,
    /// Episodes to train for, in total over resumed legs (bounded by 1,000,000 steps).
    #[arg(long)]
    pub(crate) episodes: Option<u64>,
    /// Pause once the run's total steps reach this: write the outputs and checkpoint (with
    /// `--out`) and exit, as a job that must end early; `--resume` continues exactly.
    #[arg(long)]
    pub(crate) pause_at: Option<u64>,
    /// The seed of everything random (default: the config's `execution_spec.seed`, else 0).
    #[arg(long = "seed")]
    pub(crate) seed_flag: Option<u64>,
    /// The seed in use: `--seed`, else the config's `execution_spec.seed`, else 0.
    #[arg(skip)]
    pub(crate) seed: u64,
    /// Parallel environment copies.
    #[arg(long, default_value_t = 1, value_parser = env_count)]
    pub(crate) num_envs: usize,
    /// Where to write `config.json`, `episodes.csv`, `checkpoint.safetensors`,
    /// `summary.json`, a TensorBoard event file (`events.out.tfevents.*`) and, where the agent
    /// can be exported, its acting graph as `model.onnx`.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Resume from the checkpoint in this directory (written by an earlier `--out`).
    #[arg(long)]
    pub(crate) resume: Option<PathBuf>,
    /// With `--out`: also save the checkpoint every this many steps (0: only at the end).
    #[arg(long, default_value_t = 0, requires = "out")]
    pub(crate) checkpoint_every: u64,
    /// Stop once the mean return of the last 100 episodes reaches this (475 solves CartPole);
    /// with `--eval-every`, once an evaluation round's mean reaches it.
    #[arg(long, value_parser = finite)]
    pub(crate) target_return: Option<f64>,
    /// Every this many steps, play `--eval-episodes` greedy episodes (deterministic actions,
    /// on environment copies of their own, fresh starts each round) and report their mean in
    /// the summary's `evaluations` and TensorBoard's `eval/return`; `--target-return` then
    /// applies to that mean. The evaluation's steps are not training steps.
    #[arg(long, value_parser = positive)]
    pub(crate) eval_every: Option<u64>,
    /// With `--out`: every this many steps, play one greedy episode (at most 1,000 steps) and
    /// record it as `OUT/videos/step-<steps>.gif`, from the environment's RGB rendering (as
    /// `evaluate --video`); an environment that cannot draw itself is refused at the start.
    #[arg(long, value_parser = positive, requires = "out", conflicts_with = "tensor_envs")]
    pub(crate) video_every: Option<u64>,
    /// Episodes per evaluation round (one per environment copy), with `--eval-every`.
    #[arg(long, default_value_t = 100, requires = "eval_every", value_parser = env_count)]
    pub(crate) eval_episodes: usize,
    /// When a loss or weight becomes NaN or infinite: `stop` with an error naming the step
    /// and the variable, or `warn`, which goes on and reports `diverged_at_timestep`.
    #[arg(long, default_value = "stop", value_parser = on_divergence)]
    pub(crate) on_divergence: executors::OnDivergence,
    /// Run this many device-resident copies of the environment (`rlgraph-tensor-envs`) on the
    /// agent's device instead of host environments; observations never leave the device.
    /// PPO configs only. Checkpoints, `--resume` and `--pause-at` work as on host
    /// environments (a resumed run needs the same `--tensor-envs` and `--seed`);
    /// `--eval-every` plays its rounds on host copies of the same environment.
    #[arg(long, conflicts_with = "num_envs", value_parser = tensor_env_count)]
    tensor_envs: Option<usize>,
    /// Record a cross-stack profile into this directory: `events.json` (raw events, read by
    /// `rlgraph profile report DIR`) and `trace.json` (Chrome trace events, for Perfetto).
    #[arg(long)]
    profile: Option<PathBuf>,
}

/// The most host environment copies one worker steps (`--num-envs`).
const MAX_ENVS: usize = 4096;

/// The most device-resident environment copies (`--tensor-envs`).
const MAX_TENSOR_ENVS: usize = 1 << 20;

/// A count between 1 and `max`, for clap.
fn count_in(text: &str, max: usize) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number from 1 to {max}")),
    }
}

fn env_count(text: &str) -> Result<usize, String> {
    count_in(text, MAX_ENVS)
}

fn tensor_env_count(text: &str) -> Result<usize, String> {
    count_in(text, MAX_TENSOR_ENVS)
}

/// `stop` or `warn`, for clap.
fn on_divergence(text: &str) -> Result<executors::OnDivergence, String> {
    executors::OnDivergence::parse(text).ok_or_else(|| "expected stop or warn".into())
}

/// A whole number of at least 1, for clap.
fn positive(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("expected a whole number of at least 1".into()),
    }
}

/// A finite number, for clap (`--target-return NaN` would never be reached).
fn finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err("expected a finite number".into()),
    }
}

/// Runs the subcommand and returns the JSON summary, or a one-line error.
pub fn run(args: &TrainArgs) -> Result<String, String> {
    if let Some(device) = args
        .device
        .as_deref()
        .filter(|d| rlgraph_core::Device::parse(d).is_none())
    {
        return Err(format!("--device {device}: use cpu or cuda:N"));
    }
    let Some(dir) = &args.profile else {
        return on_backend(&args.backend, args);
    };
    crate::profile_command::start(dir)?;
    let trained = on_backend(&args.backend, args);
    let profile = crate::profile_command::finish(dir)?;
    let mut summary: Json = serde_json::from_str(&trained?).map_err(|e| format!("the summary is not JSON: {e}"))?;
    summary["profile"] = profile;
    Ok(summary.to_string())
}

impl TrainArgs {
    /// These arguments with the seed resolved from the config `json` they name: `--seed`,
    /// else the config's `execution_spec.seed` (RLgraph's graph seed), else 0.
    fn seeded(&self, json: &Json) -> Result<TrainArgs, String> {
        let mut args = self.clone();
        args.seed = match self.seed_flag {
            Some(seed) => seed,
            None => config_seed(json, &self.config)?.unwrap_or(0),
        };
        Ok(args)
    }
}

/// The config's `execution_spec.seed`, if it has one.
fn config_seed(json: &Json, path: &Path) -> Result<Option<u64>, String> {
    match json.pointer("/execution_spec/seed") {
        None | Some(Json::Null) => Ok(None),
        Some(seed) => seed.as_u64().map(Some).ok_or_else(|| {
            format!(
                "{}: config.execution_spec.seed: expected a non-negative integer, got {seed}",
                path.display()
            )
        }),
    }
}

impl OnBackend for TrainArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        train::<B>(self)
    }
}

/// `train --tensor-envs N`: PPO against N device-resident copies.
fn train_on_device<B: Backend>(args: &TrainArgs, json: &Json, copies: usize) -> Result<String, String> {
    let not_ppo = || {
        format!(
            "{}: --tensor-envs trains PPO configs (type \"ppo\"), not {}",
            args.config.display(),
            json.get("type").unwrap_or(&Json::Null)
        )
    };
    if agents::agent_family(json).ok() != Some(agents::AgentFamily::PolicyGradient) {
        return Err(not_ppo());
    }
    let config = agents::PgConfig::parse(json).map_err(|e| format!("{}: {e}", args.config.display()))?;
    if !matches!(config.algorithm, agents::PgAlgorithm::Ppo { .. }) {
        return Err(not_ppo());
    }
    if config.recurrence.is_some() {
        return Err(format!(
            "{}: config.network_spec: device-resident environments train memoryless policies; \
             train a recurrent policy on a native or gym: environment",
            args.config.display()
        ));
    }
    let device = config.device;
    let envs = rlgraph_tensor_envs::make::<B>(&args.env, copies, args.seed, device).map_err(|e| e.to_string())?;
    let agent = agents::PgAgent::<B>::new(config, envs.state_space(), envs.action_space(), args.seed)
        .map_err(|e| format!("{}: {e}", args.config.display()))?;
    let mut worker = executors::DeviceWorker::new(agent, envs).with_divergence(args.on_divergence);
    if let Some(target) = args.target_return {
        worker = worker.with_target_return(target);
    }
    if let Some(every) = args.eval_every {
        let envs = vector_env(&args.env, args.eval_episodes, args.seed)
            .map_err(|e| format!("--eval-every plays host copies of {}: {e}", args.env))?;
        worker = worker.with_evaluation(executors::Evaluation::new(every, envs), args.seed);
    }
    if let (Some(dir), true) = (&args.out, args.checkpoint_every > 0) {
        worker = worker.with_checkpoints(args.checkpoint_every, dir.join(CHECKPOINT_FILE));
    }
    let (mut summary, _) = drive::<B, _>(args, worker, 1_000_000)?;
    summary["tensor_envs"] = copies.into();
    summary["device"] = device.to_string().into();
    if let Some(dir) = &args.out {
        write_file(dir, "summary.json", summary.to_string().as_bytes())?;
    }
    Ok(summary.to_string())
}

/// The file `--out` checkpoints into and `--resume` reads.
const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

/// Runs `worker` as `args` say, as `rlgraph train` does on every worker: resumes from
/// `--resume`, reports progress on a bar and into TensorBoard, pauses at `--pause-at`, and
/// with `--out` writes `episodes.csv` and the final checkpoint. Returns the summary (whole
/// run, this leg's speed), which the caller completes and writes, and the worker. A run of `--episodes` without
/// `--timesteps` is bounded by 1,000,000 steps, one of neither by `default_steps`.
fn drive<B: Backend, W: Worker>(args: &TrainArgs, mut worker: W, default_steps: u64) -> Result<(Json, W), String> {
    if let Some(dir) = &args.resume {
        worker.resume(&dir.join(CHECKPOINT_FILE)).map_err(|e| e.to_string())?;
    }
    // Progress counts the whole run: a resumed leg starts where the last one stopped.
    let before = worker.tally().clone();
    // With --out, the directory is resumable from the start: the config now, checkpoints as
    // asked, and a TensorBoard event file written as episodes finish.
    let mut events = open_out_dir(args)?;
    let mut event_error = None;
    // Episodes count from this leg's start, evaluation rounds over the whole run.
    let mut logged = (0usize, before.evaluations.len());
    let total = args.timesteps.unwrap_or(if args.episodes.is_some() {
        1_000_000
    } else {
        default_steps
    });
    let bar = progress_bar(total);
    bar.set_position(before.timesteps);
    let mut last_draw = None;
    let mut progress = |p: &executors::Progress<'_>| {
        let step = before.timesteps + p.timesteps;
        if let Some(w) = events.as_mut() {
            if let Err(e) = log_progress(w, p, step, &mut logged) {
                event_error.get_or_insert(e);
            }
            if let (Some(loss), true) = (
                p.loss,
                step % 100 < args.num_envs.max(1) as u64 || args.tensor_envs.is_some(),
            ) {
                if let Err(e) = w.scalar("train/loss", step, loss) {
                    event_error.get_or_insert(e);
                }
            }
        }
        if last_draw.is_none_or(|at| p.timesteps - at >= 200) {
            last_draw = Some(p.timesteps);
            let recent = &p.episode_rewards[p.episode_rewards.len().saturating_sub(10)..];
            let mean = if recent.is_empty() {
                f64::NAN
            } else {
                recent.iter().sum::<f64>() / recent.len() as f64
            };
            let eval = p
                .evaluations
                .last()
                .map_or(String::new(), |e| format!(" | eval {:.1}", e.mean_return));
            bar.set_position(step);
            bar.set_message(format!(
                "| episodes {} | mean return (last 10) {mean:.1}{eval} | {:.0} steps/s",
                before.episode_returns.len() as u64 + p.episodes,
                p.timesteps as f64 / p.elapsed.max(1e-9)
            ));
        }
    };
    let length = executors::RunLength {
        timesteps: total,
        episodes: args.episodes,
        pause_at: args.pause_at,
    };
    let stats = worker.execute_run(length, &mut progress).map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    warn_if_diverged(&stats);
    if let Some(e) = event_error {
        return Err(e);
    }
    if let Some(w) = events.as_mut() {
        w.flush()?;
    }
    // The summary covers the whole run, earlier legs included; speed is this leg's.
    let run = worker.run_stats(&stats);
    let mut summary = run.to_json();
    summary["wall_clock_seconds"] = stats.runtime_seconds.into();
    summary["env"] = args.env.clone().into();
    summary["backend"] = B::NAME.into();
    if args.resume.is_some() {
        summary["resumed_at_timestep"] = before.timesteps.into();
    }
    let at = worker.tally().timesteps;
    if at < total && args.pause_at.is_some() && stats.solved_at_timestep.is_none() {
        summary["paused_at_timestep"] = at.into();
    }
    if let Some(dir) = &args.out {
        write_file(dir, "episodes.csv", run.episodes_csv().as_bytes())?;
        worker
            .save_checkpoint(&dir.join(CHECKPOINT_FILE))
            .map_err(|e| e.to_string())?;
    }
    Ok((summary, worker))
}

/// Writes what a worker's progress report adds since the last one (`logged` counts the
/// episodes and evaluation rounds written so far) as TensorBoard scalars at the run's `step`.
fn log_progress(
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

fn train<B: Backend>(args: &TrainArgs) -> Result<String, String> {
    let json = crate::agent_commands::read_config(&args.config, args.device.as_deref())?;
    let args = &args.seeded(&json)?;
    if let Some(copies) = args.tensor_envs {
        return train_on_device::<B>(args, &json, copies);
    }
    if executors::ga3c::Ga3cSpec::from_config(&json)
        .map_err(|e| format!("{}: {e}", args.config.display()))?
        .is_some()
    {
        return crate::train_ga3c::train_ga3c::<B>(args, &json);
    }
    let agent = crate::agent_commands::build_agent_from::<B>(&json, &args.config, &args.env, args.seed)?;
    let envs = vector_env(&args.env, args.num_envs, args.seed)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, args.seed).with_divergence(args.on_divergence);
    if let Some(every) = args.eval_every {
        let envs = vector_env(&args.env, args.eval_episodes, args.seed)?;
        worker = worker.with_evaluation(executors::Evaluation::new(every, envs));
    }
    if let (Some(every), Some(dir)) = (args.video_every, &args.out) {
        worker = worker.with_hook(every, video_hook(args, dir)?);
    }
    if let Some(target) = args.target_return {
        worker = worker.with_target_return(target);
    }
    if let (Some(dir), true) = (&args.out, args.checkpoint_every > 0) {
        worker = worker.with_checkpoints(args.checkpoint_every, dir.join(CHECKPOINT_FILE));
    }
    let (mut summary, worker) = drive::<B, _>(args, worker, 20_000)?;
    summary["threads"] = crate::backend_choice::threads_json(B::NAME);
    if let Some(dir) = &args.out {
        write_file(dir, "summary.json", summary.to_string().as_bytes())?;
        // The acting graph for other runtimes, where the exporter can write the agent
        // (`rlgraph export` says why where it cannot).
        if let Ok(model) = crate::export_command::onnx_model(&json, &args.env, worker.agent().as_ref()) {
            write_file(dir, "model.onnx", &model)?;
        }
    }
    Ok(summary.to_string())
}

/// What `--video-every` does every so many steps: one greedy episode on an environment of its
/// own (reset from the run's seed plus the step), recorded into `OUT/videos/step-<steps>.gif`.
/// Refused here, before the run starts, where the environment cannot draw itself.
fn video_hook(
    args: &TrainArgs,
    out: &std::path::Path,
) -> Result<impl FnMut(&mut Box<dyn agents::Agent + Send>, u64) -> rlgraph_core::Result<()> + Send + 'static, String> {
    let mut env = make(&args.env, args.seed).map_err(|e| e.to_string())?;
    env.reset(Some(args.seed)).map_err(|e| e.to_string())?;
    env.render().map_err(|e| format!("--video-every: {e}"))?;
    let dir = out.join("videos");
    std::fs::create_dir_all(&dir).map_err(|e| format!("--video-every: cannot make {}: {e}", dir.display()))?;
    let seed = args.seed;
    Ok(move |agent: &mut Box<dyn agents::Agent + Send>, step: u64| {
        let path = dir.join(format!("step-{step}.gif"));
        crate::agent_commands::play_episode(agent.as_mut(), env.as_mut(), seed.wrapping_add(step), 1000, Some(&path))
            .map(|_| ())
            .map_err(|reason| rlgraph_core::CoreError::Config {
                at: format!("--video-every (step {step})"),
                reason,
            })
    })
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
