//! The arguments of `rlgraph train`, their checks, and the seed they resolve to.

use std::path::PathBuf;

use clap::Args;
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
    pub(crate) backend: String,
    /// The device: `cpu`, or `cuda:N` with the tch backend on a CUDA libtorch (replaces the
    /// config's `execution_spec.default_device`; without either, the CPU).
    #[arg(long)]
    pub(crate) device: Option<String>,
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
    /// Python processes for bridged Gymnasium copies (`gym:` ids), each stepping its share of
    /// the copies with one message (default: one per core, at most one per copy).
    #[arg(long, value_parser = env_count)]
    pub(crate) bridge_processes: Option<usize>,
    /// Where to write `config.json`, `episodes.csv`, the training curve `curve.svg` (the mean
    /// return of the last 100 episodes), `checkpoint.safetensors`, `summary.json`, a
    /// TensorBoard event file (`events.out.tfevents.*`) and, where the agent can be exported,
    /// its acting graph as `model.onnx`.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Resume from the checkpoint in this directory (written by an earlier `--out`).
    #[arg(long)]
    pub(crate) resume: Option<PathBuf>,
    /// With `--out`: also save the checkpoint every this many steps (0: only at the end).
    #[arg(long, default_value_t = 0, requires = "out")]
    pub(crate) checkpoint_every: u64,
    /// A GA3C run's learner logs its input here (each batch its trainers learn on, in the
    /// order they took the learner, its publications and checkpoints) for `rlgraph replay`,
    /// which runs the learner again to the same checkpoint: GA3C's threads make every run
    /// different, the log makes one repeatable. A resumed run appends to the same log.
    #[arg(long)]
    pub(crate) record: Option<PathBuf>,
    /// The learner input log's segments roll over past this many MiB.
    #[arg(long, default_value_t = 64, requires = "record", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) record_segment_mib: u64,
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
    pub(crate) tensor_envs: Option<usize>,
    /// Where `--tensor-envs` copies restart from: `stream`, a pool of start states drawn once
    /// on the host (the host environments' own draws, cycling after 64 per copy), or
    /// `philox`, Philox4x32-10 draws on the device (no pool, no cycle).
    #[arg(long, value_enum, default_value = "stream", requires = "tensor_envs")]
    pub(crate) tensor_restarts: TensorRestarts,
    /// On a CUDA device, `--tensor-envs` runs record a rollout and an update once each and
    /// replay them as CUDA graphs (`on`, the default), with the acting's and the minibatches'
    /// random draws made by the device's generator seeded from `--seed`; `off` runs every op
    /// on its own (the draws still on the device). No effect elsewhere.
    #[arg(long, value_enum, default_value = "on", requires = "tensor_envs")]
    pub(crate) cuda_graphs: OnOff,
    /// Record a cross-stack profile into this directory: `events.json` (raw events, read by
    /// `rlgraph profile report DIR`) and `trace.json` (Chrome trace events, for Perfetto).
    #[arg(long)]
    pub(crate) profile: Option<PathBuf>,
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

pub(crate) fn env_count(text: &str) -> Result<usize, String> {
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
pub(crate) fn finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err("expected a finite number".into()),
    }
}

impl TrainArgs {
    /// These arguments with the seed resolved from the config `json` they name: `--seed`,
    /// else the config's `execution_spec.seed` (RLgraph's graph seed), else 0.
    pub(crate) fn seeded(&self, json: &Json) -> Result<TrainArgs, String> {
        let mut args = self.clone();
        args.seed = match self.seed_flag {
            Some(seed) => seed,
            None => config_seed(json)
                .map_err(|e| format!("{}: {e}", self.config.display()))?
                .unwrap_or(0),
        };
        Ok(args)
    }
}

/// The config's `execution_spec.seed` (RLgraph's graph seed), if it has one.
pub fn config_seed(json: &Json) -> Result<Option<u64>, String> {
    match json.pointer("/execution_spec/seed") {
        None | Some(Json::Null) => Ok(None),
        Some(seed) => seed
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("config.execution_spec.seed: expected a non-negative integer, got {seed}")),
    }
}

/// A switch given as `on` or `off`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnOff {
    /// Turned on.
    On,
    /// Turned off.
    Off,
}

/// `--tensor-restarts`: where device-resident copies restart from.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TensorRestarts {
    /// A pool of start states drawn once on the host.
    Stream,
    /// Philox4x32-10 draws on the device.
    Philox,
}
