//! `SacConfig`: RLgraph's soft actor-critic config (`{"type": "sac", ...}`), read with
//! RLgraph's defaults; keys not yet supported are errors that name them.

use rlgraph_components::OptimizerSpec;
use rlgraph_core::{Device, Result};
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::agent_spec::config;
use crate::agent_spec::SchemaKind;
use crate::agent_spec::{read_config, AgentKind, Layers, MemorySpec};
use crate::bounded_numbers::PositiveReal;
use crate::update_spec::UpdateSpec;

/// A parsed SAC config.
#[derive(Clone, Debug)]
pub struct SacConfig {
    /// Where the graph runs (`execution_spec.default_device`).
    pub device: Device,
    /// `network_spec`: the policy network's layers.
    pub network_spec: Vec<Json>,
    /// `value_function_spec`: each Q network's layers (input: state and action, concatenated).
    pub value_function_spec: Vec<Json>,
    /// `preprocessing_spec`.
    pub preprocessing_spec: Vec<Json>,
    /// `action_mask_key`: where Dict states carry their action mask (`action_mask` by default).
    pub action_mask_key: crate::MaskKey,
    /// Replay capacity.
    pub capacity: usize,
    /// Gamma.
    pub discount: f64,
    /// Alpha at the start (tuned toward the target entropy from there, when there is one).
    pub initial_alpha: f64,
    /// The entropy alpha is tuned toward. `None` (absent or `null`, RLgraph's default) keeps
    /// alpha fixed at `initial_alpha`.
    pub target_entropy: Option<f64>,
    /// The Gumbel-softmax temperature of discrete actions.
    pub gumbel_softmax_temperature: f64,
    /// The update schedule; `sync_tau` moves the target critics (Polyak averaging).
    pub update: UpdateSpec,
    /// The policy's and alpha's optimizer.
    pub optimizer: OptimizerSpec,
    /// The critics' optimizer (`optimizer_spec` when absent).
    pub value_function_optimizer: OptimizerSpec,
    /// Whether the critics' optimizer is `optimizer_spec`'s (no
    /// `value_function_optimizer_spec`), so an optimizer given as a value steps them too.
    pub value_function_optimizer_follows: bool,
}

/// The types a SAC config may have.
pub(crate) const KIND: AgentKind = AgentKind {
    default: "",
    names: &["sac", "sacagent"],
    what: "a SAC agent (sac)",
};

/// The keys of a SAC config beyond the shared ones.
#[derive(Deserialize, schemars::JsonSchema)]
struct SacKeys {
    /// The Gumbel-softmax temperature for discrete actions.
    gumbel_softmax_temperature: Option<PositiveReal>,
    /// The Q networks' layers.
    value_function_spec: Option<Layers>,
    /// The replay memory and its capacity.
    memory_spec: Option<MemorySpec>,
    /// The Q networks' optimizer.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema_refs::optimizer")]
    value_function_optimizer_spec: Option<Json>,
    /// The entropy coefficient at the start.
    initial_alpha: Option<PositiveReal>,
    /// The entropy alpha is tuned towards (absent: alpha stays fixed).
    target_entropy: Option<f64>,
    /// Two Q networks, the smaller value taken.
    double_q: Option<bool>,
}

/// How the config schema describes a SAC config.
pub(crate) const SCHEMA: SchemaKind = SchemaKind {
    title: "SAC agent",
    names: KIND.names,
    own: keys_schema,
    refused: &[],
    priorities: false,
    n_step: false,
    normalize: true,
};

/// The schema of this config's own keys (beside the shared ones), for the config schema.
pub(crate) fn keys_schema(generator: &mut schemars::SchemaGenerator) -> serde_json::Value {
    <SacKeys as schemars::JsonSchema>::json_schema(generator).to_value()
}

impl SacConfig {
    /// Parses an RLgraph SAC config.
    pub fn parse(spec: &Json) -> Result<Self> {
        let (_, shared, own) = read_config::<SacKeys>(spec, &KIND)?;
        shared.refuse_n_step()?;
        shared.multi_gpu(false)?;
        if own.double_q == Some(false) {
            return Err(config(
                "config.double_q",
                "SAC here always learns twin critics; a single critic is not supported".into(),
            ));
        }
        let network_spec = shared.network("SAC needs a policy and a Q network")?;
        crate::recurrence::refuse_recurrence(&network_spec, "config.network_spec", "SAC")?;
        let value_function_spec = own
            .value_function_spec
            .map(|l| l.checked("config.value_function_spec"))
            .transpose()?
            .unwrap_or_default();
        if value_function_spec.is_empty() {
            return Err(config(
                "config.value_function_spec",
                "missing; SAC needs a policy and a Q network".into(),
            ));
        }
        let m = own.memory_spec.unwrap_or_default();
        if !matches!(m.kind("replay").as_str(), "replay" | "replaymemory") {
            return Err(config(
                "config.memory_spec.type",
                "SAC replays uniformly: use replay".into(),
            ));
        }
        m.refuse_priorities()?;
        let optimizer_json = shared.optimizer_json(json!({"type": "adam", "learning_rate": 0.0003}));
        let value_function_optimizer_follows = own.value_function_optimizer_spec.is_none();
        let vf_json = own.value_function_optimizer_spec.unwrap_or(optimizer_json.clone());
        let update = shared.update_spec.clone().unwrap_or_default().resolve();
        Ok(SacConfig {
            device: shared.device(),
            network_spec,
            value_function_spec,
            preprocessing_spec: shared.preprocessing()?,
            action_mask_key: shared.action_mask_key(),
            capacity: m.capacity(1000),
            discount: shared.discount.map_or(0.99, |d| d.0),
            initial_alpha: own.initial_alpha.map_or(1.0, |a| a.0),
            gumbel_softmax_temperature: own.gumbel_softmax_temperature.map_or(1.0, |t| t.0),
            target_entropy: own.target_entropy,
            update,
            optimizer: OptimizerSpec::parse(&optimizer_json, "config.optimizer_spec")?,
            value_function_optimizer: OptimizerSpec::parse(&vf_json, "config.value_function_optimizer_spec")?,
            value_function_optimizer_follows,
        })
    }
}
