//! The JSON Schema of agent configs (what `rlgraph schema` prints and
//! `docs/config.schema.json` holds), made from the types the configs are read with: each
//! algorithm's serde keys beside the shared ones, and rlgraph-components' table of component
//! keys. A key the schema refuses is one `build_agent` refuses, and the other way round;
//! checks that depend on values (a memory's type, a number's range in context) stay the
//! reader's.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value as Json};

use crate::agent_spec::{MemorySpec, ObserveSpec, SchemaKind, SharedSpec};
use crate::normalizer::NormalizeSpec;

/// Where the schema says it lives, for editors that follow `$id`.
pub const SCHEMA_ID: &str = "https://rlgraph-rs.dev/config.schema.json";

/// Every algorithm's kinds, as `agent_family` knows them.
fn families() -> Vec<&'static SchemaKind> {
    [
        crate::dqn::config::SCHEMA_KINDS,
        crate::pg::config::SCHEMA_KINDS,
        crate::sac::config::SCHEMA_KINDS,
        crate::impala::config::SCHEMA_KINDS,
        crate::random_agent::SCHEMA_KINDS,
    ]
    .concat()
    .into_iter()
    .collect()
}

/// The JSON Schema (draft 2020-12) every agent config `build_agent` reads validates against,
/// the algorithms registered in this process included.
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
    for (kind, mut schema) in crate::algorithm_registry::registered_schemas(&mut generator) {
        let title = format!("{kind} (registered)");
        let name = format!("registered_{}", kind.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let key = crate::agent_spec::normalized_kind(Some(&kind), "");
        let pattern = rlgraph_components::spec_schema::type_pattern(&[key.as_str()]);
        // The settings' own schema, with the two keys that are not settings.
        if let Some(object) = schema.as_object_mut() {
            object.insert("title".into(), json!(title));
            if let Some(props) = object.entry("properties").or_insert_with(|| json!({})).as_object_mut() {
                props.insert("type".into(), json!({"type": "string"}));
                props.insert(
                    "$schema".into(),
                    json!({"type": "string", "description": "this schema, for editors"}),
                );
            }
        }
        defs.insert(name.clone(), schema);
        type_names.push(json!({"pattern": pattern, "title": title}));
        rules.push(json!({
            "if": {"properties": {"type": {"pattern": pattern}}, "required": ["type"]},
            "then": {"$ref": format!("#/$defs/{name}"), "title": kind},
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
