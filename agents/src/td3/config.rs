//! TD3's settings (`{"type": "td3", ...}`): the keys of the other agent configs where they
//! mean the same, TD3's own noise and delay keys, and CleanRL's `td3_continuous_action`
//! values for every key left out. Every check is made while the JSON is read, so a config's
//! load-time check (which only reads it) refuses what a build would, at the key's path.

use rlgraph_components::OptimizerSpec;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value as Json;

use crate::agent_spec::{Fraction, Layers, MemorySpec};
use crate::bounded_numbers::{NonNegativeReal, Positive};
use crate::update_spec::{UpdateSpec, UpdateSpecKeys};

/// A TD3 config as written: every key but the two networks optional, unknown keys refused.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Td3Settings {
    /// Gamma (default 0.99).
    discount: Option<Fraction>,
    /// The policy network's hidden layers; a tanh layer of the action's size follows them.
    #[serde(deserialize_with = "checked_layers")]
    network_spec: Layers,
    /// Each Q network's hidden layers (input: state and action, side by side).
    #[serde(deserialize_with = "checked_layers")]
    value_function_spec: Layers,
    /// Preprocessing of the states, as for the other agents.
    #[serde(default)]
    preprocessing_spec: Vec<Json>,
    /// The replay memory (`replay`) and its capacity (default 1,000,000).
    #[serde(default, deserialize_with = "uniform_replay")]
    memory_spec: Option<MemorySpec>,
    /// The policy's optimizer (default Adam at 3e-4).
    #[serde(default, deserialize_with = "optimizer")]
    #[schemars(schema_with = "crate::schema_refs::optimizer")]
    optimizer_spec: Option<OptimizerSpec>,
    /// The critics' optimizer (default: `optimizer_spec`'s).
    #[serde(default, deserialize_with = "optimizer")]
    #[schemars(schema_with = "crate::schema_refs::optimizer")]
    value_function_optimizer_spec: Option<OptimizerSpec>,
    /// When to update: defaults `update_interval` 1, `batch_size` 256, `steps_before_update`
    /// 25,000 (steps acted uniformly at random, as CleanRL's `learning_starts`), `sync_tau`
    /// 0.005. The targets move after each policy update, so `sync_interval` is refused.
    #[serde(default, deserialize_with = "td3_update")]
    update_spec: Option<UpdateSpecKeys>,
    /// The exploring actions' Gaussian noise, in half-widths of the action range (default 0.1).
    exploration_noise: Option<NonNegativeReal>,
    /// The target policy's smoothing noise, the same way (default 0.2).
    target_policy_noise: Option<NonNegativeReal>,
    /// Where the smoothing noise is clipped, the same way (default 0.5).
    target_noise_clip: Option<NonNegativeReal>,
    /// Critic updates per policy update and target move (default 2).
    policy_delay: Option<Positive>,
}

/// A TD3 config with every default filled in.
#[derive(Clone, Debug)]
pub struct Td3Config {
    /// Gamma.
    pub discount: f64,
    /// The policy's hidden layers.
    pub network_spec: Vec<Json>,
    /// Each Q network's hidden layers.
    pub value_function_spec: Vec<Json>,
    /// `preprocessing_spec`.
    pub preprocessing_spec: Vec<Json>,
    /// Replay capacity.
    pub capacity: usize,
    /// The policy's optimizer.
    pub optimizer: OptimizerSpec,
    /// The critics' optimizer.
    pub value_function_optimizer: OptimizerSpec,
    /// The update schedule; `steps_before_update` steps are acted uniformly at random.
    pub update: UpdateSpec,
    /// Exploration noise's standard deviation, in half-widths of the action range.
    pub exploration_noise: f64,
    /// Target smoothing noise's standard deviation, in half-widths.
    pub target_policy_noise: f64,
    /// The smoothing noise's clip, in half-widths.
    pub target_noise_clip: f64,
    /// Critic updates per policy update.
    pub policy_delay: u64,
}

