//! `rlgraph call SPEC.json`: ComponentTest from the command line, for components and agents.
//!
//! The spec is one JSON object: either `component` (an RLgraph component spec) with
//! `input_spaces` (parameter name to space spec), optional `action_space`, and optional
//! `learn` (`{"method", "loss", "optimizer"}`: adds a `step` method that runs one optimizer
//! update of the component's variables on the loss of that method's output); or `agent` (an
//! RLgraph agent config) with `env` (the environment id that fixes its spaces), and optionally
//! `checkpoint` (a `train --out` directory whose checkpoint is restored first; its
//! `config.json` and `summary.json` stand in for a missing `agent` and `env`). Both take
//! optional `variables` (scope path to value, set before any call). Then `backend`
//! (`"candle"`, the default, or `"tch"`), optional `seed`, and `calls` (a list of
//! `{"method": ..., "inputs": [...] or {...}}`). It prints
//! `{"results": [{"method": ..., "outputs": [...]}, ...]}`.

use std::path::PathBuf;

use clap::Args;
use serde_json::{json, Map, Value as Json};

use std::collections::BTreeMap;

use rlgraph_components::{from_spec_with, training_harness};
use rlgraph_core::convert::value_to_host;
use rlgraph_core::spaces::{Dtype, FloatBox, Space, Value};
use rlgraph_core::{Backend, Component, ComponentTest, CoreError, DType, ErasedExecutor, HostData, HostTensor};

use crate::backend_choice::{on_backend, OnBackend};

/// Arguments of `rlgraph call`.
#[derive(Args)]
pub struct CallArgs {
    /// The call spec: a JSON file, or `-` for standard input.
    spec: PathBuf,
    /// A `train --out` directory: the agent of its `config.json` (for the environment of
    /// its `summary.json`) with its checkpoint restored, unless the spec says otherwise (the
    /// spec's `checkpoint` key).
    #[arg(long)]
    checkpoint: Option<PathBuf>,
}

const KEYS: [&str; 11] = [
    "agent",
    "checkpoint",
    "learn",
    "env",
    "component",
    "input_spaces",
    "action_space",
    "backend",
    "seed",
    "variables",
    "calls",
];

/// Runs the subcommand and returns the JSON results, or a one-line error.
pub fn run(args: &CallArgs) -> Result<String, String> {
    let text = if args.spec.as_os_str() == "-" {
        crate::backend_choice::read_stdin().map_err(|e| format!("cannot read standard input: {e}"))?
    } else {
        std::fs::read_to_string(&args.spec).map_err(|e| format!("cannot read {}: {e}", args.spec.display()))?
    };
    let not_json = |e: serde_json::Error| format!("{}: not JSON: {e}", args.spec.display());
    let Some(run) = &args.checkpoint else {
        return run_spec(&text).map_err(|e| match e {
            SpecError::NotJson(e) => not_json(e),
            SpecError::Refused(e) => e,
        });
    };
    let mut spec: Json = serde_json::from_str(&text).map_err(not_json)?;
    if let Some(obj) = spec.as_object_mut() {
        obj.entry("checkpoint").or_insert_with(|| json!(run));
    }
    run_json(&spec)
}

/// Why a call spec's text gave no results.
#[derive(Debug)]
pub enum SpecError {
    /// The text is not JSON.
    NotJson(serde_json::Error),
    /// The spec was read and refused, or a call failed: the one-line message.
    Refused(String),
}

/// Runs the calls of a call spec given as JSON text (what `rlgraph call` reads from its file)
/// and returns the JSON results.
pub fn run_spec(text: &str) -> Result<String, SpecError> {
    let spec: Json = serde_json::from_str(text).map_err(SpecError::NotJson)?;
    run_json(&spec).map_err(SpecError::Refused)
}

fn run_json(spec: &Json) -> Result<String, String> {
    let obj = spec.as_object().ok_or("the call spec must be a JSON object")?;
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key {k:?} in the call spec; allowed: {}",
            KEYS.join(", ")
        ));
    }
    let backend = obj
        .get("backend")
        .map(|b| b.as_str().ok_or("\"backend\" must be a string"))
        .transpose()?
        .unwrap_or("candle");
    let out = on_backend(backend, &CallTask(obj.clone()))?;
    serde_json::to_string(&out).map_err(|e| e.to_string())
}

/// The calls of one spec, on whichever backend it names.
pub(crate) struct CallTask(Map<String, Json>);

impl OnBackend for CallTask {
    type Output = Json;
    fn run<B: Backend>(&self) -> Result<Json, String> {
        run_on::<B>(&self.0).map_err(|e| e.to_string())
    }
}

fn config(at: &str, reason: impl Into<String>) -> CoreError {
    CoreError::Config {
        at: at.into(),
        reason: reason.into(),
    }
}

