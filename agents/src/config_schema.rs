//! The JSON Schema of agent configs (what `rlgraph schema` prints and
//! `docs/config.schema.json` holds), made from the types the configs are read with: each
//! algorithm's serde keys beside the shared ones, and rlgraph-components' table of component
//! keys. A key the schema refuses is one `build_agent` refuses, and the other way round;
//! checks that depend on values (a memory's type, a number's range in context) stay the
//! reader's.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value as Json};

use crate::agent_spec::{MemorySpec, ObserveSpec, SharedSpec};
use crate::normalizer::NormalizeSpec;

/// Where the schema says it lives, for editors that follow `$id`.
pub const SCHEMA_ID: &str = "https://rlgraph-rs.dev/config.schema.json";

/// One kind of agent config: the `type` names that pick it and how its keys differ.
struct Family {
    title: &'static str,
    names: &'static [&'static str],
    own: fn(&mut SchemaGenerator) -> Json,
    /// Keys this kind refuses (shared ones, or the algorithm's that belong to a sibling).
    refused: &'static [&'static str],
    /// Whether `memory_spec.alpha` and `beta` may be given (prioritized replay: DQN's).
    priorities: bool,
    /// Whether `observe_spec.n_step` is read (DQN only).
    n_step: bool,
    /// Whether `normalize_spec` may wrap the agent.
    normalize: bool,
}

fn families() -> [Family; 6] {
    [
        Family {
            title: "DQN or Ape-X agent",
            names: crate::dqn::config::KIND.names,
            own: crate::dqn::config::keys_schema,
            refused: &[],
            priorities: true,
            n_step: true,
            normalize: true,
        },
        Family {
            title: "PPO agent",
            names: &["ppo", "ppoagent"],
            own: crate::pg::config::keys_schema,
            // Actor-critic's policy-loss weight; PPO's loss has none.
            refused: &["weight_pg"],
            priorities: false,
            n_step: false,
            normalize: true,
        },
        Family {
            title: "actor-critic agent",
            names: &["actorcritic", "actorcriticagent", "a2c"],
            own: crate::pg::config::keys_schema,
            refused: &crate::pg::config::PPO_ONLY,
            priorities: false,
            n_step: false,
            normalize: true,
        },
        Family {
            title: "SAC agent",
            names: crate::sac::config::KIND.names,
            own: crate::sac::config::keys_schema,
            refused: &[],
            priorities: false,
            n_step: false,
            normalize: true,
        },
        Family {
            title: "IMPALA agent",
            names: crate::impala::config::KIND.names,
            own: crate::impala::config::keys_schema,
            refused: &[],
            priorities: true,
            n_step: false,
            normalize: true,
        },
        Family {
            title: "random agent",
            names: crate::random_agent::KIND.names,
            own: crate::random_agent::keys_schema,
            refused: &crate::random_agent::LEARNING_KEYS,
            priorities: true,
            n_step: false,
            normalize: false,
        },
    ]
}

/// The JSON Schema (draft 2020-12) every agent config `build_agent` reads validates against.
pub fn config_schema() -> Json {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let shared = properties(SharedSpec::json_schema(&mut generator).to_value());
    let observe = ObserveSpec::json_schema(&mut generator).to_value();
    let memory = MemorySpec::json_schema(&mut generator).to_value();
    let normalize = generator.subschema_for::<NormalizeSpec>().to_value();
    let mut defs = Map::new();
    let mut type_names = vec![];
    let mut rules = vec![];
    for family in families() {
        let pattern = rlgraph_components::spec_schema::type_pattern(family.names);
        let mut props = shared.clone();
        props.extend(properties((family.own)(&mut generator)));
        for key in family.refused {
            props.remove(*key);
        }
        if !family.n_step && !family.refused.contains(&"observe_spec") {
            props.insert("observe_spec".into(), nullable(without(&observe, &["n_step"])));
        }
        if !family.priorities && props.contains_key("memory_spec") {
            props.insert("memory_spec".into(), nullable(without(&memory, &["alpha", "beta"])));
        }
        if family.normalize {
            props.insert("normalize_spec".into(), normalize.clone());
        }
        props.insert("type".into(), json!({"type": "string"}));
        props.insert(
            "$schema".into(),
            json!({"type": "string", "description": "this schema, for editors"}),
        );
        let name = family.title.replace([' ', '-'], "_");
        defs.insert(
            name.clone(),
            json!({
                "title": family.title,
                "type": "object",
                "properties": props,
                "additionalProperties": false,
            }),
        );
        type_names.push(json!({"pattern": pattern, "title": family.title}));
        rules.push(json!({
            "if": {"properties": {"type": {"pattern": pattern}}, "required": ["type"]},
            "then": {"$ref": format!("#/$defs/{name}"), "title": family.names.join(", ")},
        }));
    }
    defs.extend(generator.take_definitions(true));
    defs.extend(rlgraph_components::spec_schema::definitions());
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "rlgraph-rs agent config",
        "description": "RLgraph's agent config as rlgraph-rs reads it; the `type` picks the algorithm.",
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "anyOf": type_names}},
        "allOf": rules,
        "$defs": defs,
    })
}

/// `schema` (an object's) without `keys`.
fn without(schema: &Json, keys: &[&str]) -> Json {
    let mut copy = schema.clone();
    if let Some(p) = copy.get_mut("properties").and_then(Json::as_object_mut) {
        keys.iter().for_each(|k| drop(p.remove(*k)));
    }
    copy
}

/// `schema`, or null (an `Option` field's absent value, as serde reads it).
fn nullable(schema: Json) -> Json {
    json!({"anyOf": [schema, {"type": "null"}]})
}

fn properties(schema: Json) -> Map<String, Json> {
    match schema.get("properties") {
        Some(Json::Object(p)) => p.clone(),
        _ => Map::new(),
    }
}

// Each of these stands for an `Option` field, where `null` means absent, as serde reads it.

/// `preprocessing_spec`: a list of component specs.
pub(crate) fn components(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": ["array", "null"], "items": {"$ref": "#/$defs/component"}})
}

/// An optimizer spec.
pub(crate) fn optimizer(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"anyOf": [{"$ref": "#/$defs/optimizer"}, {"type": "null"}]})
}

/// A schedule that must be given: a number or a time-dependent parameter.
pub(crate) fn schedule(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"$ref": "#/$defs/schedule"})
}

/// A schedule that may be left out.
pub(crate) fn optional_schedule(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"anyOf": [{"$ref": "#/$defs/schedule"}, {"type": "null"}]})
}

/// `policy_spec.action_adapter_spec`.
pub(crate) fn action_adapter(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"anyOf": [{"$ref": "#/$defs/action_adapter"}, {"type": "null"}]})
}

/// `memory_spec.frame_stack`: how stacked states split into frames.
pub(crate) fn frame_stack(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": ["object", "null"],
        "properties": {"frames": {"type": "integer", "minimum": 0}, "group": {"type": "integer", "minimum": 0}},
        "required": ["frames", "group"],
        "additionalProperties": false
    })
}
