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
    let stack = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // Stateful preprocessors would also run inside updates, on replayed batches of
            // other sizes and orders: `build_agent` runs them per environment copy instead.
            let kind = s
                .get("type")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_lowercase()
                .replace(['-', '_'], "");
            if matches!(kind.as_str(), "sequence" | "movingstandardize") {
                return Err(CoreError::Config {
                    at: format!("config.preprocessing_spec[{i}].type"),
                    reason: format!(
                        "{kind:?} keeps state between calls, so it cannot run inside the agent's graph; \
                         build the agent with build_agent, which runs such stacks per environment copy"
                    ),
                });
            }
            let c = rlgraph_components::from_spec::<B>(s, &format!("config.preprocessing_spec[{i}]"))?;
            // Two preprocessors of one type need distinct names within the stack.
            Ok(c.copy_as(format!("{}-{i}", c.name()), true))
        })
        .collect::<Result<Vec<_>>>()?;
    let root = root
        .with_sub(preprocessor_stack(STACK, stack))
        .api("reset", vec![], |ctx, _| ctx.call(STACK, "reset", &[]));
    Ok((root, true))
}

/// `x` through the preprocessor stack, or `x` itself when there is none.
pub(crate) fn preprocess<B: Backend>(ctx: &mut ApiCtx<'_, B>, has: bool, x: Op) -> Result<Op> {
    Ok(if has {
        ctx.call(STACK, "preprocess", &[x])?[0]
    } else {
        x
    })
}
