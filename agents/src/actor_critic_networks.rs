//! The policy and value networks of the actor-critic family (PPO, A2C, IMPALA) under one
//! scope, so one optimizer steps both.

use rlgraph_components::layers::{lstm_unroll, memory_space};
use rlgraph_components::{
    neural_network, optimizer, policy_with, shared_value_function_policy, value_function, BoundedDistribution,
    OptimizerSpec, PolicyOptions,
};
use std::collections::BTreeMap;

use rlgraph_core::spaces::{BoolBox, Space};
use rlgraph_core::{ApiCtx, Args, Backend, Component, Device, Op, Param, Result};
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::agent_graph::{actor_seed, build_graph, with_acting_apis};
use crate::agent_parts::AgentParts;
use crate::mask_key::mask_key;
use crate::preprocessing::{with_preprocessing, StateInput};
use crate::recurrence::Recurrence;

/// A component `networks` with a policy over `network_spec`, and a value function over
/// `value_function_spec` (or, when that is empty, a value head on the policy's network); the
/// layers given in `spec.parts` take the place of either.
/// API: `get_action`, `get_deterministic_action`, `get_action_and_log_likelihood`,
/// `state_values(states)` and `evaluate(states, actions)` -> (log-likelihoods, state values,
/// entropies); every result is one number (or action) per batch item. The policy's methods
/// take an optional last input `action_mask` (see [`rlgraph_components::policy_with`]).
///
/// With `recurrence` (an LSTM in `network_spec`), every method takes `memory` (the LSTM's
/// `(c, h)` per sequence) and `starts` (1 where an episode starts) after `states`, runs the layers before the
/// LSTM, unrolls it ([`rlgraph_components::layers::lstm_unroll`]) and gives its output to
/// the policy's and value function's layers; the memory after the last step is the last output.
pub(crate) fn actor_critic_networks<B: Backend>(
    spec: &ActorCriticSpec<'_, B>,
    action_space: &Space,
) -> Result<Component<B>> {
    let (action_adapter, recurrence) = (spec.action_adapter, spec.recurrence);
    // Built together, so errors and unscoped names number the layers as the spec does.
    let mut layers = spec.parts.network_layers(spec.network)?;
    let mut encoder = vec![];
    if let Some(r) = recurrence {
        let mut rest = layers.split_off(r.index);
        rest.remove(0);
        encoder = std::mem::replace(&mut layers, rest);
    }
    let options = PolicyOptions {
        action_adapter: crate::agent_spec::adapter_spec(action_adapter),
        bounded: spec.bounded,
        state_independent_log_std: spec.log_std_init,
        ..PolicyOptions::default()
    };
    let separate = spec.parts.separate_value_function(spec.value_function);
    let mut c = Component::new("networks").with_kind("actor-critic-networks");
    if let Some(r) = recurrence {
        c = c
            .with_sub(neural_network::<B>("encoder", encoder))
            .with_sub(lstm_unroll::<B>("lstm", r.units, r.forget_bias));
    }
    if separate {
        let vf_layers = spec.parts.value_layers(spec.value_function)?;
        c = c
            .with_sub(policy_with::<B>("policy", layers, action_space, options)?)
            .with_sub(value_function::<B>("value-function", vf_layers));
    } else {
        c = c.with_sub(shared_value_function_policy::<B>(
            "policy",
            layers,
            action_space,
            options,
        )?);
    }
    let recurrent = recurrence.is_some();
    // Where `states` are followed by `memory` and `starts`, the inputs after them sit two
    // places later.
    let skip = if recurrent { 2 } else { 0 };
    let with_memory = move |mut params: Vec<Param>| {
        if recurrent {
            params.splice(1..1, [Param::new("memory"), Param::new("starts")]);
        }
        params
    };
    let states = move || with_memory(vec![Param::new("states"), Param::optional("action_mask")]);
    // What the heads read (the states, or the LSTM's outputs), and the memory after them.
    let trunk = move |ctx: &mut ApiCtx<'_, B>, args: &Args| -> Result<(Op, Option<Op>)> {
        let s = args.get(0)?;
        if !recurrent {
            return Ok((s, None));
        }
        let encoded = ctx.call("encoder", "call", &[s])?[0];
        let out = ctx.call("lstm", "unroll", &[encoded, args.get(1)?, args.get(2)?])?;
        Ok((out[0], Some(out[1])))
    };
    let values = move |ctx: &mut ApiCtx<'_, B>, s| -> Result<Op> {
        Ok(if separate {
            ctx.call("value-function", "value_output", &[s])?[0]
        } else {
            ctx.call("policy", "get_state_values", &[s])?[0]
        })
    };
    // A policy method on the trunk's output, given the action mask where there is one.
    let policy = move |method: &'static str| {
        move |ctx: &mut ApiCtx<'_, B>, args: &Args| -> Result<Vec<Op>> {
            let (x, memory) = trunk(ctx, args)?;
            let inputs: Vec<Op> = std::iter::once(x).chain(args.opt(1 + skip)).collect();
            let mut out = ctx.call("policy", method, &inputs)?;
            if method == "get_action_and_log_likelihood" {
                out.truncate(2);
                out[1] = ctx.graph_fn1("per_item", &[out[1]])?;
            }
            out.extend(memory);
            Ok(out)
        }
    };
    Ok(c.api("get_action", states(), policy("get_action"))
        .api("get_deterministic_action", states(), policy("get_deterministic_action"))
        .api(
            "get_action_and_log_likelihood",
            states(),
            policy("get_action_and_log_likelihood"),
        )
        .api(
            "state_values",
            with_memory(vec![Param::new("states")]),
            move |ctx, args| {
                let (x, memory) = trunk(ctx, args)?;
                Ok(std::iter::once(values(ctx, x)?).chain(memory).collect())
            },
        )
        .api(
            "evaluate",
            with_memory(vec![
                Param::new("states"),
                Param::new("actions"),
                Param::optional("action_mask"),
            ]),
            move |ctx, args| {
                let (x, _) = trunk(ctx, args)?;
                let (a, mask) = (args.get(1 + skip)?, args.opt(2 + skip));
                let log_probs = ctx.call("policy", "get_log_likelihood", &[&[x, a][..], mask.as_slice()].concat())?[0];
                let entropy = ctx.call("policy", "get_entropy", &[&[x][..], mask.as_slice()].concat())?[0];
                let log_probs = ctx.graph_fn1("per_item", &[log_probs])?;
                let entropy = ctx.graph_fn1("per_item", &[entropy])?;
                Ok(vec![log_probs, values(ctx, x)?, entropy])
            },
        )
        .graph_fn(rlgraph_components::sum_item_dims::<B>("per_item")))
}