/// A serde error from one a nested reader gave, at the place it names (relative to the key
/// being read, whose path serde adds).
fn nested<E: serde::de::Error>(e: rlgraph_core::CoreError) -> E {
    match e {
        rlgraph_core::CoreError::Config { at, reason } if !at.is_empty() => {
            E::custom(format!("{}: {reason}", at.trim_start_matches('.')))
        }
        rlgraph_core::CoreError::Config { reason, .. } => E::custom(reason),
        other => E::custom(other),
    }
}

/// Layers whose specs are made into components on the spec-only backend as they are read.
fn checked_layers<'de, D: Deserializer<'de>>(d: D) -> Result<Layers, D::Error> {
    let layers = Layers::deserialize(d)?;
    layers.checked("").map_err(nested)?;
    Ok(layers)
}

fn uniform_replay<'de, D: Deserializer<'de>>(d: D) -> Result<Option<MemorySpec>, D::Error> {
    let memory = MemorySpec::deserialize(d)?;
    if !matches!(memory.kind("replay").as_str(), "replay" | "replaymemory") {
        return Err(D::Error::custom("TD3 replays uniformly: the type must be replay"));
    }
    memory.refuse_priorities().map_err(nested)?;
    Ok(Some(memory))
}

fn optimizer<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OptimizerSpec>, D::Error> {
    let spec = Json::deserialize(d)?;
    let parsed = OptimizerSpec::parse(&spec, "").map_err(nested)?;
    Ok(Some(parsed))
}

fn td3_update<'de, D: Deserializer<'de>>(d: D) -> Result<Option<UpdateSpecKeys>, D::Error> {
    let keys = UpdateSpecKeys::deserialize(d)?;
    if keys.sync_interval.is_some() {
        return Err(D::Error::custom(
            "sync_interval is not read: TD3 moves its targets after each policy update (every \
             policy_delay updates); leave it out",
        ));
    }
    Ok(Some(keys))
}

impl From<Td3Settings> for Td3Config {
    /// The config `settings` describe, with CleanRL's values where they say nothing.
    fn from(settings: Td3Settings) -> Self {
        let keys = settings.update_spec.unwrap_or_default();
        // RLgraph's defaults suit DQN; TD3's are CleanRL's.
        let mut update = keys.resolve();
        if keys.update_interval.is_none() {
            update.update_interval = 1;
        }
        if keys.batch_size.is_none() {
            update.batch_size = 256;
        }
        if keys.steps_before_update.is_none() {
            update.steps_before_update = 25_000;
        }
        if keys.sync_tau.is_none() {
            update.sync_tau = 0.005;
        }
        let optimizer = settings.optimizer_spec.unwrap_or_else(|| OptimizerSpec::adam(3e-4));
        let noise = |n: Option<NonNegativeReal>, default: f64| n.map_or(default, |n| n.0);
        Td3Config {
            discount: settings.discount.map_or(0.99, |d| d.0),
            network_spec: settings.network_spec.0,
            value_function_spec: settings.value_function_spec.0,
            preprocessing_spec: settings.preprocessing_spec,
            capacity: settings.memory_spec.unwrap_or_default().capacity(1_000_000),
            value_function_optimizer: settings
                .value_function_optimizer_spec
                .unwrap_or_else(|| optimizer.clone()),
            optimizer,
            update,
            exploration_noise: noise(settings.exploration_noise, 0.1),
            target_policy_noise: noise(settings.target_policy_noise, 0.2),
            target_noise_clip: noise(settings.target_noise_clip, 0.5),
            policy_delay: settings.policy_delay.map_or(2, |n| n.0 as u64),
        }
    }
}

impl Td3Config {
    /// Reads a TD3 config from its JSON (`type` and `$schema` aside).
    pub fn parse(spec: &Json) -> rlgraph_core::Result<Self> {
        Ok(crate::algorithm_registry::settings::<Td3Settings>(spec)?.into())
    }
}
