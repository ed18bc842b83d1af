//! Building components from their RLgraph JSON specs: policies here, everything they and
//! other components are built from in [`crate::layer_registry`].

use serde_json::Value as Json;

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Component, CoreError, Result};

use crate::action_adapter::AdapterSpec;
use crate::dueling_policy::dueling_policy;
use crate::layer_registry::{component_from_spec, layers_from_spec, network_layers, with_spec_kind};
use crate::policy::{policy_with, shared_value_function_policy, BoundedDistribution, PolicyOptions};
use crate::spec::{normalize_type, Spec};

/// Builds a component from its RLgraph spec (`{"type": "dense", "units": 2}`); a JSON array
/// is a neural network of the layers it lists. `at` names the spec's place for messages.
pub fn from_spec<B: Backend>(spec: &Json, at: &str) -> Result<Component<B>> {
    from_spec_with(spec, at, None)
}

/// Like [`from_spec`], with the action space that action-related components need.
pub fn from_spec_with<B: Backend>(spec: &Json, at: &str, action_space: Option<&Space>) -> Result<Component<B>> {
    match spec.get("type").and_then(Json::as_str) {
        Some(kind)
            if matches!(
                normalize_type(kind).as_str(),
                "policy" | "sharedvaluefunctionpolicy" | "duelingpolicy"
            ) =>
        {
            Ok(with_spec_kind(policy_from_spec(kind, spec, at, action_space)?, spec))
        }
        _ => component_from_spec(spec, at, action_space),
    }
}

/// A policy (RLgraph's `Policy`, `SharedValueFunctionPolicy` or `DuelingPolicy`) from its
/// spec: its network's layers, its action adapters and its distribution options.
fn policy_from_spec<B: Backend>(
    kind: &str,
    spec: &Json,
    at: &str,
    action_space: Option<&Space>,
) -> Result<Component<B>> {
    let s = Spec::new(spec, at)?;
    let dueling = normalize_type(kind) == "duelingpolicy";
    let allowed: &[&str] = if dueling {
        &[
            "network_spec",
            "units_state_value_stream",
            "action_adapter_spec",
            "scope",
        ]
    } else {
        &[
            "network_spec",
            "bounded_distribution_type",
            "log_std_init",
            "gumbel_softmax_temperature",
            "action_adapter_spec",
            "scope",
        ]
    };
    s.only(allowed)?;
    let at_net = s.at("network_spec");
    let net = s.get("network_spec").ok_or_else(|| CoreError::Config {
        at: at_net.clone(),
        reason: "missing; a policy needs a network".into(),
    })?;
    let layers = layers_from_spec::<B>(network_layers(net, &at_net)?, &at_net)?;
    let adapter = s.get("action_adapter_spec").map(|spec| AdapterSpec {
        spec: spec.clone(),
        at: s.at("action_adapter_spec"),
    });
    let action_space = action_space.ok_or_else(|| CoreError::Config {
        at: at.into(),
        reason: "a policy needs an action_space".into(),
    })?;
    let scope = s.str_or("scope", "policy")?;
    match normalize_type(kind).as_str() {
        "duelingpolicy" => dueling_policy(
            scope,
            layers,
            action_space,
            s.usize_or("units_state_value_stream", 128)?,
            adapter.as_ref(),
        ),
        "sharedvaluefunctionpolicy" => shared_value_function_policy(
            scope,
            layers,
            action_space,
            PolicyOptions {
                action_adapter: adapter,
                ..PolicyOptions::default()
            },
        ),
        _ => {
            let bounded = bounded_distribution(&s)?;
            let state_independent_log_std = s
                .get("log_std_init")
                .map(|_| checked_log_std_init(s.f64_or("log_std_init", 0.0)?, &s.at("log_std_init")))
                .transpose()?;
            let gumbel_softmax_temperature = s
                .get("gumbel_softmax_temperature")
                .map(|_| s.positive_f64_or("gumbel_softmax_temperature", 1.0))
                .transpose()?;
            policy_with(
                scope,
                layers,
                action_space,
                PolicyOptions {
                    bounded,
                    state_independent_log_std,
                    gumbel_softmax_temperature,
                    action_adapter: adapter,
                },
            )
        }
    }
}

/// The policy spec's `bounded_distribution_type` (default `squashed`).
fn bounded_distribution(s: &Spec<'_>) -> Result<BoundedDistribution> {
    let name = s.str_or("bounded_distribution_type", "squashed")?;
    BoundedDistribution::parse(name).ok_or_else(|| CoreError::Config {
        at: s.at("bounded_distribution_type"),
        reason: format!("{name:?}: use \"squashed\", \"beta\" or \"normal\""),
    })
}

/// `log_std_init` (written at `at`) where the log-std's clamp keeps it: -20 to 2.
pub fn checked_log_std_init(x: f64, at: &str) -> Result<f64> {
    match (-20.0..=2.0).contains(&x) {
        true => Ok(x),
        false => Err(CoreError::Config {
            at: at.into(),
            reason: format!("{x} is outside -20 to 2, where policies clamp a log-std"),
        }),
    }
}
