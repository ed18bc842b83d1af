//! `rlgraph act`: a trained agent's actions for given states, one JSON line each, with the
//! numbers behind them (DQN's Q-values; the policy gradients' log-likelihood and state value).

use std::io::Read;
use std::path::PathBuf;

use agents::Agent;
use clap::Args;
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::Backend;
use serde_json::{json, Value as Json};

use crate::agent_commands::load_trained;
use crate::backend_choice::{on_backend, OnBackend};

/// Arguments of `rlgraph act`.
#[derive(Args)]
pub struct ActArgs {
    /// A directory written by `rlgraph train --out` (its `config.json` and
    /// `checkpoint.safetensors`, or `model.safetensors` from the ga3c executor).
    run: PathBuf,
    /// A file of states, one JSON value per line in the environment's observation space
    /// (`rlgraph env` prints them so), or `-` for standard input. Lines are consecutive steps
    /// of one episode, so frame stacks build up as they would while playing.
    #[arg(long)]
    states: PathBuf,
    /// The environment id, which gives the spaces (default: the `env` of the run's
    /// `summary.json`).
    #[arg(long)]
    env: Option<String>,
    /// Act with exploration (sampling, epsilon at the schedule's end) instead of greedily.
    #[arg(long)]
    explore: bool,
    /// The seed of the agent's random choices (exploration).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The backend: candle (default) or tch (needs the `tch` feature).
    #[arg(long, default_value = "candle")]
    backend: String,
}

/// Prints one JSON line per state: `action`, and `q_values` (DQN, Ape-X) or
/// `log_likelihood` and `state_value` (PPO, actor-critic, IMPALA) where the agent's graph
/// takes the states as they are.
pub fn run(args: &ActArgs) -> Result<String, String> {
    on_backend(&args.backend, args)
}

impl OnBackend for ActArgs {
    type Output = String;
    fn run<B: Backend>(&self) -> Result<String, String> {
        act::<B>(self)
    }
}

fn act<B: Backend>(args: &ActArgs) -> Result<String, String> {
    let env = match &args.env {
        Some(env) => env.clone(),
        None => crate::agent_commands::env_of_run(&args.run)?,
    };
    let probe = rlgraph_envs::make(&env, args.seed).map_err(|e| e.to_string())?;
    let space = probe.state_space().clone();
    let states = read_states(&args.states, &space)?;
    let mut agent = load_trained::<B>(&args.run, &env, args.seed)?;
    // A recurrent policy reads the file's states as one episode, from its start.
    agent.begin_episodes(args.explore, &[0]).map_err(|e| e.to_string())?;
    let mut lines = Vec::with_capacity(states.len());
    let mut memory = None;
    for (line_no, state) in &states {
        let at = |e: rlgraph_core::CoreError| format!("{} line {line_no}: {e}", args.states.display());
        let action = agent
            .get_actions(std::slice::from_ref(state), args.explore, 1.0)
            .map_err(at)?
            .remove(0);
        let mut line = json!({ "action": action.to_json() });
        explain(&mut agent, state, &action, &space, &mut memory, &mut line).map_err(at)?;
        lines.push(line.to_string());
    }
    Ok(lines.join("\n"))
}

/// Adds the numbers behind `action` to `line` where the agent's graph takes raw states: its
/// `get_q_values`, or its `evaluate` (log-likelihood, state value). A recurrent policy's
/// graph is evaluated from the `memory` its earlier states left (none before the first).
fn explain(
    agent: &mut Box<dyn Agent + Send>,
    state: &Value,
    action: &Value,
    space: &Space,
    memory: &mut Option<agents::CarriedMemory>,
    line: &mut Json,
) -> rlgraph_core::Result<()> {
    let Some(graph) = agent.graph_mut() else { return Ok(()) };
    // Agents take the environment's states without their float bounds.
    let raw = agents::without_float_bounds(space).with_batch_rank(false);
    let takes_raw_states = |graph: &dyn rlgraph_core::ErasedExecutor, method: &str| {
        graph
            .api_inputs(method)
            .ok()
            .and_then(|inputs| inputs.into_iter().find(|(name, _)| name == "states"))
            .is_some_and(|(_, s)| s.with_batch_rank(false) == raw)
    };
    let batch = agents::stack(std::slice::from_ref(state))?;
    if takes_raw_states(graph, "get_q_values") {
        let q = graph.execute("get_q_values", &[batch])?;
        line["q_values"] = first_row(q.first());
    } else if takes_raw_states(graph, "evaluate") {
        let actions = agents::stack(std::slice::from_ref(action))?;
        let mut inputs = vec![batch.clone(), actions];
        let units = graph
            .api_inputs("evaluate")?
            .into_iter()
            .find_map(|(name, space)| match name.as_str() {
                "memory" => Some(
                    space
                        .flatten()
                        .first()
                        .and_then(|(_, s)| s.shape().and_then(|d| d.first().copied())),
                ),
                _ => None,
            });
        let mut recurrent = vec![];
        if let Some(units) = units {
            // The agent's own carrier of memories: zero at the first state, then what the
            // earlier states left.
            let carried = memory.get_or_insert_with(|| agents::CarriedMemory::new(units.unwrap_or(0)));
            recurrent = carried.inputs(false, 1)?.to_vec();
            // The memory depends on the states alone: the greedy step's is the one acted from.
            let stepped = graph.execute("get_deterministic_action", &[&[batch][..], &recurrent].concat())?;
            if let Some(after) = stepped.last() {
                carried.update(false, after)?;
            }
        }
        inputs.extend(recurrent);
        let out = graph.execute("evaluate", &inputs)?;
        line["log_likelihood"] = first_row(out.first());
        line["state_value"] = first_row(out.get(1));
    }
    Ok(())
}

/// The first (only) item of a batched output, as JSON.
fn first_row(value: Option<&Value>) -> Json {
    match value.map(Value::to_json) {
        Some(Json::Array(mut rows)) if !rows.is_empty() => rows.swap_remove(0),
        Some(other) => other,
        None => Json::Null,
    }
}

/// The states of `file` (or standard input for `-`), one per non-empty line, each checked
/// against `space` and kept with its line number; errors name the line.
fn read_states(file: &std::path::Path, space: &Space) -> Result<Vec<(usize, Value)>, String> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the states from standard input: {e}"))?;
        text
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?
    };
    let space = space.with_batch_rank(false);
    let states = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let at = |why: String| format!("{} line {}: {why}", file.display(), i + 1);
            let json: Json = serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
            let value = space
                .value_from_json(&json)
                .map_err(|e| at(format!("{e} (a state of {} is expected)", space.describe())))?;
            match space.contains(&value) {
                true => Ok((i + 1, value)),
                false => Err(at(format!("not a state of {}", space.describe()))),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    match states.is_empty() {
        true => Err(format!("{} holds no states (one JSON value per line)", file.display())),
        false => Ok(states),
    }
}
