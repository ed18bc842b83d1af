//! RLgraph's `weights_spec` / `biases_spec` spellings, as core initializers.

use serde_json::Value as Json;

use rlgraph_core::{CoreError, Initializer, Result};

/// Parses an initializer spec: a number (constant), an array (explicit values), a name
/// (`"zeros"`, `"glorot_uniform"` / `"xavier"`, `"truncated_normal"`, `"normal"`), or an
/// object `{"type": name, "mean": .., "stddev": ..}`; `None` gives `default`.
pub fn parse_initializer(spec: Option<&Json>, default: Initializer, at: &str) -> Result<Initializer> {
    let bad = |reason: String| CoreError::Config { at: at.into(), reason };
    let named = |name: &str, mean: f64, std: f64| -> Result<Initializer> {
        Ok(match crate::spec::normalize_type(name).as_str() {
            "zeros" | "zero" => Initializer::Zeros,
            "ones" => Initializer::Constant(1.0),
            "glorotuniform" | "xavier" | "xavieruniform" => Initializer::GlorotUniform,
            "truncatednormal" => Initializer::TruncatedNormal { mean, std },
            "normal" | "randomnormal" => Initializer::Normal { mean, std },
            other => return Err(bad(format!("unknown initializer {other:?}; known: zeros, ones, glorot_uniform, truncated_normal, normal, a number or an array"))),
        })
    };
    match spec {
        None | Some(Json::Null) => Ok(default),
        Some(Json::Number(n)) => n
            .as_f64()
            .map(Initializer::Constant)
            .ok_or_else(|| bad("not a finite number".into())),
        Some(Json::Array(_)) => {
            let mut flat = vec![];
            flatten(spec.unwrap_or(&Json::Null), &mut flat).map_err(bad)?;
            Ok(Initializer::Values(flat))
        }
        Some(Json::String(s)) => named(s, 0.0, 0.05),
        Some(Json::Object(o)) => {
            let get = |k: &str, d: f64| o.get(k).and_then(Json::as_f64).unwrap_or(d);
            let name = o
                .get("type")
                .and_then(Json::as_str)
                .ok_or_else(|| bad("an initializer object needs a \"type\"".into()))?;
            named(name, get("mean", 0.0), get("stddev", get("std", 0.05)))
        }
        Some(other) => Err(bad(format!("expected a number, array, name or object, got {other}"))),
    }
}

fn flatten(j: &Json, out: &mut Vec<f64>) -> std::result::Result<(), String> {
    match j {
        Json::Array(items) => items.iter().try_for_each(|i| flatten(i, out)),
        other => other
            .as_f64()
            .map(|x| out.push(x))
            .ok_or_else(|| format!("array initializer holds a non-number: {other}")),
    }
}
