//! `rlgraph train`: train an agent from an RLgraph JSON config on an environment, with a
//! progress bar, per-episode metrics as CSV and as a TensorBoard event file, periodic and
//! final checkpoints, and a JSON summary at the end.

use executors::SingleThreadedWorker;
use rlgraph_core::Backend;
use rlgraph_envs::make;
use serde_json::Value as Json;

use crate::backend_choice::{on_backend, OnBackend};
use crate::output_files::write_file;
use crate::run_outputs::{drive, vector_env, CHECKPOINT_FILE};
pub use crate::train_args::TrainArgs;

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

impl OnBackend for TrainArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        train::<B>(self)
    }
}

/// `train --tensor-envs N`: an agent that trains on device-resident copies, N of them.
fn train_on_device<B: Backend>(args: &TrainArgs, json: &Json, copies: usize) -> Result<String, String> {
    let at_config = |e: rlgraph_core::CoreError| format!("{}: {e}", args.config.display());
    let algorithm = agents::tensor_algorithm::<B>(json).map_err(at_config)?.ok_or_else(|| {
        format!(
            "{}: --tensor-envs trains configs of type {}, not {}",
            args.config.display(),
            agents::types_offering::<B>(agents::Layout::Tensors)
                .iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            json.get("type").unwrap_or(&Json::Null)
        )
    })?;
    let device = algorithm.device();
    let restarts = match args.tensor_restarts {
        crate::train_args::TensorRestarts::Stream => rlgraph_tensor_envs::Restarts::Stream {
            depth: rlgraph_tensor_envs::default_depth(copies),
        },
        crate::train_args::TensorRestarts::Philox => rlgraph_tensor_envs::Restarts::Philox,
    };
    let envs = rlgraph_tensor_envs::make_with::<B>(&args.env, copies, args.seed, device, restarts)
        .map_err(|e| e.to_string())?;
    let agent = algorithm
        .agent(envs.state_space(), envs.action_space(), args.seed)
        .map_err(at_config)?;
    let mut worker = executors::DeviceWorker::new(agent, envs)
        .with_divergence(args.on_divergence)
        .with_device_draws(args.seed)
        .with_recording(args.cuda_graphs == crate::train_args::OnOff::On);
    if let Some(target) = args.target_return {
        worker = worker.with_target_return(target);
    }
    if let Some(every) = args.eval_every {
        let envs = vector_env(&args.env, args.eval_episodes, args.seed, args.bridge_processes)
            .map_err(|e| format!("--eval-every plays host copies of {}: {e}", args.env))?;
        worker = worker.with_evaluation(executors::Evaluation::new(every, envs), args.seed);
    }
    if let (Some(dir), true) = (&args.out, args.checkpoint_every > 0) {
        worker = worker.with_checkpoints(args.checkpoint_every, dir.join(CHECKPOINT_FILE));
    }
    let mut summary = drive::<B, _>(args, &mut worker, 1_000_000, CHECKPOINT_FILE)?;
    summary["tensor_envs"] = copies.into();
    // Whether rollouts and updates replayed recordings (true), why not (a string), or undecided.
    let recorded = |state: Option<Result<(), String>>| match state {
        Some(Ok(())) => Json::Bool(true),
        Some(Err(why)) => why.into(),
        None => Json::Null,
    };
    summary["recorded_rollouts"] = recorded(worker.rollout_recording());
    summary["recorded_updates"] = recorded(worker.agent().recording());
    summary["device"] = device.to_string().into();
    if let Some(dir) = &args.out {
        write_file(dir, "summary.json", summary.to_string().as_bytes())?;
    }
    Ok(summary.to_string())
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
    if args.record.is_some() {
        return Err(format!(
            "--record: logs the learner of a GA3C run (execution_spec.executor \"ga3c\") or a distributed one \
             (rlgraph launch --record); {} trains in one process, which its seed already repeats",
            args.config.display()
        ));
    }
    // The agent takes the copies' spaces, so no environment is made only to read them.
    let envs = vector_env(&args.env, args.num_envs, args.seed, args.bridge_processes)?;
    let agent = crate::agent_commands::build_agent_for::<B>(
        &json,
        &args.config,
        envs.state_space(),
        envs.action_space(),
        args.seed,
    )?;
    let mut worker = SingleThreadedWorker::new(agent, envs, args.seed).with_divergence(args.on_divergence);
    if let Some(every) = args.eval_every {
        let envs = vector_env(&args.env, args.eval_episodes, args.seed, args.bridge_processes)?;
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
    let mut summary = drive::<B, _>(args, &mut worker, 20_000, CHECKPOINT_FILE)?;
    summary["threads"] = crate::backend_choice::threads_json(B::NAME);
    // What a resume (`--resume`, or Python's `Agent.load`) must step as many of.
    summary["num_envs"] = args.num_envs.into();
    if let Some(dir) = &args.out {
        write_file(dir, "summary.json", summary.to_string().as_bytes())?;
        // The acting graph for other runtimes, where the exporter can write the agent; where
        // it cannot, the run still succeeds and says why there is no model.
        match crate::export_command::onnx_model(&json, &args.env, worker.agent().as_ref()) {
            Ok(model) => write_file(dir, "model.onnx", &model)?,
            Err(why) => crate::output_files::stderr_line(&format!("note: --out: no model.onnx: {why}")),
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
