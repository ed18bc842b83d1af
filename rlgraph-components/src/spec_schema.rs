//! JSON Schema definitions for component specs, made from [`crate::spec_keys`]: what an
//! editor checks a layer, preprocessor, optimizer, schedule or action adapter against.

use serde_json::{json, Map, Value as Json};

use crate::spec_keys::{SpecKeys, ACTION_ADAPTER, ALL, SCHEDULE};

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

/// The `$defs` entries `component`, `optimizer`, `schedule` and `action_adapter`, which
/// the config schema refers to as `#/$defs/<name>`.
pub fn definitions() -> Map<String, Json> {
    let in_group = |groups: &[&str]| -> Vec<&'static SpecKeys> {
        ALL.iter().copied().filter(|e| groups.contains(&e.group)).collect()
    };
    let mut defs = Map::new();
    // Optimizers are components too: a layer list may hold one.
    defs.insert(
        "component".into(),
        typed(&in_group(&["component", "optimizer"]), "a component spec"),
    );
    defs.insert(
        "optimizer".into(),
        typed(&in_group(&["optimizer"]), "an optimizer spec"),
    );
    defs.insert(
        "schedule".into(),
        json!({
            "description": "a number, [from, to], [kind, from, to(, power or decay rate)], or a schedule object",
            "anyOf": [
                {"type": "number"},
                {"type": "array"},
                {"type": "object", "properties": properties(&SCHEDULE, true), "additionalProperties": false},
            ]
        }),
    );
    let adapter = json!({
        "type": "object",
        "properties": properties(&ACTION_ADAPTER, false),
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

/// The schema of a spec whose `type` picks one of `entries`: the type must name one, and
/// each entry's keys are the only ones allowed beside it.
fn typed(entries: &[&SpecKeys], description: &str) -> Json {
    let any_type: Vec<Json> = entries
        .iter()
        .map(|e| json!({"pattern": type_pattern(e.names), "title": e.names[0]}))
        .collect();
    let rules: Vec<Json> = entries.iter().map(|e| rule(e, entries)).collect();
    json!({
        "description": description,
        "type": "object",
        "required": ["type"],
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
    json!({
        "if": when,
        "then": {
            "title": entry.names.join(", "),
            "properties": properties(entry, true),
            "additionalProperties": false,
        },
    })
}

/// `entry`'s keys as schema properties (values of any JSON type but `scope`, a string),
/// with `type` among them where the spec has one.
fn properties(entry: &SpecKeys, with_type: bool) -> Json {
    let mut props = Map::new();
    if with_type {
        props.insert("type".into(), json!({"type": "string"}));
    }
    for key in entry.keys {
        let value = match *key {
            "scope" => json!({"type": "string"}),
            _ => json!(true),
        };
        props.insert((*key).into(), value);
    }
    Json::Object(props)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_patterns_spell_names_as_rlgraph_does() {
        let p = type_pattern(&["denselayer", "dense"]);
        assert_eq!(
            p,
            "^[-_]*(?:[dD][-_]*[eE][-_]*[nN][-_]*[sS][-_]*[eE][-_]*[lL][-_]*[aA][-_]*[yY][-_]*[eE][-_]*[rR]|[dD][-_]*[eE][-_]*[nN][-_]*[sS][-_]*[eE])[-_]*$"
        );
        assert_eq!(
            type_pattern(&["conv2d"]),
            "^[-_]*(?:[cC][-_]*[oO][-_]*[nN][-_]*[vV][-_]*2[-_]*[dD])[-_]*$"
        );
    }
}
