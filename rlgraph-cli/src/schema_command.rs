//! `rlgraph schema`: the JSON Schema of agent configs, and the book's page of every config
//! key, both made from [`executors::config_schema`].

use clap::Args;
use serde_json::Value as Json;

/// Arguments of `rlgraph schema`.
#[derive(Args)]
pub struct SchemaArgs {
    /// Print the schema of benchmark suite files (`configs/benchmarks/*.json`) instead of
    /// agent configs'.
    #[arg(long)]
    suite: bool,
}

/// The schema as pretty JSON, as `docs/config.schema.json` (or `docs/suite.schema.json`)
/// holds it.
pub fn run(args: &SchemaArgs) -> Result<String, String> {
    Ok(match args.suite {
        true => suite_schema_text(),
        false => schema_text(),
    })
}

/// The agent config schema file's text.
pub fn schema_text() -> String {
    serde_json::to_string_pretty(&executors::config_schema()).unwrap_or_default()
}

/// The suite schema file's text.
pub fn suite_schema_text() -> String {
    serde_json::to_string_pretty(&rlgraph_bench::suite::suite_schema()).unwrap_or_default()
}

/// The book's page of every config key (`docs/book/src/reference/config-keys.md`).
pub fn config_reference() -> String {
    let schema = executors::config_schema();
    let defs = &schema["$defs"];
    let mut page = String::from(
        "<!-- Generated from the config schema by rlgraph-cli's `config_reference`; do not edit.\n     \
         Regenerate: RLGRAPH_BLESS=1 cargo test -p rlgraph-cli --lib config_reference -->\n\n\
         # Every config key\n\n\
         The keys each agent type takes, and each component type's keys, as `rlgraph schema` \
         lists them (the same schema editors check configs against: see [Config keys](config.md)). \
         A `type` is matched as RLgraph matches it: case, `-` and `_` do not count.\n",
    );
    for rule in schema["allOf"].as_array().into_iter().flatten() {
        let Some(name) = rule.pointer("/then/$ref").and_then(Json::as_str) else {
            continue;
        };
        let family = &defs[name.trim_start_matches("#/$defs/")];
        let types = names_of(rule);
        page.push_str(&format!(
            "\n## {}\n\n`type`: {}\n\n{}",
            family["title"].as_str().unwrap_or(name),
            types,
            key_table(family, defs)
        ));
    }
    page.push_str(&nested_settings(defs));
    for (def, title) in [
        (
            "component",
            "Components: layers, preprocessors, losses, memories and utilities",
        ),
        ("optimizer", "Optimizers"),
    ] {
        page.push_str(&format!(
            "\n## {title}\n\n| `type` | keys besides `type` |\n| --- | --- |\n"
        ));
        // The typed spec's rules; a component may also be a list, the other branch.
        let typed = match defs[def]["anyOf"].as_array() {
            Some(branches) if defs[def].get("allOf").is_none() => branches
                .iter()
                .find(|b| b.get("allOf").is_some())
                .unwrap_or(&Json::Null),
            _ => &defs[def],
        };
        for rule in typed["allOf"].as_array().into_iter().flatten() {
            // The one rule that does not ask for a type is the spec without one.
            let types = match rule["if"].get("required") {
                None => "no `type`".to_string(),
                Some(_) => names_of(rule),
            };
            let selector = rule["if"]["required"]
                .as_array()
                .and_then(|r| r.get(1))
                .and_then(Json::as_str)
                .map(|key| format!(" with `{key}: true`"))
                .unwrap_or_default();
            let keys: Vec<String> = rule["then"]["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
                .filter(|k| *k != "type")
                .map(|k| format!("`{k}`"))
                .collect();
            page.push_str(&format!("| {types}{selector} | {} |\n", keys.join(", ")));
        }
    }
    page.push_str(&suite_keys());
    for (def, title) in [
        ("schedule", "Schedules (as objects)"),
        ("action_adapter", "Action adapters"),
    ] {
        let object = match def {
            "schedule" => &defs[def]["anyOf"][2],
            _ => &defs[def]["anyOf"][0],
        };
        let keys: Vec<String> = object["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| format!("`{k}`"))
            .collect();
        page.push_str(&format!(
            "\n## {title}\n\n{}.\n\nKeys: {}.\n",
            defs[def]["description"].as_str().unwrap_or(""),
            keys.join(", ")
        ));
    }
    page
}

/// The type names a rule's `then` lists in its title, as the docs show them.
fn names_of(rule: &Json) -> String {
    let title = rule["then"]["title"].as_str().unwrap_or("");
    title
        .split(", ")
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The keys of a benchmark suite file and of its rows.
fn suite_keys() -> String {
    let schema = rlgraph_bench::suite::suite_schema();
    let defs = &schema["$defs"];
    let mut text = String::from(
        "\n## Benchmark suites\n\nA suite file (`configs/benchmarks/*.json`, checked against \
         `docs/suite.schema.json`; `rlgraph schema --suite` prints it).\n",
    );
    for (title, object) in [
        ("The suite", &schema),
        ("Each row of `rows`", &defs["Row"]),
        ("`published`", &defs["Published"]),
    ] {
        text.push_str(&format!("\n### {title}\n\n{}", key_table(object, defs)));
    }
    text
}

/// A table of `object`'s keys: each one's value and description (an agent type's own `type`
/// left out: its section names the types).
fn key_table(object: &Json, defs: &Json) -> String {
    let mut table = String::from("| key | value | what it is |\n| --- | --- | --- |\n");
    for (key, value) in object["properties"].as_object().into_iter().flatten() {
        if key != "type" || object.get("title").is_none() {
            table.push_str(&format!(
                "| `{key}` | {} | {} |\n",
                kind(value, defs),
                description(value)
            ));
        }
    }
    table
}

/// A section per nested settings object (`execution_spec`, `update_spec`, ...): its keys.
fn nested_settings(defs: &Json) -> String {
    // Which keys refer to each definition, to title its section by them.
    let mut users: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    fn collect(value: &Json, key: &str, users: &mut std::collections::BTreeMap<String, Vec<String>>) {
        match value {
            Json::Object(map) => {
                if let Some(r) = map.get("$ref").and_then(Json::as_str) {
                    let list = users.entry(r.trim_start_matches("#/$defs/").to_string()).or_default();
                    if !list.iter().any(|k| k == key) {
                        list.push(key.to_string());
                    }
                }
                for (k, v) in map {
                    let next = match k.as_str() {
                        "properties" | "anyOf" | "items" | "oneOf" | "then" => key.to_string(),
                        _ => k.clone(),
                    };
                    collect(v, &next, users);
                }
            }
            Json::Array(items) => items.iter().for_each(|v| collect(v, key, users)),
            _ => {}
        }
    }
    collect(defs, "", &mut users);
    let mut text = String::from("\n## Nested settings\n");
    for (name, def) in defs.as_object().into_iter().flatten() {
        if def["properties"].as_object().is_none_or(|p| p.is_empty()) {
            continue;
        }
        if def.get("title").is_some() || def.get("allOf").is_some() {
            continue; // an agent type, or a typed spec: listed in sections of their own
        }
        let keys: Vec<String> = users
            .get(name)
            .into_iter()
            .flatten()
            .map(|k| format!("`{k}`"))
            .collect();
        let shared = users.values().filter(|other| *other == &users[name]).count() > 1;
        let which = if shared { format!(" ({name})") } else { String::new() };
        text.push_str(&format!(
            "\n### {}{which}\n\n{}\n\n{}",
            keys.join(", "),
            description(def),
            key_table(def, defs)
        ));
    }
    text
}

/// A schema's description on one line, its rustdoc links as plain code.
fn description(schema: &Json) -> String {
    schema["description"]
        .as_str()
        .unwrap_or("")
        .replace('\n', " ")
        .replace("[`", "`")
        .replace("`]", "`")
}

/// A short description of a value's schema for the reference table.
fn kind(value: &Json, defs: &Json) -> String {
    if let Some(r) = value["$ref"].as_str() {
        let name = r.trim_start_matches("#/$defs/");
        let def = &defs[name];
        let consts: Option<Vec<String>> = match (def["enum"].as_array(), def["oneOf"].as_array()) {
            (Some(values), _) => Some(values.iter().map(|v| format!("`{v}`")).collect()),
            (None, Some(parts)) => parts.iter().map(|p| p.get("const").map(|c| format!("`{c}`"))).collect(),
            _ => None,
        };
        return match consts {
            Some(values) => values.join(" or "),
            None if def.get("properties").is_some() => "object (below)".into(),
            None => format!("{} (below)", name.replace('_', " ")),
        };
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(parts) = value[key].as_array() {
            let kinds: Vec<String> = parts.iter().map(|p| kind(p, defs)).filter(|k| k != "null").collect();
            return kinds.join(" or ");
        }
    }
    if let Some(c) = value.get("const") {
        return format!("`{c}`");
    }
    let mut text = match &value["type"] {
        Json::String(t) => t.clone(),
        Json::Array(ts) => ts
            .iter()
            .filter_map(Json::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".into(),
    };
    if let Some(items) = value.get("items") {
        text = format!("list of {}", kind(items, defs));
    }
    if let Some(min) = value.get("minimum") {
        text.push_str(&format!(" ≥ {min}"));
    }
    if let Some(min) = value.get("exclusiveMinimum") {
        text.push_str(&format!(" > {min}"));
    }
    if let Some(max) = value.get("maximum") {
        text.push_str(&format!(" ≤ {max}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use crate::program::tests::assert_current as current;

    /// The shipped schema files are what the config types make today.
    #[test]
    fn config_schema_files_are_current() {
        current(
            "../docs/config.schema.json",
            &(super::schema_text() + "\n"),
            "config_schema",
        );
        current(
            "../docs/suite.schema.json",
            &(super::suite_schema_text() + "\n"),
            "config_schema",
        );
    }

    /// The book's page of every key is what the schema says today.
    #[test]
    fn config_reference_page_is_current() {
        current(
            "../docs/book/src/reference/config-keys.md",
            &super::config_reference(),
            "config_reference",
        );
    }

    #[test]
    fn the_reference_names_each_agent_type_and_a_component_key() {
        let page = super::config_reference();
        for heading in [
            "## DQN or Ape-X agent",
            "## PPO agent",
            "## actor-critic agent",
            "## SAC agent",
            "## IMPALA agent",
            "## random agent",
        ] {
            assert!(page.contains(heading), "{heading} missing");
        }
        assert!(
            page.contains(
                "| `dense`, `denselayer` | `activation`, `activation_params`, `biases_spec`, `scope`, `units`, "
            ),
            "{page}"
        );
        assert!(page.contains("| `reshape` with `fold_time_rank: true` | `fold_time_rank`, `scope` |"));
        // A network without a type, and gradient descent without one.
        assert!(page.contains("| no `type` | `layers`, `num_inputs`, `scope` |"));
        assert!(page.contains("| no `type` | `clip_grad_norm`, `learning_rate`, `scope` |"));
    }
}
