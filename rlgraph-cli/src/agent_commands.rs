//! `rlgraph graph` and `rlgraph evaluate`: an agent's meta graph, and greedy episodes of a
//! trained agent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agents::Agent;
use clap::Args;
use rlgraph_core::{Backend, ComponentView, ViewOptions};

use crate::backend_choice::{on_backend, OnBackend};
use rlgraph_envs::make;
use serde_json::{json, Value as Json};

/// Builds the agent a config file describes (any type `agents::build_agent` knows), for the
/// environment `env`; `device` (`cpu`, `cuda:N`) replaces the config's
/// `execution_spec.default_device`.
pub fn build_agent<B: Backend>(
    config: &std::path::Path,
    env: &str,
    seed: u64,
    device: Option<&str>,
) -> Result<Box<dyn Agent + Send>, String> {
    build_agent_from::<B>(&read_config(config, device)?, config, env, seed)
}

/// Builds the agent of `json`, a config already read from the file `config` (which errors
/// name), for the environment `env`.
pub fn build_agent_from<B: Backend>(
    json: &Json,
    config: &std::path::Path,
    env: &str,
    seed: u64,
) -> Result<Box<dyn Agent + Send>, String> {
    let probe = make(env, seed).map_err(|e| e.to_string())?;
    build_agent_for::<B>(json, config, probe.state_space(), probe.action_space(), seed)
}

/// The agent `json` (read from `config`) describes, for the spaces of environments the caller
/// has already made.
pub fn build_agent_for<B: Backend>(
    json: &Json,
    config: &std::path::Path,
    state_space: &rlgraph_core::spaces::Space,
    action_space: &rlgraph_core::spaces::Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>, String> {
    agents::build_agent::<B>(json, state_space, action_space, seed).map_err(|e| format!("{}: {e}", config.display()))
}

/// The config at `config` as JSON, with `execution_spec.default_device` set to `device` if
/// given; keys accepted but not used are noted on stderr.
pub fn read_config(config: &std::path::Path, device: Option<&str>) -> Result<Json, String> {
    let read = executors::read_config_file(config, device)?;
    for note in &read.notes {
        crate::output_files::stderr_line(note);
    }
    Ok(read.json)
}

/// Arguments of `rlgraph graph`.
#[derive(Args)]
pub struct GraphArgs {
    /// The agent config.
    config: PathBuf,
    /// The environment id, which fixes the state and action spaces.
    #[arg(long)]
    env: String,
    /// `components` (one box per component, scopes as clusters, edges labelled with the API
    /// methods data flows into), `calls` (every API-call instance and graph function) or
    /// `plan` (the compiled kernel steps of `--method`, fused chains in bold).
    #[arg(long, default_value = "components")]
    view: String,
    /// Keep only what this root API method reaches (`update`, `get_action`, ...).
    #[arg(long)]
    method: Option<String>,
    /// Components view: merge components more than N levels below the drawn root into one
    /// box each.
    #[arg(long)]
    depth: Option<usize>,
    /// Components view: draw only this scope path and what lies under it.
    #[arg(long)]
    scope: Option<String>,
    /// `dot` (Graphviz), `json` (every node in full, variables listed per box) or `html`
    /// (components view: one self-contained page, scopes collapse on a click, hover shows
    /// spaces and devices, a search box finds components).
    #[arg(long, default_value = "dot")]
    format: String,
    /// The backend: candle (default) or tch (needs the `tch` feature).
    #[arg(long, default_value = "candle")]
    backend: String,
    /// Components view: colour each box by its share of the backend time recorded by
    /// `rlgraph train --profile DIR` (reads `DIR/events.json`).
    #[arg(long)]
    profile: Option<PathBuf>,
}

/// Each component's plan-step time in a profile, by scope path.
fn backend_time_by_component(dir: &Path) -> Result<BTreeMap<String, f64>, String> {
    use rlgraph_core::profiler::{Category, Event, Kind};
    let events: Vec<Event> = rlgraph_core::profiler::read_json(&dir.join("events.json")).map_err(|e| e.to_string())?;
    let mut by = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == Kind::Capture(Category::Backend)) {
        *by.entry(e.name.as_str().to_string()).or_default() += e.duration() as f64;
    }
    Ok(by)
}

