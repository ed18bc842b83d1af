//! Building the components a network, a preprocessor stack or a utility holds from their
//! RLgraph JSON specs: layers, networks, preprocessors, utilities, losses, memories,
//! optimizers and exploration. Policies, which hold action adapters built from these, are
//! built one level up, in [`crate::registry`].

use serde_json::Value as Json;

use rlgraph_core::{Backend, Component, CoreError, Initializer, Result};

use rlgraph_core::spaces::Space;

use crate::activation::Activation;
use crate::exploration::{epsilon_exploration, gaussian_noise};
use crate::initializer_spec::parse_initializer;
use crate::layers::{
    conv2d, dense, fold_time_rank, lstm, max_pool2d, reshape_flattening, unfold_time_rank, Conv2dSpec, DenseSpec,
    FlattenCategories, LstmSpec, NewShape, Padding,
};
use crate::network::{neural_network, stack_with_inputs};
use crate::optimizer::{optimizer, OptimizerSpec};
use crate::preprocessors::preprocessor_from_spec;
use crate::spec::{normalize_type, Spec};
use crate::spec_keys;
use crate::time_dependent::TimeDependent;

/// The component types this registry builds, as RLgraph spells them.
pub const KNOWN_TYPES: &[&str] = &[
    "dense",
    "conv2d",
    "max-pool2d",
    "reshape",
    "lstm",
    "neural-network",
    "constant-decay",
    "linear-decay",
    "polynomial-decay",
    "exponential-decay",
    "policy",
    "dueling-policy",
    "shared-value-function-policy",
    "epsilon-exploration",
    "gaussian-noise",
    "clip",
    "convert-type",
    "divide",
    "multiply",
    "normalize",
    "round-to-uint8",
    "grayscale",
    "image-crop",
    "image-resize",
    "image-binary",
    "transpose",
    "moving-standardize",
    "sequence",
    "sgd",
    "adam",
    "rmsprop",
    "adagrad",
    "adadelta",
];

/// Builds a component other than a policy from its RLgraph spec (`{"type": "dense",
/// "units": 2}`); a JSON array is a neural network of the layers it lists. `at` names the
/// spec's place for messages; `action_space` is what action-related components need.
pub(crate) fn component_from_spec<B: Backend>(
    spec: &Json,
    at: &str,
    action_space: Option<&Space>,
) -> Result<Component<B>> {
    Ok(with_spec_kind(build_from_spec(spec, at, action_space)?, spec))
}

/// `built` marked with the spec's own name for its type: the user's word, and RLgraph's.
pub(crate) fn with_spec_kind<B: Backend>(built: Component<B>, spec: &Json) -> Component<B> {
    let kind = match spec {
        Json::Array(_) => Some("neural-network"),
        _ => spec
            .get("type")
            .and_then(Json::as_str)
            .or_else(|| spec.get("layers").map(|_| "neural-network")),
    };
    match kind {
        Some(kind) => built.with_kind(kind),
        _ => built,
    }
}

/// The builders a utility uses for the components it holds.
fn nested<B: Backend>() -> crate::registry_utilities::Nested<B> {
    crate::registry_utilities::Nested {
        one: |spec, at| component_from_spec::<B>(spec, at, None),
        many: layers_from_spec::<B>,
    }
}

