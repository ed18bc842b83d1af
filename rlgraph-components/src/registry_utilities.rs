//! The registry's entries for RLgraph's combining, utility and distribution components:
//! concat, residual, embedding lookup, local response normalization, softmax, slice,
//! container splitter and merger, synchronizable, preprocessor stack, and the distributions
//! on their own.

use serde_json::Value as Json;

use rlgraph_core::{Backend, Component, CoreError, Initializer, Result};

use crate::activation::Activation;
use crate::common::{container_merger, container_splitter, slice, softmax};
use crate::distributions::{distribution, Kind};
use crate::initializer_spec::parse_initializer;
use crate::layers::{concat, embedding, local_response_norm, residual_activated, LrnSpec};
use crate::network::neural_network;
use crate::preprocessors::preprocessor_stack;
use crate::spec::{normalize_type, Spec};
use crate::spec_keys;
use crate::synchronizable::synchronizable;

/// The types this module builds from their specs, as RLgraph spells them.
pub const UTILITY_TYPES: &[&str] = &[
    "concat",
    "residual",
    "embedding-lookup",
    "local-response-normalization",
    "softmax",
    "slice",
    "container-splitter",
    "container-merger",
    "synchronizable",
    "preprocessor-stack",
    "categorical",
    "bernoulli",
    "normal",
    "beta",
    "squashed-normal",
    "gumbel-softmax",
];

/// Builds the components of a layer list, uniquely named.
pub(crate) type LayersBuilder<B> = fn(&[Json], &str) -> Result<Vec<Component<B>>>;

/// How a utility builds the components it holds (one from a spec, or a layer list), handed
/// in by the registry that builds the utility, which itself builds them.
pub(crate) struct Nested<B: Backend> {
    /// One component from its spec and place.
    pub(crate) one: fn(&Json, &str) -> Result<Component<B>>,
    /// A layer list's components, uniquely named.
    pub(crate) many: LayersBuilder<B>,
}

/// Builds one of [`UTILITY_TYPES`] from its spec, or `None` if `kind` is none of them.
pub(crate) fn utility_from_spec<B: Backend>(
    kind: &str,
    spec: &Json,
    at: &str,
    nested: Nested<B>,
) -> Option<Result<Component<B>>> {
    build::<B>(&normalize_type(kind), spec, at, nested).transpose()
}

fn build<B: Backend>(kind: &str, spec: &Json, at: &str, nested: Nested<B>) -> Result<Option<Component<B>>> {
    let s = Spec::new(spec, at)?;
    let scope = |default: &'static str| s.str_or("scope", default);
    let bad = |key: &str, reason: String| CoreError::Config { at: s.at(key), reason };
    if let Some(make) = distribution_kind(kind) {
        return Ok(Some(distribution(scope("distribution")?, make(&s)?)));
    }
    Ok(Some(match kind {
        "concat" | "concatlayer" => {
            s.only(spec_keys::CONCAT.keys)?;
            // RLgraph's default axis; the only one the layer's shape inference covers here.
            if !matches!(s.get("axis"), None | Some(Json::Null)) && s.get("axis").and_then(Json::as_i64) != Some(-1) {
                return Err(bad(
                    "axis",
                    "only -1 (the last dimension, RLgraph's default) is supported".into(),
                ));
            }
            concat(scope("concat-layer")?, s.usize_or("num_inputs", 2)?.max(1))
        }
        "residual" | "residuallayer" => {
            s.only(spec_keys::RESIDUAL.keys)?;
            let unit = s
                .get("residual_unit")
                .ok_or_else(|| bad("residual_unit", "missing; the layer (or layers) to repeat".into()))?;
            let repeats = s.positive_or("repeats", 2)?;
            let activation = Activation::parse(
                s.get("activation").and_then(Json::as_str),
                s.get("activation_params"),
                &s.at("activation"),
            )?;
            if activation.width_factor() != 1 {
                return Err(bad("activation", "must keep the shape (crelu doubles it)".into()));
            }
            // RLgraph copies the unit `repeats` times, each with its own variables.
            let copies: Vec<Json> = std::iter::repeat_n(unit.clone(), repeats).collect();
            let units = (nested.many)(&copies, &s.at("residual_unit"))?;
            residual_activated(
                scope("residual-layer")?,
                neural_network("residual-units", units),
                activation,
            )
        }
        "embedding" | "embeddinglookup" | "embeddinglookuplayer" => {
            s.only(spec_keys::EMBEDDING.keys)?;
            let vocab = s.positive("vocab_size")?;
            let dim = s.positive("embed_dim")?;
            // Partitioning only matters to TensorFlow's sharded variables.
            if !matches!(s.str_or("partition_strategy", "mod")?, "mod" | "div") {
                return Err(bad("partition_strategy", "expected \"mod\" or \"div\"".into()));
            }
            if !s.bool_or("trainable", true)? {
                return Err(bad(
                    "trainable",
                    "a frozen embedding is not supported; omit it or use true".into(),
                ));
            }
            if s.bool_or("pad_empty", false)? {
                return Err(bad(
                    "pad_empty",
                    "empty lookups never happen here; omit it or use false".into(),
                ));
            }
            // RLgraph's default: a truncated normal of stddev 1/sqrt(vocab_size).
            let default = Initializer::TruncatedNormal {
                mean: 0.0,
                std: 1.0 / (vocab as f64).sqrt(),
            };
            let init = parse_initializer(s.get("initializer_spec"), default, &s.at("initializer_spec"))?;
            embedding(scope("embedding-lookup")?, vocab, dim, init)
        }
        "localresponsenormalization" | "localresponsenormalizationlayer" => {
            s.only(spec_keys::LOCAL_RESPONSE_NORMALIZATION.keys)?;
            let d = LrnSpec::default();
            let spec = LrnSpec {
                depth_radius: s.usize_or("depth_radius", d.depth_radius)?,
                bias: s.f64_or("bias", d.bias)?,
                alpha: s.f64_or("alpha", d.alpha)?,
                beta: s.f64_or("beta", d.beta)?,
            };
            if !(spec.bias > 0.0 && spec.alpha >= 0.0 && spec.bias.is_finite() && spec.alpha.is_finite()) {
                return Err(bad(
                    "bias",
                    "bias must be above 0 and alpha at least 0, so the base stays positive".into(),
                ));
            }
            local_response_norm(scope("local-response-normalization")?, spec)
        }
        "softmax" => {
            s.only(spec_keys::SOFTMAX.keys)?;
            softmax(scope("softmax")?)
        }
        "slice" => {
            s.only(spec_keys::SLICE.keys)?;
            if s.bool_or("squeeze", false)? {
                return Err(bad(
                    "squeeze",
                    "squeezing a one-row slice is not supported; omit it or use false".into(),
                ));
            }
            slice(scope("slice")?)
        }
        "containersplitter" => {
            s.only(spec_keys::CONTAINER_SPLITTER.keys)?;
            let key = key_or_args(&s, "output_order");
            container_splitter(scope("container-splitter")?, names(&s, key)?)
        }
        "containermerger" => {
            s.only(spec_keys::CONTAINER_MERGER.keys)?;
            let key = key_or_args(&s, "input_names");
            container_merger(scope("container-merger")?, names(&s, key)?)
        }
        "synchronizable" => {
            s.only(spec_keys::SYNCHRONIZABLE.keys)?;
            let tau = s.f64_or("sync_tau", 1.0)?;
            if !(tau > 0.0 && tau <= 1.0) {
                return Err(bad(
                    "sync_tau",
                    format!("must be in (0, 1] (1 is a hard copy), got {tau}"),
                ));
            }
            synchronizable(scope("synchronizable")?, tau)
        }
        "preprocessorstack" => {
            s.only(spec_keys::PREPROCESSOR_STACK.keys)?;
            let key = key_or_args(&s, "preprocessors");
            let list = s
                .get(key)
                .and_then(Json::as_array)
                .ok_or_else(|| bad(key, "expected a list of preprocessor specs".into()))?;
            let layers = list
                .iter()
                .enumerate()
                .map(|(i, p)| (nested.one)(p, &format!("{}[{i}]", s.at(key))))
                .collect::<Result<Vec<_>>>()?;
            preprocessor_stack(scope("preprocessor-stack")?, layers)
        }
        _ => return Ok(None),
    }))
}

