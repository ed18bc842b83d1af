//! `RandomAgent`: uniformly random actions from the action space, learning nothing. The
//! baseline every learning curve should beat, and RLgraph's `RandomAgent`.

use std::collections::BTreeMap;
use std::path::Path;

use rand::Rng;
use rlgraph_core::spaces::{IntBox, Space, Value};
use rlgraph_core::{Backend, CoreError, ErasedExecutor, HostState, Result, SavedState};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::agent::{Agent, Transition};
use crate::agent_spec::SchemaKind;
use crate::agent_spec::{read_config, refuse_given, AgentKind};
use crate::algorithm_registry::{Description, Parts};
use crate::counters::Counters;
use crate::host_checkpoint::{save_host_checkpoint, HostCheckpoint};
use crate::update_spec::UpdateSpec;

/// The types a random agent's config may have.
pub(crate) const KIND: AgentKind = AgentKind {
    default: "random",
    names: &["random", "randomagent"],
    what: "a random agent (random)",
};

/// The format of a random agent's checkpoint.
const FORMAT: &str = "rlgraph-rs random agent 2";

/// The shared keys a random agent refuses: it learns nothing.
pub(crate) const LEARNING_KEYS: [&str; 6] = [
    "network_spec",
    "preprocessing_spec",
    "discount",
    "optimizer_spec",
    "update_spec",
    "observe_spec",
];

/// A random agent has no keys of its own, and of the shared ones it takes only the device.
#[derive(Deserialize, schemars::JsonSchema)]
struct RandomKeys {}

/// How the config schema describes the random agent's config.
pub(crate) const SCHEMA: SchemaKind = SchemaKind {
    title: "random agent",
    names: KIND.names,
    own: keys_schema,
    refused: &LEARNING_KEYS,
    priorities: true,
    n_step: false,
    normalize: false,
};

/// The random agent, as the algorithm table holds it: it learns nothing, so neither the
/// normalizer nor preprocessing wraps it (it refuses both keys).
pub(crate) const DESCRIPTION: Description = Description {
    wrapped: false,
    // Its keys are read as it is made; two actions stand in for the environment's.
    ..Description::keys(&["random"], &SCHEMA, |spec| {
        let two = IntBox::new(2).map_err(|e| crate::agent_spec::config("config", e.to_string()))?;
        RandomAgent::new(spec, &Space::from(two), 0).map(drop)
    })
};

/// The random agent on backend `B` (it uses none).
pub(crate) fn parts<B: Backend>() -> Parts<B> {
    Parts::agent(&DESCRIPTION, |spec, _, actions, seed| {
        Ok(Box::new(RandomAgent::new(spec, actions, seed)?))
    })
}

/// The schema of this config's own keys (beside the shared ones), for the config schema.
pub(crate) fn keys_schema(generator: &mut schemars::SchemaGenerator) -> serde_json::Value {
    <RandomKeys as schemars::JsonSchema>::json_schema(generator).to_value()
}

/// An agent that acts uniformly at random (among the valid actions, where states carry an
/// action mask).
pub struct RandomAgent {
    action_space: Space,
    mask_key: crate::MaskKey,
    counters: Counters,
    update: UpdateSpec,
}

impl RandomAgent {
    /// A random agent over `action_space`, drawing from `seed`. `spec` is its RLgraph
    /// config (`{"type": "random"}`); keys for learning are refused by name.
    pub fn new(spec: &Json, action_space: &Space, seed: u64) -> Result<Self> {
        let (_, shared, RandomKeys {}) = read_config(spec, &KIND)?;
        shared.multi_gpu(false)?;
        refuse_given(
            "config",
            &LEARNING_KEYS.map(|key| (key, spec.get(key).is_some())),
            "a random agent learns nothing; remove this key",
        )?;
        let update = UpdateSpec {
            do_updates: false,
            ..UpdateSpec::default()
        };
        Ok(RandomAgent {
            action_space: action_space.with_batch_rank(false),
            mask_key: shared.action_mask_key(),
            counters: Counters::new(seed),
            update,
        })
    }
}

/// The valid actions of `state` where it is a Dict with an action mask under `key` (an error
/// where the mask allows none); `None` for states without one.
fn valid_actions(state: &Value, key: &str) -> Result<Option<Vec<usize>>> {
    let Value::Dict(entries) = state else { return Ok(None) };
    let Some(mask) = entries.get(key) else { return Ok(None) };
    let valid =
        rlgraph_components::action_mask::valid_actions(&rlgraph_core::convert::value_to_host(mask)?.data.to_f64());
    match valid.is_empty() {
        true => Err(CoreError::Config {
            at: format!("states/{key}"),
            reason: "this state's action mask allows no action".into(),
        }),
        false => Ok(Some(valid)),
    }
}

impl Agent for RandomAgent {
    fn get_actions(&mut self, states: &[Value], _explore: bool, _time_percentage: f64) -> Result<Vec<Value>> {
        states
            .iter()
            .map(|state| match valid_actions(state, &self.mask_key.key)? {
                Some(valid) => Ok(Value::i32(valid[self.counters.rng.random_range(0..valid.len())] as i32)),
                None => Ok(self.action_space.sample(None, &mut self.counters.rng)),
            })
            .collect()
    }

    fn observe(&mut self, _env_id: usize, _transition: Transition) -> Result<()> {
        self.counters.timesteps += 1;
        Ok(())
    }

    fn update(&mut self, _time_percentage: f64) -> Result<Option<f64>> {
        Ok(None)
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.update
    }

    /// A random agent has no tensors, so its checkpoint is JSON: its counters under `agent`
    /// and the extra states' JSON under `host` (extra states with tensors are refused).
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        save_host_checkpoint(path, FORMAT, self.counters.save_state()?.meta, extra)
    }

    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        // The first format held the counters alone, at the top.
        let file = HostCheckpoint::read(path, FORMAT, true)?;
        let agent = SavedState {
            tensors: BTreeMap::new(),
            meta: file.agent.clone(),
        };
        self.counters.check_state(&agent)?;
        file.load_extra(extra)?;
        self.counters.load_state(agent)
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        None
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        None
    }
}
