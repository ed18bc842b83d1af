//! What every agent's graph shares: building it on the configured device, the two acting API
//! methods, and running them on a list of states.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{Backend, BuildOptions, Component, CoreError, Device, DeviceMap, GraphExecutor, Param, Result};

use crate::batch::{stack, unstack};
use crate::preprocessing::preprocess;

/// Builds `root` for the input `spaces` with every component on `device`.
pub(crate) fn build_graph<B: Backend>(
    root: Component<B>,
    spaces: &BTreeMap<String, Space>,
    device: Device,
    seed: u64,
) -> Result<GraphExecutor<B>> {
    let options = BuildOptions {
        device_map: DeviceMap::new(device),
        ..BuildOptions::default()
    };
    GraphExecutor::build(root, spaces, &options, seed)
}

/// Adds `get_action(states)` and `get_deterministic_action(states)`: the states through the
/// preprocessor stack (if `has_pre`), then sub-component `sub`'s `stochastic` method (which
/// may return more than the actions, such as their log-likelihoods) or its
/// `get_deterministic_action`.
pub(crate) fn with_acting_apis<B: Backend>(
    root: Component<B>,
    has_pre: bool,
    sub: &'static str,
    stochastic: &'static str,
) -> Component<B> {
    let act = move |method: &'static str| {
        move |ctx: &mut rlgraph_core::ApiCtx<'_, B>, args: &rlgraph_core::Args| {
            let s = preprocess(ctx, has_pre, args.get(0)?)?;
            ctx.call(sub, method, &[s])
        }
    };
    root.api("get_action", vec![Param::new("states")], act(stochastic)).api(
        "get_deterministic_action",
        vec![Param::new("states")],
        act("get_deterministic_action"),
    )
}

/// Runs `get_action` (or, without `explore`, `get_deterministic_action`) on `states`; returns
/// one action per state and the method's other outputs.
pub(crate) fn act<B: Backend>(
    exec: &mut GraphExecutor<B>,
    states: &[Value],
    explore: bool,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let method = if explore {
        "get_action"
    } else {
        "get_deterministic_action"
    };
    let mut out = exec.execute(method, &[stack(states)?])?.into_iter();
    let actions = out.next().ok_or_else(|| CoreError::Config {
        at: method.into(),
        reason: "no actions came back".into(),
    })?;
    Ok((unstack(&actions)?, out.collect()))
}
