//! RLgraph's `weights_spec` / `biases_spec` spellings, as core initializers.

use serde_json::Value as Json;

use rlgraph_core::{CoreError, FanMode, Initializer, Result, ScalingDistribution};

use crate::spec::normalize_type;

/// Parses an initializer spec: a number (constant), an array (explicit values), a name, or an
/// object `{"type": name, ..}` with the name's parameters; `None` gives `default`.
///
/// Names: `zeros`, `ones`, `glorot_uniform` / `xavier`, `truncated_normal` and `normal`
/// (`mean`, `stddev`), `random_uniform` (`minval`, `maxval`), `variance_scaling` (`scale`,
/// `mode`: fan_in / fan_out / fan_avg, `distribution`: uniform / truncated_normal /
/// untruncated_normal) and its Keras shorthands `lecun_uniform`, `lecun_normal`, `he_uniform`,
/// `he_normal`, `glorot_normal`. PyTorch's `nn.Linear` weights are
/// `{"type": "variance_scaling", "scale": 0.3333333, "mode": "fan_in", "distribution": "uniform"}`.
pub fn parse_initializer(spec: Option<&Json>, default: Initializer, at: &str) -> Result<Initializer> {
    let bad = |reason: String| CoreError::Config { at: at.into(), reason };
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
        // RLgraph's bare "truncated_normal" has stddev 1/sqrt(fan_in) (its `shape[0]`).
        Some(Json::String(s)) if normalize_type(s) == "truncatednormal" => Ok(fan_in_truncated_normal()),
        Some(Json::String(s)) => named(s, &serde_json::Map::new()).map_err(bad),
        Some(Json::Object(o)) => {
            let name = o
                .get("type")
                .and_then(Json::as_str)
                .ok_or_else(|| bad("an initializer object needs a \"type\"".into()))?;
            named(name, o).map_err(bad)
        }
        Some(other) => Err(bad(format!("expected a number, array, name or object, got {other}"))),
    }
}

/// RLgraph's bare `"truncated_normal"`: cut at two standard deviations of `1/sqrt(fan_in)`,
/// not widened. Keras widens its cut draws by `1/0.8796`, so its scale is that factor squared.
fn fan_in_truncated_normal() -> Initializer {
    Initializer::VarianceScaling {
        scale: 0.879_625_661_034_239_8_f64.powi(2),
        mode: FanMode::FanIn,
        distribution: ScalingDistribution::TruncatedNormal,
    }
}

/// The initializer `name` with its parameters from `o` (each with TensorFlow's default).
fn named(name: &str, o: &serde_json::Map<String, Json>) -> std::result::Result<Initializer, String> {
    let kind = normalize_type(name);
    let takes: &[&str] = match kind.as_str() {
        "truncatednormal" | "normal" | "randomnormal" => &["type", "mean", "stddev", "std"],
        "randomuniform" | "uniform" => &["type", "minval", "maxval"],
        "variancescaling" => &["type", "scale", "mode", "distribution"],
        _ => &["type"],
    };
    if let Some(key) = o.keys().find(|k| !takes.contains(&k.as_str())) {
        let offer = match &takes[1..] {
            [] => "it has no parameters".to_string(),
            keys => format!("it takes {}", keys.join(", ")),
        };
        return Err(format!("{name:?} takes no key {key:?}; {offer}"));
    }
    // A number under the first of `keys` present (the name the config used goes in messages),
    // else `default`; with `positive`, it must be above 0.
    let number = |keys: &[&str], default: f64, positive: bool| -> std::result::Result<f64, String> {
        match keys.iter().find_map(|k| o.get(*k).map(|v| (k, v))) {
            None => Ok(default),
            Some((k, v)) => match v.as_f64().filter(|x| x.is_finite()) {
                None => Err(format!("{k} must be a finite number, got {v}")),
                Some(x) if positive && x <= 0.0 => Err(format!("{k} must be above 0, got {x}")),
                Some(x) => Ok(x),
            },
        }
    };
    let word = |key: &str, default: &str| -> std::result::Result<String, String> {
        match o.get(key) {
            None => Ok(default.into()),
            Some(Json::String(s)) => Ok(s.clone()),
            Some(v) => Err(format!("{key} must be a name, got {v}")),
        }
    };
    let scaling = |scale: f64, mode: FanMode, distribution: ScalingDistribution| Initializer::VarianceScaling {
        scale,
        mode,
        distribution,
    };
    use ScalingDistribution::{TruncatedNormal, Uniform};
    Ok(match kind.as_str() {
        "zeros" | "zero" => Initializer::Zeros,
        "ones" => Initializer::Constant(1.0),
        "glorotuniform" | "xavier" | "xavieruniform" => Initializer::GlorotUniform,
        // As an object, Keras' TruncatedNormal and RandomNormal: stddev 0.05 unless given.
        "truncatednormal" => Initializer::TruncatedNormal {
            mean: number(&["mean"], 0.0, false)?,
            std: number(&["stddev", "std"], 0.05, true)?,
        },
        "normal" | "randomnormal" => Initializer::Normal {
            mean: number(&["mean"], 0.0, false)?,
            std: number(&["stddev", "std"], 0.05, true)?,
        },
        "randomuniform" | "uniform" => {
            let (low, high) = (number(&["minval"], -0.05, false)?, number(&["maxval"], 0.05, false)?);
            if low >= high {
                return Err(format!("minval ({low}) must be below maxval ({high})"));
            }
            Initializer::Uniform { low, high }
        }
        "variancescaling" => {
            let mode_name = word("mode", "fan_in")?;
            let mode = match normalize_type(&mode_name).as_str() {
                "fanin" => FanMode::FanIn,
                "fanout" => FanMode::FanOut,
                "fanavg" => FanMode::FanAvg,
                _ => return Err(format!("unknown mode {mode_name:?}; known: fan_in, fan_out, fan_avg")),
            };
            let distribution_name = word("distribution", "truncated_normal")?;
            let distribution = match normalize_type(&distribution_name).as_str() {
                "uniform" => Uniform,
                "truncatednormal" | "normal" => TruncatedNormal,
                "untruncatednormal" => ScalingDistribution::Normal,
                _ => {
                    return Err(format!(
                        "unknown distribution {distribution_name:?}; known: uniform, truncated_normal, untruncated_normal"
                    ))
                }
            };
            scaling(number(&["scale"], 1.0, true)?, mode, distribution)
        }
        "lecununiform" => scaling(1.0, FanMode::FanIn, Uniform),
        "lecunnormal" => scaling(1.0, FanMode::FanIn, TruncatedNormal),
        "heuniform" => scaling(2.0, FanMode::FanIn, Uniform),
        "henormal" => scaling(2.0, FanMode::FanIn, TruncatedNormal),
        "glorotnormal" | "xaviernormal" => scaling(1.0, FanMode::FanAvg, TruncatedNormal),
        _ => {
            return Err(format!(
                "unknown initializer {name:?}; known: zeros, ones, glorot_uniform, glorot_normal, truncated_normal, \
                 normal, random_uniform, variance_scaling, lecun_uniform, lecun_normal, he_uniform, he_normal, a number \
                 or an array"
            ))
        }
    })
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
