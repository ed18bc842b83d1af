//! The agent config's schema and check with the executors' own settings added: what
//! `rlgraph schema` prints and what a config is held to before any layout runs it.

use rlgraph_core::Result;
use serde_json::Value as Json;

use crate::ga3c::Ga3cSpec;

/// [`agents::config_schema`] with `execution_spec.ga3c_spec`'s keys (the GA3C executor's
/// settings, which the agents crate does not know).
pub fn config_schema() -> Json {
    let mut schema = agents::config_schema();
    let mut generator = schemars::SchemaGenerator::new(schemars::generate::SchemaSettings::draft2020_12());
    let ga3c = <Ga3cSpec as schemars::JsonSchema>::json_schema(&mut generator).to_value();
    if let Some(slot) = schema.pointer_mut("/$defs/ExecutionSpec/properties/ga3c_spec") {
        *slot = serde_json::json!({"anyOf": [ga3c, {"type": "null"}]});
    }
    schema
}

/// [`agents::check_config`] and the executors' settings: every key a layout reads, checked
/// without spaces or a backend.
pub fn check_config(config: &Json) -> Result<()> {
    agents::check_config(config)?;
    Ga3cSpec::parse(config).map(drop)
}