pub(crate) fn build_from_spec<B: Backend>(spec: &Json, at: &str, action_space: Option<&Space>) -> Result<Component<B>> {
    if let Json::Array(layers) = spec {
        return network_from_layers(layers, "neural-network", at);
    }
    let s = Spec::new(spec, at)?;
    // RLgraph also writes a network as `{"layers": [...], "scope": ...}` with no type.
    let kind = s
        .get("type")
        .and_then(Json::as_str)
        .or_else(|| s.get("layers").map(|_| "neural-network"));
    let Some(kind) = kind else {
        return Err(CoreError::Config {
            at: format!("{at}.type"),
            reason: format!("missing; known types: {}", KNOWN_TYPES.join(", ")),
        });
    };
    if let Some(pre) = preprocessor_from_spec::<B>(kind, spec, at) {
        return pre;
    }
    if let Some(loss) = crate::losses::loss_from_spec::<B>(kind, spec, at) {
        return loss;
    }
    if let Some(built) = crate::registry_utilities::utility_from_spec::<B>(kind, spec, at, nested::<B>()) {
        return built;
    }
    if let Some(memory) = crate::memory_component::memory_from_spec::<B>(kind, spec, at) {
        return memory;
    }
    match normalize_type(kind).as_str() {
        "dense" | "denselayer" => {
            s.only(spec_keys::DENSE.keys)?;
            let (activation, use_bias, weights, biases) = layer_settings(&s)?;
            let spec = DenseSpec {
                units: s.positive("units")?,
                activation,
                use_bias,
                weights,
                biases,
            };
            Ok(dense(s.str_or("scope", "dense")?, spec))
        }
        "lstm" | "lstmlayer" => Ok(lstm(s.str_or("scope", "lstm")?, lstm_settings(&s)?)),
        "neuralnetwork" | "network" => {
            s.only(spec_keys::NEURAL_NETWORK.keys)?;
            let num_inputs = s.usize_or("num_inputs", 1)?;
            match s.get("layers") {
                Some(Json::Array(layers)) => {
                    let layers = layers_from_spec::<B>(layers, &s.at("layers"))?;
                    Ok(stack_with_inputs(
                        s.str_or("scope", "neural-network")?,
                        layers,
                        "call",
                        num_inputs,
                    ))
                }
                _ => Err(CoreError::Config {
                    at: s.at("layers"),
                    reason: "a neural network needs a list of layer specs".into(),
                }),
            }
        }
        "constantdecay" | "lineardecay" | "polynomialdecay" | "exponentialdecay" | "timedependentparameter" => {
            s.only(spec_keys::DECAY.keys)?;
            let mut copy = spec.clone();
            let scope = copy
                .as_object_mut()
                .and_then(|o| o.remove("scope"))
                .and_then(|v| v.as_str().map(String::from));
            Ok(TimeDependent::parse(&copy, at)?.component(scope.as_deref().unwrap_or("time-dependent-parameter")))
        }
        "conv2d" | "conv2dlayer" => {
            s.only(spec_keys::CONV2D.keys)?;
            let (activation, use_bias, weights, biases) = layer_settings(&s)?;
            let spec = Conv2dSpec {
                filters: s.positive("filters")?,
                kernel_size: s.positive("kernel_size")?,
                strides: s.positive_or("strides", 1)?,
                padding: Padding::parse(s.str_or("padding", "valid")?, &s.at("padding"))?,
                activation,
                use_bias,
                weights,
                biases,
            };
            Ok(conv2d(s.str_or("scope", "conv2d")?, spec))
        }
        "maxpool2d" | "maxpooling2d" | "maxpool2dlayer" => {
            s.only(spec_keys::MAX_POOL2D.keys)?;
            let pool = s.positive("pool_size")?;
            Ok(max_pool2d(
                s.str_or("scope", "max-pool2d")?,
                pool,
                s.positive_or("strides", pool)?,
                Padding::parse(s.str_or("padding", "valid")?, &s.at("padding"))?,
            ))
        }
        "reshape" => {
            if s.bool_or("fold_time_rank", false)? {
                s.only(spec_keys::RESHAPE_FOLD.keys)?;
                return Ok(fold_time_rank(s.str_or("scope", "fold-time-rank")?));
            }
            if s.bool_or("unfold_time_rank", false)? {
                s.only(spec_keys::RESHAPE_UNFOLD.keys)?;
                return Ok(unfold_time_rank(s.str_or("scope", "unfold-time-rank")?));
            }
            s.only(spec_keys::RESHAPE.keys)?;
            let flatten = s.bool_or("flatten", false)?;
            // RLgraph's default is true, and it only matters when flattening.
            let categories = match s.get("flatten_categories") {
                None | Some(Json::Null) if flatten => FlattenCategories::FromSpace,
                None | Some(Json::Null) | Some(Json::Bool(false)) => FlattenCategories::Off,
                Some(Json::Bool(true)) => FlattenCategories::FromSpace,
                Some(Json::Object(per_key)) => FlattenCategories::PerKey(per_key_values(
                    per_key,
                    &s.at("flatten_categories"),
                    |v| v.as_u64().map(|u| u as usize),
                    "a non-negative integer count of categories",
                )?),
                Some(_) => FlattenCategories::Exactly(s.usize("flatten_categories")?),
            };
            let new_shape = match s.get("new_shape") {
                None | Some(Json::Null) => None,
                Some(Json::Object(per_key)) => Some(NewShape::PerKey(per_key_values(
                    per_key,
                    &s.at("new_shape"),
                    dimensions,
                    "a list of non-negative integer dimensions",
                )?)),
                Some(v) => Some(NewShape::Shape(dimensions(v).ok_or_else(|| CoreError::Config {
                    at: s.at("new_shape"),
                    reason: "expected a list of non-negative integer dimensions, or one such list per flat key".into(),
                })?)),
            };
            let target = match (flatten, new_shape) {
                (true, Some(_)) => {
                    return Err(CoreError::Config {
                        at: s.at("new_shape"),
                        reason: "give either \"flatten\": true or a \"new_shape\", not both (as RLgraph asserts)"
                            .into(),
                    })
                }
                (true, None) => NewShape::Flatten,
                (false, Some(shape)) => shape,
                (false, None) => {
                    return Err(CoreError::Config {
                        at: at.into(),
                        reason: "reshape needs \"flatten\": true or a \"new_shape\"".into(),
                    })
                }
            };
            Ok(reshape_flattening(s.str_or("scope", "reshape")?, target, categories))
        }
        "policy" | "sharedvaluefunctionpolicy" | "duelingpolicy" => Err(CoreError::Config {
            at: format!("{at}.type"),
            reason: format!("a {kind} is a component of its own, not a layer of a network or utility"),
        }),
        "epsilonexploration" | "exploration" => {
            s.only(spec_keys::EPSILON_EXPLORATION.keys)?;
            let decay = match (s.get("epsilon_spec"), s.get("decay_spec")) {
                (Some(e), _) => e.get("decay_spec").ok_or_else(|| CoreError::Config {
                    at: s.at("epsilon_spec"),
                    reason: "needs a decay_spec".into(),
                })?,
                (None, Some(d)) => d,
                (None, None) => {
                    return Err(CoreError::Config {
                        at: s.at("decay_spec"),
                        reason: "missing; the epsilon schedule".into(),
                    })
                }
            };
            let schedule = TimeDependent::parse(decay, &s.at("decay_spec"))?.within(
                0.0,
                1.0,
                &s.at("decay_spec"),
                "epsilon is a probability, from 0 to 1",
            )?;
            let action_space = action_space.ok_or_else(|| CoreError::Config {
                at: at.into(),
                reason: "epsilon exploration needs an action_space of bounded IntBoxes".into(),
            })?;
            epsilon_exploration(s.str_or("scope", "exploration")?, schedule, action_space)
        }
        "gaussiannoise" => {
            s.only(spec_keys::GAUSSIAN_NOISE.keys)?;
            Ok(gaussian_noise(
                s.str_or("scope", "gaussian-noise")?,
                s.f64_or("mean", 0.0)?,
                s.f64_or("stddev", 1.0)?,
            ))
        }
        "sgd"
        | "adam"
        | "rmsprop"
        | "adagrad"
        | "sgdoptimizer"
        | "adamoptimizer"
        | "rmspropoptimizer"
        | "adagradoptimizer"
        | "adadelta"
        | "adadeltaoptimizer"
        | "gradientdescent"
        | "gradientdescentoptimizer" => Ok(optimizer(
            s.str_or("scope", "optimizer")?,
            OptimizerSpec::parse(spec, at)?,
        )),
        other => crate::component_table::custom_component::<B>(kind, spec, at).unwrap_or_else(|| {
            let registered = crate::component_table::registered_components();
            let registered = match registered.is_empty() {
                true => String::new(),
                false => format!("; registered: {}", registered.join(", ")),
            };
            Err(CoreError::Config {
                at: format!("{at}.type"),
                reason: format!(
                    "{} {kind:?} ({other}); known types: {}, {}, {}, {}{registered} (a type of your own: \
                     rlgraph_components::register_component)",
                    crate::component_table::UNKNOWN_TYPE,
                    KNOWN_TYPES.join(", "),
                    crate::registry_utilities::UTILITY_TYPES.join(", "),
                    crate::losses::LOSS_TYPES.join(", "),
                    crate::memory_component::MEMORY_TYPES.join(", ")
                ),
            })
        }),
    }
}

