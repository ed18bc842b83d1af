//! JSON Schema definitions for component specs, made from [`crate::spec_keys`]: what an
//! editor checks a layer, preprocessor, optimizer, schedule or action adapter against.

use serde_json::{json, Map, Value as Json};

use crate::spec_keys::{SpecKeys, ACTION_ADAPTER, ALL, DECAY_RATE_KINDS, NEURAL_NETWORK, POWER_KINDS, SCHEDULE, SGD};

/// A regular expression matching the spellings RLgraph accepts for `names` (case ignored,
/// `-` and `_` anywhere), as [`crate::spec::normalize_type`] matches them.
pub fn type_pattern(names: &[&str]) -> String {
    let alternatives: Vec<String> = names
        .iter()
        .map(|name| {
            name.chars()
                .map(|c| match (c.to_ascii_lowercase(), c.to_ascii_uppercase()) {
                    (lower, upper) if lower != upper => format!("[{lower}{upper}]"),
                    _ => c.to_string(),
                })
                .collect::<Vec<_>>()
                .join("[-_]*")
        })
        .collect();
    format!("^[-_]*(?:{})[-_]*$", alternatives.join("|"))
}

/// The `$defs` entries `component`, `layer_list`, `optimizer`, `schedule` and
/// `action_adapter`, which the config schema refers to as `#/$defs/<name>`.
pub fn definitions() -> Map<String, Json> {
    let in_group = |groups: &[&str]| -> Vec<&'static SpecKeys> {
        ALL.iter().copied().filter(|e| groups.contains(&e.group)).collect()
    };
    let mut defs = Map::new();
    // Optimizers are components too: a layer list may hold one. A list in a list is a
    // network, and so is RLgraph's `{"layers": [...]}` without a type.
    let untyped_network = Untyped {
        entry: &NEURAL_NETWORK,
        when: json!({"required": ["layers"]}),
    };
    defs.insert(
        "component".into(),
        json!({"anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/component"}},
            typed(&in_group(&["component", "optimizer"]), "a component spec", untyped_network),
        ]}),
    );
    defs.insert(
        "layer_list".into(),
        json!({
            "description": "a list of layer specs, or RLgraph's {\"layers\": [...], \"scope\": ...}",
            "anyOf": [
                {"type": "array", "items": {"$ref": "#/$defs/component"}},
                {
                    "type": "object",
                    "properties": {"layers": {"type": "array", "items": {"$ref": "#/$defs/component"}}, "scope": {"type": ["string", "null"]}},
                    "required": ["layers"],
                    "additionalProperties": false,
                },
            ],
        }),
    );
    // An optimizer without a type is plain gradient descent.
    let untyped_sgd = Untyped {
        entry: &SGD,
        when: json!({}),
    };
    defs.insert(
        "optimizer".into(),
        typed(&in_group(&["optimizer"]), "an optimizer spec", untyped_sgd),
    );
    defs.insert(
        "schedule".into(),
        json!({
            "description": "a number, [from, to], [kind, from, to(, power or decay rate)], or a schedule object",
            "anyOf": [
                {"type": "number"},
                {"type": "array"},
                {
                    "type": "object",
                    "properties": properties(&SCHEDULE, true),
                    "additionalProperties": false,
                    "allOf": schedule_rules(),
                },
            ]
        }),
    );
    // The reader lets a `type` through (every spec may have one) and reads nothing of it.
    let adapter = json!({
        "type": "object",
        "properties": properties(&ACTION_ADAPTER, true),
        "additionalProperties": false,
    });
    defs.insert(
        "action_adapter".into(),
        json!({
            "description": "an action adapter, or one per action key",
            "anyOf": [adapter, {"type": "object", "additionalProperties": adapter}],
        }),
    );
    defs
}

/// What a spec without a `type` is read as, and what it must have to be read so.
struct Untyped {
    entry: &'static SpecKeys,
    when: Json,
}

