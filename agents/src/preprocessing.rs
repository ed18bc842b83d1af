//! The agents' preprocessing: RLgraph's `preprocessing_spec` as a preprocessor stack
//! sub-component, and the call that runs states through it inside an API method; states that
//! carry an action mask (Gymnasium's convention) have it split off first.

use rlgraph_components::action_mask::{mask_fn, observation_fn};
use rlgraph_components::preprocessor_stack;
use rlgraph_components::spec::normalize_type;
use rlgraph_core::{ApiCtx, Backend, Component, CoreError, Op, Result};

use serde_json::Value as Json;

/// The sub-component's name.
const STACK: &str = "preprocessor-stack";

/// How an agent's graph reads its states: whether they go through a preprocessor stack, and
/// whether they carry an action mask to split off before it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StateInput {
    pre: bool,
    masked: bool,
}

/// Adds a preprocessor stack built from `specs` (or the `given` components, in their place)
/// to `root`, and the root API method `reset` that resets it (an empty spec list
/// preprocesses nothing); with `mask` (a key from [`mask_key`]) the graph functions that
/// split the mask off the states.
pub(crate) fn with_preprocessing<B: Backend>(
    root: Component<B>,
    specs: &[Json],
    given: Option<Vec<Component<B>>>,
    mask: Option<&str>,
) -> Result<(Component<B>, StateInput)> {
    let root = match mask {
        Some(key) => root
            .graph_fn(observation_fn::<B>("observation", key))
            .graph_fn(mask_fn::<B>("action_mask", key, false))
            .graph_fn(mask_fn::<B>("acting_mask", key, true)),
        None => root,
    };
    let masked = mask.is_some();
    if let Some(stack) = given {
        return Ok((with_stack(root, stack), StateInput { pre: true, masked }));
    }
    if specs.is_empty() {
        return Ok((root, StateInput { pre: false, masked }));
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
    Ok((
        with_stack(root, stack_members(specs)?),
        StateInput { pre: true, masked },
    ))
}

/// `root` with the preprocessor stack of `members` and the API method `reset` that resets it.
fn with_stack<B: Backend>(root: Component<B>, members: Vec<Component<B>>) -> Component<B> {
    root.with_sub(preprocessor_stack(STACK, members))
        .api("reset", vec![], |ctx, _| ctx.call(STACK, "reset", &[]))
}

/// A preprocessor spec's `type`, normalized (lower case, no `-` or `_`).
pub fn preprocessor_kind(spec: &Json) -> String {
    normalize_type(spec.get("type").and_then(Json::as_str).unwrap_or(""))
}

/// Whether the preprocessor `spec` keeps state between calls (frame stacks, running
/// statistics).
pub fn is_stateful(spec: &Json) -> bool {
    is_stateful_kind(&preprocessor_kind(spec))
}

/// Whether a preprocessor of this normalized kind keeps state between calls.
pub(crate) fn is_stateful_kind(kind: &str) -> bool {
    matches!(kind, "sequence" | "movingstandardize")
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

/// The observation part of states `x` through the preprocessor stack (each as it is where
/// there is no mask or no stack).
pub(crate) fn preprocess<B: Backend>(ctx: &mut ApiCtx<'_, B>, input: StateInput, x: Op) -> Result<Op> {
    let x = match input.masked {
        true => ctx.graph_fn1("observation", &[x])?,
        false => x,
    };
    Ok(if input.pre {
        ctx.call(STACK, "preprocess", &[x])?[0]
    } else {
        x
    })
}

/// The action mask of states `x` as 1s (valid) and 0s, where they carry one. `acting`: the
/// agent must act in these states, so a state with no valid action is an error (a terminal
/// next state may have none).
pub(crate) fn action_mask<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    input: StateInput,
    x: Op,
    acting: bool,
) -> Result<Option<Op>> {
    Ok(match input.masked {
        true => Some(ctx.graph_fn1(if acting { "acting_mask" } else { "action_mask" }, &[x])?),
        false => None,
    })
}