/// A list of non-negative integer dimensions, if `v` is one.
fn dimensions(v: &Json) -> Option<Vec<usize>> {
    v.as_array()?.iter().map(|d| d.as_u64().map(|u| u as usize)).collect()
}

/// A per-flat-key spec object (RLgraph's dict form) read by `value`; each key loses a leading
/// `/`, so `"a"` and `"/a"` both name the leaf at `/a`. An entry `value` cannot read is refused
/// at `at.key` as not being `what`.
fn per_key_values<T>(
    per_key: &serde_json::Map<String, Json>,
    at: &str,
    value: impl Fn(&Json) -> Option<T>,
    what: &str,
) -> Result<std::collections::BTreeMap<String, T>> {
    per_key
        .iter()
        .map(|(key, v)| {
            let read = value(v).ok_or_else(|| CoreError::Config {
                at: format!("{at}.{key}"),
                reason: format!("expected {what}, got {v}"),
            })?;
            Ok((key.strip_prefix('/').unwrap_or(key).to_string(), read))
        })
        .collect()
}

/// The settings dense and conv layers share: activation, bias use and both initializers.
/// `biases_spec: false` means no bias, as in RLgraph; conv layers also take RLgraph's
/// `kernel_spec` for the weights.
fn layer_settings(s: &Spec<'_>) -> Result<(Activation, bool, Initializer, Initializer)> {
    let weights_key = match (s.get("weights_spec"), s.get("kernel_spec")) {
        (Some(_), Some(_)) => {
            return Err(CoreError::Config {
                at: s.at("kernel_spec"),
                reason: "give the weights' initializer once: kernel_spec or weights_spec, not both".into(),
            })
        }
        (None, Some(_)) => "kernel_spec",
        _ => "weights_spec",
    };
    let biases = s.get("biases_spec");
    let no_bias = biases == Some(&Json::Bool(false));
    if no_bias && s.get("use_bias") == Some(&Json::Bool(true)) {
        return Err(CoreError::Config {
            at: s.at("biases_spec"),
            reason: "biases_spec false means no bias, but use_bias is true".into(),
        });
    }
    Ok((
        Activation::parse(
            s.get("activation").and_then(Json::as_str),
            s.get("activation_params"),
            &s.at("activation"),
        )?,
        s.bool_or("use_bias", true)? && !no_bias,
        parse_initializer(s.get(weights_key), Initializer::GlorotUniform, &s.at(weights_key))?,
        parse_initializer(biases.filter(|_| !no_bias), Initializer::Zeros, &s.at("biases_spec"))?,
    ))
}

