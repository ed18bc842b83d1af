//! `rlgraph env`: step an environment by hand and print each transition as a JSON line.

use clap::Args;
use rlgraph_envs::make;
use rlgraph_spaces::{Space, Value};
use serde_json::{json, Value as Json};

/// Arguments of `rlgraph env`.
#[derive(Args)]
pub struct EnvArgs {
    /// The environment id (`CartPole-v1`, `GridWorld-2x2`, ...).
    env: String,
    /// The seed of the reset.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Set the state after the reset (comma-separated numbers, as the environment's
    /// `set_state` takes them; a leading minus sign is a number, not a flag).
    #[arg(long, allow_hyphen_values = true)]
    state: Option<String>,
    /// The actions: comma-separated numbers, or a JSON array of actions (for Dict actions).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    actions: String,
}

fn numbers(text: &str, what: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("{what}: {s:?} is not a number"))
        })
        .collect()
}

/// The actions as values of `space`.
fn actions(text: &str, space: &Space) -> Result<Vec<Value>, String> {
    let items: Vec<Json> = if text.trim_start().starts_with('[') {
        serde_json::from_str(text).map_err(|e| format!("--actions: not a JSON array: {e}"))?
    } else {
        let shape = space.shape().unwrap_or(&[]);
        text.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                let x: Json =
                    serde_json::from_str(s.trim()).map_err(|_| format!("--actions: {s:?} is not a number"))?;
                Ok(if shape.is_empty() { x } else { json!([x]) })
            })
            .collect::<Result<_, String>>()?
    };
    // A comma list is one number per step; an action of several numbers needs the JSON form.
    let vector = space.shape().is_some_and(|s| s.iter().product::<usize>() > 1);
    let hint = match vector && !text.trim_start().starts_with('[') {
        true => " (an action of several numbers is a JSON array per step: --actions '[[0.5, -0.2, 0.1], [1, 1, 1]]')",
        false => "",
    };
    items
        .iter()
        .enumerate()
        .map(|(i, a)| {
            space
                .value_from_json(a)
                .map_err(|e| format!("--actions[{i}] = {a}: {e}{hint}"))
        })
        .collect()
}

/// Runs the subcommand: one JSON line for the reset, one per step.
pub fn run(args: &EnvArgs) -> Result<String, String> {
    let mut env = make(&args.env, args.seed).map_err(|e| e.to_string())?;
    let actions = actions(&args.actions, env.action_space())?;
    let mut lines = vec![];
    let observation = env.reset(Some(args.seed)).map_err(|e| e.to_string())?;
    let mut first = json!({ "observation": observation.to_json() });
    if let Some(state) = &args.state {
        let state = numbers(state, "--state")?;
        env.set_state(&state).map_err(|e| e.to_string())?;
        first["state_set"] = json!(state);
    }
    lines.push(first.to_string());
    for action in &actions {
        let step = env.step(action).map_err(|e| e.to_string())?;
        lines.push(
            json!({
                "observation": step.observation.to_json(),
                "reward": step.reward,
                "terminated": step.terminated,
                "truncated": step.truncated,
            })
            .to_string(),
        );
    }
    Ok(lines.join("\n"))
}
