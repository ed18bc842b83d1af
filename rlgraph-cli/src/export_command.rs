//! `rlgraph export`: a trained run's acting graph as a file to take elsewhere.

use std::path::PathBuf;

use agents::Agent;
use clap::Args;
use rlgraph_core::Backend;
use serde_json::json;

use crate::agent_commands::{env_of_run, load_trained, read_config};
use crate::backend_choice::{on_backend, OnBackend};

/// Arguments of `rlgraph export`.
#[derive(Args)]
pub struct ExportArgs {
    /// A directory written by `rlgraph train --out`.
    run: PathBuf,
    /// `onnx`: the acting graph (preprocessing, network, action head) with its weights, for
    /// onnxruntime and the like; `safetensors`: the agent's graph variables, as `rlgraph
    /// evaluate` and `act` read them.
    #[arg(long, default_value = "onnx")]
    format: String,
    /// Where to write (default: `model.onnx` or `model.safetensors` in the run directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The environment id, which gives the spaces (default: the `env` of the run's
    /// `summary.json`).
    #[arg(long)]
    env: Option<String>,
}

/// Writes the export and prints where, with its inputs and outputs.
pub fn run(args: &ExportArgs) -> Result<String, String> {
    on_backend("candle", args)
}

impl OnBackend for ExportArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        export::<B>(self)
    }
}

fn export<B: Backend>(args: &ExportArgs) -> Result<String, String> {
    let extension = match args.format.as_str() {
        "onnx" => "onnx",
        "safetensors" => "safetensors",
        other => return Err(format!("--format {other}: use onnx or safetensors")),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.run.join(format!("model.{extension}")));
    let env = match &args.env {
        Some(env) => env.clone(),
        None => env_of_run(&args.run)?,
    };
    let agent = load_trained::<B>(&args.run, &env, 0)?;
    if extension == "safetensors" {
        agent.export_model(&out).map_err(|e| e.to_string())?;
        return Ok(json!({ "written": out, "format": "safetensors" }).to_string());
    }
    let config = read_config(&args.run.join("config.json"), None)?;
    let model = onnx_model(&config, &env, agent.as_ref()).map_err(|e| format!("{}: {e}", args.run.display()))?;
    rlgraph_core::write_atomically(&out, &model).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(json!({ "written": out, "format": "onnx", "opset": rlgraph_onnx::OPSET, "bytes": model.len() }).to_string())
}

/// The ONNX model of `agent`'s acting graph, as `config` built it for the environment `env`.
pub fn onnx_model(config: &serde_json::Value, env: &str, agent: &(dyn Agent + Send)) -> Result<Vec<u8>, String> {
    let probe = rlgraph_envs::make(env, 0).map_err(|e| e.to_string())?;
    let weights = agent.get_weights().map_err(|e| e.to_string())?;
    rlgraph_onnx::export_onnx(config, probe.state_space(), probe.action_space(), &weights).map_err(|e| e.to_string())
}