/// The input spaces `memory` and `starts` of a recurrent graph.
pub(crate) fn memory_spaces(r: &Recurrence) -> [(String, Space); 2] {
    [
        ("memory".into(), memory_space(r.units)),
        (
            "starts".into(),
            Space::from(BoolBox::new(Vec::<usize>::new())).with_batch_rank(true),
        ),
    ]
}

/// What shapes the actor-critic networks and where they run: the config keys the learner
/// and the actor of PPO, A2C and IMPALA are both built from.
pub(crate) struct ActorCriticSpec<'a, B: Backend> {
    /// `network_spec`: the policy's layers.
    pub network: &'a [Json],
    /// `value_function_spec` (empty: a value head on the policy's network).
    pub value_function: &'a [Json],
    /// `policy_spec.action_adapter_spec`.
    pub action_adapter: Option<&'a Json>,
    /// `policy_spec.bounded_distribution_type`.
    pub bounded: BoundedDistribution,
    /// `policy_spec.log_std_init`: a state-independent log-std starting there.
    pub log_std_init: Option<f64>,
    /// `preprocessing_spec`.
    pub preprocessing: &'a [Json],
    /// `action_mask_key`: where states carry their action mask (if they are a Dict with it).
    pub action_mask_key: &'a crate::MaskKey,
    /// The split of `network_spec` around its LSTM, when it has one.
    pub recurrence: Option<&'a Recurrence>,
    /// `execution_spec.default_device`.
    pub device: Device,
    /// Layers and preprocessors given as values, in place of the specs above.
    pub parts: &'a AgentParts<B>,
}

/// A root component `name` holding the actor-critic networks, `loss` and an optimizer of
/// `optimizer_spec`, with the preprocessor stack (and the action mask's split where `mask`
/// names one); also how it reads its states. The learners of PPO, A2C and IMPALA start from it.
pub(crate) fn actor_critic_root<B: Backend>(
    name: &str,
    spec: &ActorCriticSpec<'_, B>,
    action_space: &Space,
    mask: Option<&str>,
    loss: Component<B>,
    optimizer_spec: &OptimizerSpec,
) -> Result<(Component<B>, StateInput)> {
    let root = Component::<B>::new(name)
        .with_kind(name)
        .with_sub(actor_critic_networks::<B>(spec, action_space)?)
        .with_sub(loss)
        .with_sub(optimizer("optimizer", optimizer_spec.clone()));
    with_preprocessing(root, spec.preprocessing, spec.parts.preprocessor_members()?, mask)
}

/// The acting graph of an actor-critic learner built by [`actor_critic_root`] under the same
/// `name`, so the learner's snapshots load into it: `get_action(states)` runs the networks'
/// method `stochastic`, whose outputs after the actions are the actor's `extras`.
pub(crate) fn actor_critic_actor<B: Backend>(
    name: &str,
    spec: &ActorCriticSpec<'_, B>,
    state_space: &Space,
    action_space: &Space,
    stochastic: &'static str,
    extras: &[&str],
    seed: u64,
) -> Result<GraphActor<B>> {
    let root = Component::<B>::new(name)
        .with_kind("actor-critic-actor")
        .with_sub(actor_critic_networks::<B>(spec, action_space)?);
    let mask = mask_key(spec.action_mask_key, state_space, action_space)?;
    let (root, input) = with_preprocessing(root, spec.preprocessing, spec.parts.preprocessor_members()?, mask)?;
    let root = with_acting_apis(root, input, "networks", stochastic, spec.recurrence.is_some());
    let mut spaces = BTreeMap::from([("states".to_string(), state_space.with_batch_rank(true))]);
    if let Some(r) = spec.recurrence {
        spaces.extend(memory_spaces(r));
    }
    let exec = build_graph(root, &spaces, spec.device, actor_seed(seed))?;
    Ok(GraphActor::new(exec, extras, false))
}