/// Prints a picture of the agent's graph, with its spaces and devices.
pub fn graph(args: &GraphArgs) -> Result<String, String> {
    if !matches!(args.format.as_str(), "dot" | "json" | "html") {
        return Err(format!("--format {}: use dot, json or html", args.format));
    }
    if args.profile.is_some() && args.view != "components" {
        return Err(format!(
            "--profile colours the components view, not --view {}",
            args.view
        ));
    }
    if args.format == "html" && args.view != "components" {
        return Err(format!(
            "--format html draws the components view, not --view {}",
            args.view
        ));
    }
    on_backend(&args.backend, args)
}

impl OnBackend for GraphArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        let agent = build_agent::<B>(&self.config, &self.env, 0, None)?;
        let exec = agent
            .graph()
            .ok_or_else(|| format!("{}: this agent has no graph", self.config.display()))?;
        let meta = exec.meta_graph();
        let json = self.format == "json";
        match self.view.as_str() {
            "components" => {
                let shapes = exec
                    .variables()
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .map(|(path, t)| (path, t.shape))
                    .collect();
                let options = ViewOptions {
                    method: self.method.clone(),
                    depth: self.depth,
                    scope: self.scope.clone(),
                };
                let mut view = ComponentView::new(meta, &shapes, &options).map_err(|e| e.to_string())?;
                if let Some(dir) = &self.profile {
                    view.set_timings(&backend_time_by_component(dir)?);
                }
                Ok(match self.format.as_str() {
                    "json" => view.to_json().to_string(),
                    "html" => view.to_html(&format!("{} on {}", self.config.display(), self.env)),
                    _ => view.to_dot(),
                })
            }
            "calls" => {
                if self.depth.is_some() || self.scope.is_some() {
                    return Err("--depth and --scope focus the components view; use --view components".into());
                }
                if json {
                    return Ok(meta.to_json().to_string());
                }
                let only = match &self.method {
                    Some(m) => Some(meta.method_nodes(m).map_err(|e| e.to_string())?),
                    None => None,
                };
                Ok(meta.to_dot(only.as_deref()))
            }
            "plan" => {
                if self.depth.is_some() || self.scope.is_some() || json {
                    return Err("--view plan draws DOT of one root method: give --method, not --depth, --scope or --format json".into());
                }
                let method = self
                    .method
                    .as_deref()
                    .ok_or_else(|| format!("--view plan needs --method, one of {}", exec.api_methods().join(", ")))?;
                exec.plan_dot(method).map_err(|e| e.to_string())
            }
            other => Err(format!("--view {other}: use components, calls or plan")),
        }
    }
}

/// Arguments of `rlgraph evaluate`.
#[derive(Args)]
pub struct EvaluateArgs {
    /// A directory written by `rlgraph train --out` (its `config.json` and
    /// `checkpoint.safetensors`, or `model.safetensors` from the ga3c executor).
    checkpoint: PathBuf,
    /// The environment id.
    #[arg(long)]
    env: String,
    /// Episodes to play, greedily (no exploration, no learning).
    #[arg(long, default_value_t = 10)]
    episodes: u64,
    /// The seed of the first episode's reset (episode `i` uses `seed + i`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Cut an episode after this many steps (a greedy policy can walk into a wall forever
    /// in environments without a time limit, such as GridWorld).
    #[arg(long, default_value_t = 1000)]
    max_steps: u64,
    /// The backend: candle (default) or tch (needs the `tch` feature). Checkpoints hold host
    /// values, so one written on either backend plays on either.
    #[arg(long, default_value = "candle")]
    backend: String,
    /// Record each episode as an animated GIF, `episode-<i>.gif` in this directory, from the
    /// environment's RGB rendering (CartPole-v1 draws itself; a `gym:` id needs
    /// `?render_mode=rgb_array`).
    #[arg(long)]
    video: Option<PathBuf>,
}

/// Plays greedy episodes with a trained agent and prints their returns.
pub fn evaluate(args: &EvaluateArgs) -> Result<String, String> {
    on_backend(&args.backend, args)
}

impl OnBackend for EvaluateArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        play::<B>(self)
    }
}