fn network_from_layers<B: Backend>(layers: &[Json], name: &str, at: &str) -> Result<Component<B>> {
    Ok(neural_network(name, layers_from_spec(layers, at)?))
}

/// The layer specs of a network spec, which RLgraph writes as a list of layers or as
/// `{"layers": [...], "scope": ...}` (the scope is RLgraph's variable scope; names here come
/// from the component tree). `at` names the spec's place for messages.
pub fn network_layers<'a>(spec: &'a Json, at: &str) -> Result<&'a [Json]> {
    match spec {
        Json::Array(layers) => Ok(layers),
        Json::Object(o) => {
            Spec::new(spec, at)?.only(&["layers", "scope"])?;
            o.get("layers")
                .and_then(Json::as_array)
                .map(Vec::as_slice)
                .ok_or_else(|| CoreError::Config {
                    at: format!("{at}.layers"),
                    reason: "missing; a network spec object lists its layers under \"layers\"".into(),
                })
        }
        other => Err(CoreError::Config {
            at: at.into(),
            reason: format!("expected a list of layer specs or {{\"layers\": [...]}}, got {other}"),
        }),
    }
}

/// The settings of an `lstm` layer spec (RLgraph's `LSTMLayer` keys); `at` names the spec's
/// place for messages.
pub fn lstm_spec(spec: &Json, at: &str) -> Result<LstmSpec> {
    lstm_settings(&Spec::new(spec, at)?)
}

fn lstm_settings(s: &Spec<'_>) -> Result<LstmSpec> {
    s.only(spec_keys::LSTM.keys)?;
    for (key, ok) in [
        ("use_peepholes", !s.bool_or("use_peepholes", false)?),
        ("cell_clip", s.get("cell_clip").is_none_or(Json::is_null)),
        ("swap_inputs", !s.bool_or("swap_inputs", false)?),
    ] {
        if !ok {
            return Err(CoreError::Config {
                at: s.at(key),
                reason: "not yet supported".into(),
            });
        }
    }
    // static_loop and parallel_iterations steer TensorFlow's loop, not the result.
    Ok(LstmSpec {
        units: s.positive("units")?,
        forget_bias: s.f64_or("forget_bias", 1.0)?,
        return_sequences: s.bool_or("return_sequences", true)?,
        stateful_batch: s
            .get("stateful_batch_size")
            .map(|_| s.usize("stateful_batch_size"))
            .transpose()?,
        time_major: s
            .get("time_major")
            .map(|_| s.bool_or("time_major", false))
            .transpose()?,
    })
}

/// The components of a layer-spec list (RLgraph's `network_spec`), uniquely named.
pub fn layers_from_spec<B: Backend>(layers: &[Json], at: &str) -> Result<Vec<Component<B>>> {
    let mut built = Vec::with_capacity(layers.len());
    for (i, layer) in layers.iter().enumerate() {
        let mut c = component_from_spec::<B>(layer, &format!("{at}[{i}]"), None)?;
        // Layers without a scope get unique names, as RLgraph's auto-scoping does.
        if layer.get("scope").is_none() {
            c = c.copy_as(format!("{}-{i}", c.name()), true);
        }
        if built.iter().any(|b: &Component<B>| b.name() == c.name()) {
            return Err(CoreError::Config {
                at: format!("{at}[{i}].scope"),
                reason: format!("scope {:?} is used twice in one network", c.name()),
            });
        }
        built.push(c);
    }
    Ok(built)
}