fn run_on<B: Backend>(obj: &Map<String, Json>) -> Result<Json, CoreError> {
    let seed = match obj.get("seed") {
        None => 0,
        Some(j) => j
            .as_u64()
            .ok_or_else(|| config("seed", "must be a non-negative integer"))?,
    };
    let run = obj
        .get("checkpoint")
        .map(|c| {
            c.as_str()
                .map(std::path::Path::new)
                .ok_or_else(|| config("checkpoint", "must be a path"))
        })
        .transpose()?;
    if run.is_some() && obj.contains_key("component") {
        return Err(config(
            "checkpoint",
            "belongs to agent calls (a component has no checkpoint); give \"agent\" or drop it",
        ));
    }
    let from_run = |e: String| config("checkpoint", e);
    let run_agent = match (obj.get("agent"), run) {
        (None, Some(run)) => {
            Some(crate::agent_commands::read_config(&run.join("config.json"), None).map_err(from_run)?)
        }
        _ => None,
    };
    let run_env = match (obj.get("env"), run) {
        (None, Some(run)) => Some(Json::from(crate::agent_commands::env_of_run(run).map_err(from_run)?)),
        _ => None,
    };
    if let Some(agent_spec) = obj.get("agent").or(run_agent.as_ref()) {
        for key in ["component", "input_spaces", "action_space", "learn"] {
            if obj.contains_key(key) {
                return Err(config(
                    key,
                    "belongs to component calls; an agent's spaces come from \"env\"",
                ));
            }
        }
        let env_id = obj
            .get("env")
            .or(run_env.as_ref())
            .and_then(Json::as_str)
            .ok_or_else(|| config("env", "an agent call needs the environment id, e.g. \"CartPole-v1\""))?;
        let env = rlgraph_envs::make(env_id, seed).map_err(|e| config("env", e.to_string()))?;
        let mut agent = agents::build_agent::<B>(agent_spec, env.state_space(), env.action_space(), seed)?;
        if let Some(run) = run {
            let file = if run.is_dir() {
                run.join("checkpoint.safetensors")
            } else {
                run.to_path_buf()
            };
            agent.restore_checkpoint(&file)?;
        }
        if let Some(vars) = obj.get("variables") {
            // An agent's paths are its graph's full scope paths.
            set_variables(graph_of(agent.as_mut())?, vars, str::to_string)?;
            // The agent's actor and other roles follow the graph's new weights.
            agent.weights_changed()?;
        }
        return run_calls(graph_of(agent.as_mut())?, obj);
    }
    if run.is_some() {
        return Err(config(
            "checkpoint",
            "belongs to agent calls (a component has no checkpoint); give \"agent\" or drop it",
        ));
    }
    let action_space = obj.get("action_space").map(Space::from_json).transpose()?;
    let mut component = from_spec_with::<B>(
        obj.get("component").ok_or_else(|| config("component", "missing"))?,
        "component",
        action_space.as_ref(),
    )?;
    // A path is full or relative to the component; with `learn` the component sits inside
    // the harness, one scope down.
    let name = component.name().to_string();
    let root = match obj.get("learn") {
        Some(learn) => {
            component = harness::<B>(component, learn)?;
            format!("{HARNESS}/")
        }
        None => String::new(),
    };
    let full_path = move |path: &str| match path.strip_prefix(&format!("{name}/")) {
        Some(_) => format!("{root}{path}"),
        None => format!("{root}{name}/{path}"),
    };
    let mut spaces = vec![];
    if let Some(s) = obj.get("input_spaces") {
        let s = s
            .as_object()
            .ok_or_else(|| config("input_spaces", "must map parameter names to space specs"))?;
        for (name, spec) in s {
            spaces.push((name.as_str(), Space::from_json(spec)?));
        }
    }
    let mut test = ComponentTest::<B>::new(component, spaces, seed)?;
    if let Some(vars) = obj.get("variables") {
        set_variables(test.executor(), vars, full_path)?;
    }
    run_calls(test.executor(), obj)
}

/// The root scope of the training harness `learn` builds.
const HARNESS: &str = "call-harness";

/// The graph an agent's calls run on.
fn graph_of(agent: &mut dyn agents::Agent) -> Result<&mut dyn ErasedExecutor, CoreError> {
    agent
        .graph_mut()
        .ok_or_else(|| config("agent", "this agent has no graph to call"))
}