/// The agent trained into `run` (a `train --out` directory) for the environment `env`: its
/// `config.json`, with `checkpoint.safetensors` restored (or the ga3c executor's
/// `model.safetensors` imported).
pub fn load_trained<B: Backend>(run: &Path, env: &str, seed: u64) -> Result<Box<dyn Agent + Send>, String> {
    let mut agent = build_agent::<B>(&run.join("config.json"), env, seed, None)?;
    restore_trained(agent.as_mut(), run)?;
    Ok(agent)
}

/// Gives `agent` what was trained into `run` (a `train --out` directory of any layout):
/// its `checkpoint.safetensors`, or the GA3C executor's `model.safetensors`.
pub fn restore_trained(agent: &mut (dyn Agent + Send), run: &Path) -> Result<(), String> {
    let checkpoint = run.join(crate::run_outputs::CHECKPOINT_FILE);
    let model = run.join(crate::run_outputs::GA3C_MODEL_FILE);
    if !checkpoint.exists() && model.exists() {
        agent.import_model(&model)
    } else {
        agent.restore_checkpoint(&checkpoint)
    }
    .map_err(|e| e.to_string())
}

/// The `env` a run's `summary.json` names.
pub fn env_of_run(run: &std::path::Path) -> Result<String, String> {
    let path = run.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {} for the run's environment ({e}); pass --env",
            path.display()
        )
    })?;
    let summary: Json = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    summary["env"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{} names no env; pass --env", path.display()))
}

/// Plays one greedy episode of `agent` on `env` from `reset(seed)`, at most `max_steps` steps,
/// recording it as an animated GIF at `video` where given; returns its return.
pub fn play_episode(
    agent: &mut (dyn Agent + Send),
    env: &mut dyn rlgraph_envs::Env,
    seed: u64,
    max_steps: u64,
    video: Option<&Path>,
) -> Result<f64, String> {
    let mut state = env.reset(Some(seed)).map_err(|e| e.to_string())?;
    agent.begin_episodes(false, &[0]).map_err(|e| e.to_string())?;
    let mut gif = match video {
        Some(path) => {
            let first = env.render().map_err(|e| e.to_string())?;
            Some(crate::video::GifWriter::start(path, &first)?)
        }
        None => None,
    };
    let mut total = 0.0;
    for _ in 0..max_steps {
        let action = agent
            .get_actions(std::slice::from_ref(&state), false, 1.0)
            .map_err(|e| e.to_string())?
            .remove(0);
        let step = env.step(&action).map_err(|e| e.to_string())?;
        if let Some(gif) = gif.as_mut() {
            gif.push(&env.render().map_err(|e| e.to_string())?)?;
        }
        total += step.reward;
        if step.terminated || step.truncated {
            break;
        }
        state = step.observation;
    }
    if let Some(gif) = gif {
        gif.finish()?;
    }
    Ok(total)
}

fn play<B: Backend>(args: &EvaluateArgs) -> Result<String, String> {
    let mut agent = load_trained::<B>(&args.checkpoint, &args.env, args.seed)?;
    let mut env = make(&args.env, args.seed).map_err(|e| e.to_string())?;
    if let Some(dir) = &args.video {
        // Refused before any episode plays: an environment that cannot draw itself.
        env.reset(Some(args.seed)).map_err(|e| e.to_string())?;
        env.render().map_err(|e| format!("--video: {e}"))?;
        std::fs::create_dir_all(dir).map_err(|e| format!("--video: cannot make {}: {e}", dir.display()))?;
    }
    let mut returns = vec![];
    for i in 0..args.episodes {
        let video = args.video.as_ref().map(|dir| dir.join(format!("episode-{i}.gif")));
        returns.push(play_episode(
            agent.as_mut(),
            env.as_mut(),
            args.seed + i,
            args.max_steps,
            video.as_deref(),
        )?);
    }
    let mean = returns.iter().sum::<f64>() / returns.len().max(1) as f64;
    let max = returns.iter().copied().fold(f64::NAN, f64::max);
    Ok(json!({ "episodes": returns.len(), "mean_return": mean, "max_return": max, "returns": returns }).to_string())
}
