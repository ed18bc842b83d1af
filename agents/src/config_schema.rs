//! The JSON Schema of agent configs (what `rlgraph schema` prints and
//! `docs/config.schema.json` holds), made from the types the configs are read with: each
//! algorithm's serde keys beside the shared ones, and rlgraph-components' table of component
//! keys. A key the schema refuses is one `build_agent` refuses, and the other way round;
//! checks that depend on values (a memory's type, a number's range in context) stay the
//! reader's.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value as Json};

use crate::agent_spec::{MemorySpec, ObserveSpec, SharedSpec};
use crate::normalizer::NormalizeSpec;

/// Where the schema says it lives, for editors that follow `$id`.
pub const SCHEMA_ID: &str = "https://rlgraph-rs.dev/config.schema.json";

/// The agent kinds the schema describes: one definition per kind, the `type` pattern that
/// picks it and the rule that applies it.
#[derive(Default)]
struct Kinds {
    defs: Map<String, Json>,
    type_names: Vec<Json>,
    rules: Vec<Json>,
}

impl Kinds {
    /// Adds `def` (an object's schema) as definition `name`, with the keys every config may
    /// have beside its settings (`type`, and `$schema` for editors), picked by the `type`
    /// names `names` match (`picked_by` says them in the rule).
    fn add(&mut self, name: String, title: &str, names: &[&str], picked_by: &str, mut def: Json) {
        if let Some(object) = def.as_object_mut() {
            object.insert("title".into(), json!(title));
            if let Some(props) = object.entry("properties").or_insert_with(|| json!({})).as_object_mut() {
                props.insert("type".into(), json!({"type": "string"}));
                props.insert(
                    "$schema".into(),
                    json!({"type": "string", "description": "this schema, for editors"}),
                );
            }
        }
        let pattern = rlgraph_components::spec_schema::type_pattern(names);
        self.type_names.push(json!({"pattern": pattern, "title": title}));
        self.rules.push(json!({
            "if": {"properties": {"type": {"pattern": pattern}}, "required": ["type"]},
            "then": {"$ref": format!("#/$defs/{name}"), "title": picked_by},
        }));
        self.defs.insert(name, def);
    }
}

/// The JSON Schema (draft 2020-12) every agent config `build_agent` reads validates against,
/// the algorithms registered in this process included.
pub fn config_schema() -> Json {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let shared = properties(SharedSpec::json_schema(&mut generator).to_value());
    let observe = ObserveSpec::json_schema(&mut generator).to_value();
    let memory = MemorySpec::json_schema(&mut generator).to_value();
    let normalize = generator.subschema_for::<NormalizeSpec>().to_value();
    let mut kinds = Kinds::default();
    for family in crate::algorithm_registry::schema_kinds() {
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
        let def = json!({
            "title": family.title,
            "type": "object",
            "properties": props,
            "additionalProperties": false,
        });
        let name = family.title.replace([' ', '-'], "_");
        kinds.add(name, family.title, family.names, &family.names.join(", "), def);
    }
    // A registered algorithm's settings are its whole config.
    for (kind, settings) in crate::algorithm_registry::settings_schemas(&mut generator) {
        let name = format!("registered_{}", kind.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let key = crate::agent_spec::normalized_kind(Some(&kind), "");
        kinds.add(name, &format!("{kind} (registered)"), &[key.as_str()], &kind, settings);
    }
    let Kinds {
        mut defs,
        type_names,
        rules,
    } = kinds;
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