/// The schema of a spec whose `type` picks one of `entries`: the type must name one, and
/// each entry's keys are the only ones allowed beside it; without a type, `untyped` says
/// what the spec is.
fn typed(entries: &[&SpecKeys], description: &str, untyped: Untyped) -> Json {
    let any_type: Vec<Json> = entries
        .iter()
        .map(|e| json!({"pattern": type_pattern(e.names), "title": e.names[0]}))
        .collect();
    let mut rules: Vec<Json> = entries.iter().map(|e| rule(e, entries)).collect();
    let mut keys = properties(untyped.entry, false);
    keys["type"] = json!({"type": "null"});
    rules.push(json!({
        "if": {"not": {"required": ["type"]}},
        "then": {
            "title": format!("{} (no type)", untyped.entry.names[0]),
            "properties": keys,
            "additionalProperties": false,
        },
    }));
    json!({
        "description": description,
        "type": "object",
        "anyOf": [{"required": ["type"]}, untyped.when],
        "properties": {"type": {"type": "string", "anyOf": any_type}},
        "allOf": rules,
    })
}

/// If the spec's type is `entry`'s (and its selector, if any, is true), only its keys.
fn rule(entry: &SpecKeys, all: &[&SpecKeys]) -> Json {
    let mut when = json!({
        "properties": {"type": {"pattern": type_pattern(entry.names)}},
        "required": ["type"],
    });
    let selected = |key: &str| json!({"properties": {key: {"const": true}}, "required": [key]});
    match entry.selector {
        Some(key) => {
            when["properties"][key] = json!({"const": true});
            when["required"] = json!(["type", key]);
        }
        None => {
            // The default variant is the one no sibling's selector picks.
            let siblings: Vec<Json> = all
                .iter()
                .filter(|o| o.names == entry.names)
                .filter_map(|o| o.selector.map(selected))
                .collect();
            if !siblings.is_empty() {
                when["not"] = json!({"anyOf": siblings});
            }
        }
    }
    let mut then = json!({
        "title": entry.names.join(", "),
        "properties": properties(entry, true),
        "additionalProperties": false,
    });
    if entry.keys.contains(&"power") {
        then["allOf"] = schedule_rules();
    }
    json!({"if": when, "then": then})
}

/// A schedule's `power` belongs to polynomial kinds and its `decay_rate` to exponential ones
/// (a schedule without a type is constant).
fn schedule_rules() -> Json {
    let only_for = |key: &str, kinds: &[&str]| {
        let names: Vec<String> = kinds
            .iter()
            .flat_map(|k| [k.to_string(), format!("{k}decay")])
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        json!({
            "if": {"not": {"properties": {"type": {"pattern": type_pattern(&names)}}, "required": ["type"]}},
            "then": {"not": {"required": [key]}},
        })
    };
    json!([
        only_for("power", &POWER_KINDS),
        only_for("decay_rate", &DECAY_RATE_KINDS),
    ])
}

/// `entry`'s keys as schema properties, with `type` among them where the spec has one. The
/// keys that hold other specs are checked as those; the rest take any JSON value (their
/// values are the readers' to check).
fn properties(entry: &SpecKeys, with_type: bool) -> Json {
    let mut props = Map::new();
    if with_type {
        props.insert("type".into(), json!({"type": "string"}));
    }
    let components = json!({"type": "array", "items": {"$ref": "#/$defs/component"}});
    for key in entry.keys {
        let value = match *key {
            "scope" => json!({"type": ["string", "null"]}),
            "layers" | "preprocessors" => components.clone(),
            "residual_unit" => json!({"$ref": "#/$defs/component"}),
            "pre_network_spec" => json!({"anyOf": [{"$ref": "#/$defs/layer_list"}, {"type": "null"}]}),
            "learning_rate" | "decay_spec" => json!({"$ref": "#/$defs/schedule"}),
            _ => json!(true),
        };
        props.insert((*key).into(), value);
    }
    Json::Object(props)
}