/// `key` if the spec has it, else RLgraph's positional `_args`, which holds the same list.
fn key_or_args(s: &Spec<'_>, key: &'static str) -> &'static str {
    if s.get(key).is_some() {
        key
    } else {
        "_args"
    }
}

/// A list of key names under `key` (RLgraph passes them as positional arguments, `_args`).
fn names(s: &Spec<'_>, key: &str) -> Result<Vec<String>> {
    let list = s.get(key).and_then(Json::as_array).filter(|l| !l.is_empty());
    list.and_then(|l| {
        l.iter()
            .map(|k| k.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
    })
    .ok_or_else(|| CoreError::Config {
        at: s.at(key),
        reason: "expected a non-empty list of key names (Dict keys; Tuple indices are not supported)".into(),
    })
}

type KindFromSpec = fn(&Spec<'_>) -> Result<Kind>;

/// The distribution a normalized type name stands for, with how to read its keys.
fn distribution_kind(kind: &str) -> Option<KindFromSpec> {
    let base = kind.strip_suffix("distribution").unwrap_or(kind);
    let make: KindFromSpec = match base {
        "categorical" => |s| {
            s.only(spec_keys::CATEGORICAL.keys)?;
            Ok(Kind::Categorical)
        },
        "bernoulli" => |s| {
            s.only(spec_keys::BERNOULLI.keys)?;
            Ok(Kind::Bernoulli)
        },
        "normal" => |s| {
            s.only(spec_keys::NORMAL.keys)?;
            Ok(Kind::Normal)
        },
        "beta" => |s| {
            s.only(spec_keys::BETA.keys)?;
            let (low, high) = bounds(s, 0.0, 1.0)?;
            Ok(Kind::Beta { low, high })
        },
        "squashednormal" => |s| {
            s.only(spec_keys::SQUASHED_NORMAL.keys)?;
            let (low, high) = bounds(s, -1.0, 1.0)?;
            Ok(Kind::SquashedNormal { low, high })
        },
        "gumbelsoftmax" => |s| {
            s.only(spec_keys::GUMBEL_SOFTMAX.keys)?;
            let temperature = s.positive_f64_or("temperature", 1.0)?;
            Ok(Kind::GumbelSoftmax { temperature })
        },
        _ => return None,
    };
    Some(make)
}

/// `low` and `high` (RLgraph's defaults given), finite and in order.
fn bounds(s: &Spec<'_>, low: f64, high: f64) -> Result<(f64, f64)> {
    let (low, high) = (s.f64_or("low", low)?, s.f64_or("high", high)?);
    if low.is_finite() && high.is_finite() && low < high {
        Ok((low, high))
    } else {
        Err(CoreError::Config {
            at: s.at("high"),
            reason: format!("low and high must be finite with low < high, got {low} and {high}"),
        })
    }
}
