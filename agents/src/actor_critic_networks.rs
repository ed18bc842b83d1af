//! The policy and value networks of the actor-critic family (PPO, A2C, IMPALA) under one
//! scope, so one optimizer steps both.

use rlgraph_components::{
    layers_from_spec, optimizer, policy_with, shared_value_function_policy, value_function, OptimizerSpec,
    PolicyOptions,
};
use std::collections::BTreeMap;

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Component, Device, Param, Result};
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::agent_graph::{actor_seed, build_graph, with_acting_apis};
use crate::preprocessing::{mask_key, with_preprocessing, StateInput};

/// A component `networks` with a policy over `network_spec`, and a value function over
/// `value_function_spec` (or, when that is empty, a value head on the policy's network).
/// API: `get_action`, `get_deterministic_action`, `get_action_and_log_likelihood`,
/// `state_values(states)` and `evaluate(states, actions)` -> (log-likelihoods, state values,
/// entropies); every result is one number (or action) per batch item. The policy's methods
/// take an optional last input `action_mask` (see [`rlgraph_components::policy_with`]).
pub(crate) fn actor_critic_networks<B: Backend>(
    network_spec: &[Json],
    value_function_spec: &[Json],
    action_adapter: Option<&Json>,
    action_space: &Space,
) -> Result<Component<B>> {
    let layers = layers_from_spec::<B>(network_spec, "config.network_spec")?;
    let options = PolicyOptions {
        action_adapter: crate::agent_spec::adapter_spec(action_adapter),
        ..PolicyOptions::default()
    };
    let separate = !value_function_spec.is_empty();
    let mut c = Component::new("networks").with_kind("actor-critic-networks");
    if separate {
        let vf_layers = layers_from_spec::<B>(value_function_spec, "config.value_function_spec")?;
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
    let states = || vec![Param::new("states"), Param::optional("action_mask")];
    let values = move |ctx: &mut rlgraph_core::ApiCtx<'_, B>, s| -> Result<rlgraph_core::Op> {
        Ok(if separate {
            ctx.call("value-function", "value_output", &[s])?[0]
        } else {
            ctx.call("policy", "get_state_values", &[s])?[0]
        })
    };
    Ok(c.api("get_action", states(), |ctx, args| {
        ctx.call("policy", "get_action", &args.present())
    })
    .api("get_deterministic_action", states(), |ctx, args| {
        ctx.call("policy", "get_deterministic_action", &args.present())
    })
    .api("get_action_and_log_likelihood", states(), |ctx, args| {
        let out = ctx.call("policy", "get_action_and_log_likelihood", &args.present())?;
        let log_probs = ctx.graph_fn1("per_item", &[out[1]])?;
        Ok(vec![out[0], log_probs])
    })
    .api("state_values", vec![Param::new("states")], move |ctx, args| {
        Ok(vec![values(ctx, args.get(0)?)?])
    })
    .api(
        "evaluate",
        vec![
            Param::new("states"),
            Param::new("actions"),
            Param::optional("action_mask"),
        ],
        move |ctx, args| {
            let (s, a) = (args.get(0)?, args.get(1)?);
            let mask = args.opt(2);
            let log_probs = ctx.call("policy", "get_log_likelihood", &[&[s, a][..], mask.as_slice()].concat())?[0];
            let entropy = ctx.call("policy", "get_entropy", &[&[s][..], mask.as_slice()].concat())?[0];
            let log_probs = ctx.graph_fn1("per_item", &[log_probs])?;
            let entropy = ctx.graph_fn1("per_item", &[entropy])?;
            Ok(vec![log_probs, values(ctx, s)?, entropy])
        },
    )
    .graph_fn(rlgraph_components::sum_item_dims::<B>("per_item")))
}

/// What shapes the actor-critic networks and where they run: the config keys the learner
/// and the actor of PPO, A2C and IMPALA are both built from.
pub(crate) struct ActorCriticSpec<'a> {
    /// `network_spec`: the policy's layers.
    pub network: &'a [Json],
    /// `value_function_spec` (empty: a value head on the policy's network).
    pub value_function: &'a [Json],
    /// `policy_spec.action_adapter_spec`.
    pub action_adapter: Option<&'a Json>,
    /// `preprocessing_spec`.
    pub preprocessing: &'a [Json],
    /// `action_mask_key`: where states carry their action mask (if they are a Dict with it).
    pub action_mask_key: &'a crate::MaskKey,
    /// `execution_spec.default_device`.
    pub device: Device,
}

/// A root component `name` holding the actor-critic networks, `loss` and an optimizer of
/// `optimizer_spec`, with the preprocessor stack (and the action mask's split where `mask`
/// names one); also how it reads its states. The learners of PPO, A2C and IMPALA start from it.
pub(crate) fn actor_critic_root<B: Backend>(
    name: &str,
    spec: &ActorCriticSpec<'_>,
    action_space: &Space,
    mask: Option<&str>,
    loss: Component<B>,
    optimizer_spec: &OptimizerSpec,
) -> Result<(Component<B>, StateInput)> {
    let root = Component::<B>::new(name)
        .with_kind(name)
        .with_sub(actor_critic_networks::<B>(
            spec.network,
            spec.value_function,
            spec.action_adapter,
            action_space,
        )?)
        .with_sub(loss)
        .with_sub(optimizer("optimizer", optimizer_spec.clone()));
    with_preprocessing(root, spec.preprocessing, mask)
}

/// The acting graph of an actor-critic learner built by [`actor_critic_root`] under the same
/// `name`, so the learner's snapshots load into it: `get_action(states)` runs the networks'
/// method `stochastic`, whose outputs after the actions are the actor's `extras`.
pub(crate) fn actor_critic_actor<B: Backend>(
    name: &str,
    spec: &ActorCriticSpec<'_>,
    state_space: &Space,
    action_space: &Space,
    stochastic: &'static str,
    extras: &[&str],
    seed: u64,
) -> Result<GraphActor<B>> {
    let root = Component::<B>::new(name)
        .with_kind("actor-critic-actor")
        .with_sub(actor_critic_networks::<B>(
            spec.network,
            spec.value_function,
            spec.action_adapter,
            action_space,
        )?);
    let mask = mask_key(spec.action_mask_key, state_space, action_space)?;
    let (root, input) = with_preprocessing(root, spec.preprocessing, mask)?;
    let root = with_acting_apis(root, input, "networks", stochastic);
    let spaces = BTreeMap::from([("states".to_string(), state_space.with_batch_rank(true))]);
    let exec = build_graph(root, &spaces, spec.device, actor_seed(seed))?;
    Ok(GraphActor::new(exec, extras, false))
}
