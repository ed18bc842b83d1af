//! The agents' preprocessing: RLgraph's `preprocessing_spec` as a preprocessor stack
//! sub-component, and the call that runs states through it inside an API method.

use rlgraph_components::preprocessor_stack;
use rlgraph_core::{ApiCtx, Backend, Component, CoreError, Op, Result};
use serde_json::Value as Json;

/// The sub-component's name.
const STACK: &str = "preprocessor-stack";

/// Adds a preprocessor stack built from `specs` to `root`, and the root API method `reset`
/// that resets it; returns whether it added one (an empty spec list preprocesses nothing).
pub(crate) fn with_preprocessing<B: Backend>(root: Component<B>, specs: &[Json]) -> Result<(Component<B>, bool)> {
    if specs.is_empty() {
        return Ok((root, false));
    }
    // Stateful preprocessors would also run inside updates, on replayed batches of other
    // sizes and orders: `build_agent` runs them per environment copy instead.
    if let Some(i) = specs.iter().position(is_stateful) {
        return Err(CoreError::Config {
            at: format!("config.preprocessing_spec[{i}].type"),
            reason: format!(
                "{:?} keeps state between calls, so it cannot run inside the agent's graph; \
                 build the agent with build_agent, which runs such stacks per environment copy",
                preprocessor_kind(&specs[i])
            ),
        });
    }
    let stack = stack_members(specs)?;
    let root = root
        .with_sub(preprocessor_stack(STACK, stack))
        .api("reset", vec![], |ctx, _| ctx.call(STACK, "reset", &[]));
    Ok((root, true))
}

/// A preprocessor spec's `type`, normalized (lower case, no `-` or `_`).
pub(crate) fn preprocessor_kind(spec: &Json) -> String {
    spec.get("type")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_lowercase()
        .replace(['-', '_'], "")
}

/// Whether the preprocessor `spec` keeps state between calls (frame stacks, running
/// statistics).
pub fn is_stateful(spec: &Json) -> bool {
    matches!(preprocessor_kind(spec).as_str(), "sequence" | "movingstandardize")
}

/// The components of a stack built from `specs`, each named apart (two preprocessors of one
/// type need distinct names within the stack); errors name `config.preprocessing_spec[i]`.
pub(crate) fn stack_members<B: Backend>(specs: &[Json]) -> Result<Vec<Component<B>>> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let c = rlgraph_components::from_spec::<B>(s, &format!("config.preprocessing_spec[{i}]"))?;
            Ok(c.copy_as(format!("{}-{i}", c.name()), true))
        })
        .collect()
}

/// `x` through the preprocessor stack, or `x` itself when there is none.
pub(crate) fn preprocess<B: Backend>(ctx: &mut ApiCtx<'_, B>, has: bool, x: Op) -> Result<Op> {
    Ok(if has {
        ctx.call(STACK, "preprocess", &[x])?[0]
    } else {
        x
    })
}
