//! RLgraph's `action_adapter_spec`: the layer that turns a policy network's output into
//! distribution parameters (or Q-values), with its own initializers and activation, and an
//! optional pre-network of layers in front of it.

use serde_json::{json, Map, Value as Json};

use rlgraph_core::{Backend, Component, CoreError, Result};

use crate::layer_registry::{component_from_spec, layers_from_spec, network_layers};
use crate::network::neural_network;
use crate::spec::Spec;
use crate::spec_keys;

/// An `action_adapter_spec` and where it was written (`config.policy_spec.action_adapter_spec`
/// in an agent config), so its errors name the place.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterSpec {
    /// The spec as written: one adapter spec, or (container actions) one per action key.
    pub spec: Json,
    /// Its JSON path, for messages.
    pub at: String,
}

impl AdapterSpec {
    /// The spec of the action `key` of a keyed spec, or the whole spec when it is not keyed;
    /// `None` when a keyed spec has no entry for `key`.
    pub(crate) fn for_action(&self, key: &str) -> Option<AdapterSpec> {
        if !is_keyed(&self.spec) {
            return Some(self.clone());
        }
        self.spec.get(key).map(|spec| AdapterSpec {
            spec: spec.clone(),
            at: format!("{}.{key}", self.at),
        })
    }

    /// Checks the spec as a policy will read it (every key, the pre-network's layers, the
    /// activation and initializers) before any action space is known, each entry of a keyed
    /// spec on its own, so a config can refuse it when it loads.
    pub fn check(&self) -> Result<()> {
        let entries: Vec<AdapterSpec> = match self.spec.as_object().filter(|_| is_keyed(&self.spec)) {
            Some(keyed) => keyed
                .iter()
                .map(|(key, spec)| AdapterSpec {
                    spec: spec.clone(),
                    at: format!("{}.{key}", self.at),
                })
                .collect(),
            None => vec![self.clone()],
        };
        for entry in &entries {
            action_adapter::<rlgraph_core::SpecOnly>("action-adapter", 1, Some(entry))?;
        }
        Ok(())
    }

    /// Refuses a keyed entry that names none of the action `keys` (it would be dropped
    /// without a word).
    pub(crate) fn check_keys(&self, keys: &[&str]) -> Result<()> {
        let keyed = self.spec.as_object().filter(|_| is_keyed(&self.spec));
        match keyed.and_then(|o| o.keys().find(|k| !keys.contains(&k.as_str()))) {
            Some(k) => Err(CoreError::Config {
                at: format!("{}.{k}", self.at),
                reason: format!("no action is called {k:?}; the actions are {}", keys.join(", ")),
            }),
            None => Ok(()),
        }
    }
}

/// The action adapter `name` with `units` outputs, as `spec` (RLgraph's
/// `action_adapter_spec`) describes it; `None` gives RLgraph's default, one linear dense
/// layer. With a `pre_network_spec` the adapter is a network of those layers followed by the
/// dense `action-layer`, as RLgraph builds it.
pub fn action_adapter<B: Backend>(name: &str, units: usize, adapter: Option<&AdapterSpec>) -> Result<Component<B>> {
    let empty = Json::Object(Map::new());
    let (spec, at) = adapter.map_or((&empty, "action_adapter_spec"), |a| (&a.spec, a.at.as_str()));
    // A joint policy hands each action its own entry, so a keyed spec here has no action to key.
    if is_keyed(spec) {
        return Err(CoreError::Config {
            at: at.into(),
            reason: format!("adapters keyed by action ({spec}) need container actions; this policy has one action"),
        });
    }
    let s = Spec::new(spec, at)?;
    s.only(spec_keys::ACTION_ADAPTER.keys)?;
    // The action layer is an ordinary dense spec, so it reads its keys as every dense does.
    let mut layer = json!({"type": "dense", "units": units, "activation": "linear"});
    for key in ["weights_spec", "biases_spec", "activation", "activation_params"] {
        if let Some(v) = s.get(key) {
            layer[key] = v.clone();
        }
    }
    let at_pre = s.at("pre_network_spec");
    let pre = match s.get("pre_network_spec") {
        None | Some(Json::Null) => &[][..],
        Some(net) => network_layers(net, &at_pre)?,
    };
    if pre.is_empty() {
        layer["scope"] = json!(name);
        return component_from_spec::<B>(&layer, at, None);
    }
    layer["scope"] = json!("action-layer");
    let mut layers = layers_from_spec::<B>(pre, &at_pre)?;
    layers.push(component_from_spec::<B>(&layer, at, None)?);
    Ok(neural_network(name, layers).with_kind("action-adapter"))
}

/// Whether `spec` is a dict of adapter specs keyed by action-space keys (RLgraph's form for
/// container actions) rather than one adapter spec.
pub fn is_keyed(spec: &Json) -> bool {
    spec.as_object().is_some_and(|o| {
        !o.is_empty()
            && o.keys()
                .all(|k| k != "type" && !spec_keys::ACTION_ADAPTER.keys.contains(&k.as_str()))
    })
}
