//! What every agent's graph shares: building it on the configured device, the actor's seed,
//! the two acting API methods, and the argmax that turns scores into discrete actions.

use std::collections::BTreeMap;

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, BuildOptions, Component, Device, DeviceMap, GraphExecutor, Param, Result};

use crate::preprocessing::{action_mask, preprocess, StateInput};

/// Builds `root` for the input `spaces` with every component on `device`, its variables
/// drawn from `seed`.
pub fn build_graph<B: Backend>(
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

/// The seed of an actor's graph built beside a learner's from the agent's `seed`: its own, so
/// exploration draws differ from the learner's initializers.
pub(crate) fn actor_seed(seed: u64) -> u64 {
    seed.wrapping_add(0xac70)
}

/// Adds `get_action(states)` and `get_deterministic_action(states)`: the states through the
/// preprocessor stack (as `input` says), then sub-component `sub`'s `stochastic` method (which
/// may return more than the actions, such as their log-likelihoods) or its
/// `get_deterministic_action`, given the states' action mask where they carry one. With
/// `recurrent`, both also take `memory` and `starts` after the states and hand them on (see
/// [`crate::actor_critic_networks`]); the memory after the step is the last output.
pub(crate) fn with_acting_apis<B: Backend>(
    root: Component<B>,
    input: StateInput,
    sub: &'static str,
    stochastic: &'static str,
    recurrent: bool,
) -> Component<B> {
    let act = move |method: &'static str| {
        move |ctx: &mut rlgraph_core::ApiCtx<'_, B>, args: &rlgraph_core::Args| {
            let states = args.get(0)?;
            let mut inputs = vec![preprocess(ctx, input, states)?];
            if recurrent {
                inputs.extend([args.get(1)?, args.get(2)?]);
            }
            inputs.extend(action_mask(ctx, input, states, true)?);
            ctx.call(sub, method, &inputs)
        }
    };
    let params = move || match recurrent {
        true => vec![Param::new("states"), Param::new("memory"), Param::new("starts")],
        false => vec![Param::new("states")],
    };
    root.api("get_action", params(), act(stochastic)).api(
        "get_deterministic_action",
        params(),
        act("get_deterministic_action"),
    )
}

/// `names` as an API method's parameters, followed, for a `recurrent` graph, by `memory` and
/// `starts` (read back with [`trailing_memory`]).
pub(crate) fn params_with_memory(names: &[&'static str], recurrent: bool) -> Vec<Param> {
    let memory = recurrent.then_some(["memory", "starts"]).into_iter().flatten();
    names.iter().copied().chain(memory).map(Param::new).collect()
}

/// A `recurrent` graph's `memory` and `starts`: the last two inputs of a method declared with
/// [`params_with_memory`].
pub(crate) fn trailing_memory(args: &rlgraph_core::Args, recurrent: bool) -> Result<Option<[rlgraph_core::Op; 2]>> {
    if !recurrent {
        return Ok(None);
    }
    let n = args.len();
    Ok(Some([args.get(n.saturating_sub(2))?, args.get(n.saturating_sub(1))?]))
}

/// The actor-critic networks' `evaluate` of raw `states` and `actions` (log-likelihoods, state
/// values, entropies): the states through the preprocessor stack, masked where they carry an
/// action mask; `memory` (the LSTM's memory and the episode starts) where the networks are
/// recurrent.
pub(crate) fn evaluate<B: Backend>(
    ctx: &mut rlgraph_core::ApiCtx<'_, B>,
    input: StateInput,
    states: rlgraph_core::Op,
    actions: rlgraph_core::Op,
    memory: Option<[rlgraph_core::Op; 2]>,
) -> Result<Vec<rlgraph_core::Op>> {
    let mut inputs = vec![preprocess(ctx, input, states)?];
    inputs.extend(memory.into_iter().flatten());
    inputs.push(actions);
    inputs.extend(action_mask(ctx, input, states, false)?);
    ctx.call("networks", "evaluate", &inputs)
}