/// `component` inside a training harness as `learn` (`{"method", "loss", "optimizer"}`) says.
fn harness<B: Backend>(component: Component<B>, learn: &Json) -> Result<Component<B>, CoreError> {
    let obj = learn
        .as_object()
        .ok_or_else(|| config("learn", "must be {\"method\", \"loss\", \"optimizer\"}"))?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["method", "loss", "optimizer"].contains(&k.as_str()))
    {
        return Err(config(
            &format!("learn.{k}"),
            "unknown key; learn takes method (default \"call\"), loss and optimizer",
        ));
    }
    let method = match obj.get("method") {
        None => "call",
        Some(m) => m
            .as_str()
            .ok_or_else(|| config("learn.method", "must be the name of an API method"))?,
    };
    let part = |key: &str| -> Result<Component<B>, CoreError> {
        let spec = obj
            .get(key)
            .ok_or_else(|| config(&format!("learn.{key}"), "missing; give its RLgraph spec"))?;
        rlgraph_components::from_spec::<B>(spec, &format!("learn.{key}"))
    };
    training_harness(HARNESS, component, method, part("loss")?, part("optimizer")?)
}

/// Sets `graph`'s variables from `vars` (path, as `full_path` turns it into a scope path, to
/// value), each read in the stored shape and dtype, and all checked before any is written.
fn set_variables(
    graph: &mut dyn ErasedExecutor,
    vars: &Json,
    full_path: impl Fn(&str) -> String,
) -> Result<(), CoreError> {
    let vars = vars
        .as_object()
        .ok_or_else(|| config("variables", "must map scope paths to values"))?;
    let current = graph.variables()?;
    let mut new = BTreeMap::new();
    for (path, value) in vars {
        let at = format!("variables.{path}");
        let full = full_path(path);
        let old = current.get(&full).ok_or_else(|| {
            let names: Vec<&str> = current.keys().map(String::as_str).collect();
            config(&at, format!("no variable {full:?}; it has: {}", names.join(", ")))
        })?;
        let dtype = match old.data.dtype() {
            DType::F64 => Dtype::Float64,
            _ => Dtype::Float32,
        };
        let space = Space::from(FloatBox::new(old.shape.clone()).with_dtype(dtype)?);
        let v = space.value_from_json(value).map_err(|e| config(&at, e.to_string()))?;
        let host = value_to_host(&v)?;
        let host = HostTensor::new(host.shape, HostData::from_f64(&host.data.to_f64(), old.data.dtype()))
            .map_err(|e| config(&at, e.to_string()))?;
        new.insert(full, host);
    }
    graph.set_variables(&new)
}

/// Runs the spec's `calls` on `graph` and collects their outputs.
fn run_calls(graph: &mut dyn ErasedExecutor, obj: &Map<String, Json>) -> Result<Json, CoreError> {
    let calls = obj
        .get("calls")
        .and_then(Json::as_array)
        .ok_or_else(|| config("calls", "must be a list of {\"method\", \"inputs\"}"))?;
    let mut results = vec![];
    for (i, call) in calls.iter().enumerate() {
        let at = format!("calls[{i}]");
        let method = call
            .get("method")
            .and_then(Json::as_str)
            .ok_or_else(|| config(&at, "needs a \"method\" string"))?;
        let params = graph.api_inputs(method)?;
        let inputs: Vec<Value> = match call.get("inputs") {
            None => vec![],
            Some(Json::Array(list)) => {
                if list.len() != params.len() {
                    return Err(config(
                        &at,
                        format!(
                            "{} inputs given, {method} takes {} ({})",
                            list.len(),
                            params.len(),
                            names(&params)
                        ),
                    ));
                }
                params
                    .iter()
                    .zip(list)
                    .map(|((p, s), j)| read(s, j, &format!("{at}.inputs.{p}")))
                    .collect::<Result<_, _>>()?
            }
            Some(Json::Object(map)) => {
                if let Some(k) = map.keys().find(|k| !params.iter().any(|(p, _)| p == *k)) {
                    return Err(config(
                        &format!("{at}.inputs.{k}"),
                        format!("{method} has no parameter {k:?} (it takes {})", names(&params)),
                    ));
                }
                params
                    .iter()
                    .map(|(p, s)| {
                        let j = map
                            .get(p)
                            .ok_or_else(|| config(&format!("{at}.inputs"), format!("missing parameter {p:?}")))?;
                        read(s, j, &format!("{at}.inputs.{p}"))
                    })
                    .collect::<Result<_, _>>()?
            }
            Some(_) => return Err(config(&format!("{at}.inputs"), "must be a list or an object")),
        };
        let outputs = graph.execute(method, &inputs)?;
        results.push(json!({"method": method, "outputs": outputs.iter().map(Value::to_json).collect::<Vec<_>>()}));
    }
    Ok(json!({ "results": results }))
}

fn names(params: &[(String, Space)]) -> String {
    params.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ")
}

fn read(space: &Space, j: &Json, at: &str) -> Result<Value, CoreError> {
    space.value_from_json(j).map_err(|e| config(at, e.to_string()))
}
