//! The acting graph of a trained agent as ONNX nodes: its stateless preprocessing, its dense
//! network (with one LSTM step between dense layers, for a recurrent policy) and its action head (DQN's Q-values, plain or dueling; a Categorical's logits; a
//! Normal's or squashed Normal's mean), masked where the states carry an action mask.

use std::collections::BTreeMap;

use agents::{ActingHead, ActingPlan, Recurrence};
use backend_candle::Candle;
use rlgraph_components::action_mask::{has_mask, observation_space, MASKED_VALUE};
use rlgraph_components::policy::squashed_bounds;
use rlgraph_components::{layers_from_spec, Activation};
use rlgraph_core::spaces::{Dtype, Space};
use rlgraph_core::{Component, CoreError, HostTensor, Result};
use serde_json::Value as Json;

use crate::graph_builder::{batched, float_attr, int_attr, ints_attr, Elem, GraphBuilder};

/// The plan of the acting graph of the agent `config` describes, from its algorithm.
fn plan_of(config: &Json) -> Result<ActingPlan> {
    agents::acting_plan(config)?.ok_or_else(|| {
        let kind = config.get("type").unwrap_or(&Json::Null);
        unsupported("config.type", format!("agents of type {kind}"))
    })
}

fn unsupported(at: &str, what: String) -> CoreError {
    CoreError::Config {
        at: at.into(),
        reason: format!(
            "{what} cannot be exported to ONNX yet; the exporter writes agents whose algorithm offers an \
             acting plan ({} and those registered with agents::register_acting_plan) with dense networks \
             and stateless preprocessing",
            agents::types_offering::<Candle>(agents::Layout::Export).join(", ")
        ),
    }
}

/// The ONNX model (serialized `ModelProto`) of the acting graph of the agent `config`
/// describes, over `state_space` and `action_space`, with the trained `weights` (by scope
/// path, as `Agent::get_weights` gives them).
///
/// Inputs: `states` (the observation, batched; with an action mask, the observation part)
/// and, where the states carry one, `action_mask` (uint8, non-zero where valid). Outputs:
/// `actions` (the greedy actions: int64 for discrete actions, float32 for continuous ones)
/// and `q_values` (DQN) or `logits` (a Categorical policy) or `mean` (a Normal policy).
///
/// A recurrent policy (an LSTM in `network_spec`) also takes `memory_c` and `memory_h`
/// (float32 `[batch, units]`, zeros at an episode's start) and gives `memory_c_out` and
/// `memory_h_out`, to feed back in at the next step.
pub fn export_onnx(
    config: &Json,
    state_space: &Space,
    action_space: &Space,
    weights: &BTreeMap<String, HostTensor>,
) -> Result<Vec<u8>> {
    let plan = plan_of(config)?;
    if plan.action_adapter.as_ref().is_some_and(|a| !a.is_null()) {
        return Err(unsupported(
            "config.policy_spec.action_adapter_spec",
            "an action adapter spec".into(),
        ));
    }
    let states = state_space.with_batch_rank(false);
    let masked = has_mask(&states, &plan.mask_key);
    let observation = match masked {
        true => observation_space(&states, &plan.mask_key)?,
        false => states,
    };
    let elem = match (&observation, observation.dtype()) {
        (Space::Float(_), Some(Dtype::Float32)) => Elem::F32,
        (Space::Int(_), Some(Dtype::Uint8)) => Elem::U8,
        (other, _) => return Err(unsupported("states", format!("an observation of {}", other.describe()))),
    };
    let item = observation.shape().unwrap_or(&[]).to_vec();
    let policy = policy_prefix(weights)?;
    let mut g = GraphBuilder::default();
    let mut x = "states".to_string();
    if elem != Elem::F32 {
        x = g.op("Cast", &[&x], vec![int_attr("to", Elem::F32 as i64)]);
    }
    let (mut rank, mut integer) = (item.len(), elem != Elem::F32);
    for (i, spec) in plan.preprocessing.iter().enumerate() {
        (x, rank, integer) = preprocessor(&mut g, &x, (rank, integer), spec, i)?;
    }
    let mut memory_item = None;
    let layers = layers_from_spec::<Candle>(&plan.network, "config.network_spec")?;
    let network: Vec<(usize, &Json, &Component<Candle>)> = plan
        .network
        .iter()
        .zip(&layers)
        .enumerate()
        .map(|(i, (s, l))| (i, s, l))
        .collect();
    let stack = format!("{policy}neural-network/");
    match &plan.recurrence {
        None => x = dense_stack(&mut g, weights, (x, rank), &network, &stack)?,
        Some(r) => {
            // The networks' scope: the policy's parent (`ppo-agent/networks/`).
            let networks = policy.strip_suffix("policy/").unwrap_or(&policy).to_string();
            let (pre, post) = (&network[..r.index], &network[r.index + 1..]);
            x = dense_stack(&mut g, weights, (x, rank), pre, &format!("{networks}encoder/"))?;
            let (h, c) = lstm_cell(&mut g, weights, &x, &format!("{networks}lstm"), r)?;
            g.rename(&c, "memory_c_out");
            g.rename(&h, "memory_h_out");
            memory_item = Some(r.units);
            x = dense_stack(&mut g, weights, (h, 1), post, &stack)?;
        }
    }
    let mask = masked.then(|| "action_mask".to_string());
    let (actions, action_elem, extra_name, extra, extra_item) =
        head(&mut g, weights, &plan, &policy, &x, action_space, mask.as_deref())?;
    g.rename(&actions, "actions");
    g.rename(&extra, extra_name);
    let action_item = action_space.shape().unwrap_or(&[]).to_vec();
    let mut inputs = vec![batched("states", elem, &item)];
    if let Some(n) = action_space.num_categories().filter(|_| masked) {
        inputs.push(batched("action_mask", Elem::U8, &[n as usize]));
    }
    let mut outputs = vec![
        batched("actions", action_elem, &action_item),
        batched(extra_name, Elem::F32, &extra_item),
    ];
    if let Some(units) = memory_item {
        for name in ["memory_c", "memory_h"] {
            inputs.push(batched(name, Elem::F32, &[units]));
            outputs.push(batched(&format!("{name}_out"), Elem::F32, &[units]));
        }
    }
    let metadata = vec![
        ("rlgraph.config".to_string(), config.to_string()),
        (
            "rlgraph.state_space".to_string(),
            state_space.with_batch_rank(false).describe(),
        ),
        ("rlgraph.action_space".to_string(), action_space.describe()),
    ];
    let model = g.finish("acting_graph", inputs, outputs, metadata);
    Ok(prost::Message::encode_to_vec(&model))
}

/// `x` (of item rank `rank`) through `layers` (each with its place in `config.network_spec`,
/// its spec and its component), whose variables are under `scope` + each layer's name.
fn dense_stack(
    g: &mut GraphBuilder,
    weights: &BTreeMap<String, HostTensor>,
    (mut x, rank): (String, usize),
    layers: &[(usize, &Json, &Component<Candle>)],
    scope: &str,
) -> Result<String> {
    for &(i, spec, layer) in layers {
        let at = format!("config.network_spec[{i}]");
        if layer.kind() != "dense" {
            return Err(unsupported(&at, format!("a {:?} layer", layer.kind())));
        }
        if rank != 1 {
            return Err(unsupported(
                &at,
                format!("a dense layer on items of rank {rank} (flatten them first)"),
            ));
        }
        x = dense(g, weights, &x, &format!("{scope}{}", layer.name()))?;
        let activation = Activation::parse(
            spec.get("activation").and_then(Json::as_str),
            spec.get("activation_params"),
            &format!("{at}.activation"),
        )?;
        x = activate(g, &x, activation, &at)?;
    }
    Ok(x)
}

/// One step of the agent's LSTM (TensorFlow's gate order i, j, f, o and forget bias, as
/// `rlgraph_components::layers::lstm_unroll` computes it) on `x` from the graph inputs
/// `memory_c` and `memory_h`, with the variables under `scope`. Returns the new `(h, c)`.
fn lstm_cell(
    g: &mut GraphBuilder,
    weights: &BTreeMap<String, HostTensor>,
    x: &str,
    scope: &str,
    r: &Recurrence,
) -> Result<(String, String)> {
    let joined = g.op("Concat", &[x, "memory_h"], vec![int_attr("axis", 1)]);
    let z = dense(g, weights, &joined, scope)?;
    let axes = g.constant_i64("axes", vec![1]);
    let mut gate = |k: usize| {
        let start = g.constant_i64("starts", vec![(k * r.units) as i64]);
        let end = g.constant_i64("ends", vec![((k + 1) * r.units) as i64]);
        g.op("Slice", &[&z, &start, &end, &axes], vec![])
    };
    let (i, j, f, o) = (gate(0), gate(1), gate(2), gate(3));
    let bias = g.constant("forget_bias", &[], vec![r.forget_bias as f32]);
    let f = g.op("Add", &[&f, &bias], vec![]);
    let f = g.op("Sigmoid", &[&f], vec![]);
    let kept = g.op("Mul", &[&f, "memory_c"], vec![]);
    let i = g.op("Sigmoid", &[&i], vec![]);
    let j = g.op("Tanh", &[&j], vec![]);
    let written = g.op("Mul", &[&i, &j], vec![]);
    let c = g.op("Add", &[&kept, &written], vec![]);
    let o = g.op("Sigmoid", &[&o], vec![]);
    let squashed = g.op("Tanh", &[&c], vec![]);
    let h = g.op("Mul", &[&o, &squashed], vec![]);
    Ok((h, c))
}

/// The scope of the acting policy's variables (`dqn-agent/policy/`, `ppo-agent/networks/policy/`):
/// where its action adapter's kernel is, the target network's aside.
fn policy_prefix(weights: &BTreeMap<String, HostTensor>) -> Result<String> {
    weights
        .keys()
        .filter(|k| !k.contains("target"))
        .find_map(|k| {
            k.strip_suffix("action-adapter/kernel")
                .filter(|p| p.ends_with("policy/"))
        })
        .map(str::to_string)
        .ok_or_else(|| CoreError::Config {
            at: "weights".into(),
            reason: "no policy action adapter (`.../policy/action-adapter/kernel`) among the weights".into(),
        })
}

/// `x` through the preprocessor `spec` (the `i`-th): the stateless ones that are one or two
/// ONNX nodes. `(rank, integer)`: the item rank, and whether the agent still sees integers
/// there (the graph computes in f32 from the start). Returns the output and both again.
fn preprocessor(
    g: &mut GraphBuilder,
    x: &str,
    (rank, integer): (usize, bool),
    spec: &Json,
    i: usize,
) -> Result<(String, usize, bool)> {
    let at = format!("config.preprocessing_spec[{i}]");
    let kind = agents::preprocessor_kind(spec);
    let number = |key: &str, default: f64| spec.get(key).and_then(Json::as_f64).unwrap_or(default);
    Ok(match kind.as_str() {
        // Both turn integers into floats first.
        "divide" => {
            let c = g.constant("divisor", &[], vec![number("divisor", 1.0) as f32]);
            (g.op("Div", &[x, &c], vec![]), rank, false)
        }
        "multiply" => {
            let c = g.constant("factor", &[], vec![number("factor", 1.0) as f32]);
            (g.op("Mul", &[x, &c], vec![]), rank, false)
        }
        "clip" => {
            let low = g.constant("min", &[], vec![number("min", f64::NEG_INFINITY) as f32]);
            let high = g.constant("max", &[], vec![number("max", f64::INFINITY) as f32]);
            (g.op("Clip", &[x, &low, &high], vec![]), rank, integer)
        }
        // The graph computes in float32 already; converting to float changes nothing.
        "converttype"
            if spec
                .get("to_dtype")
                .and_then(Json::as_str)
                .is_none_or(|d| d.starts_with("float")) =>
        {
            (x.to_string(), rank, false)
        }
        // Flattening floats, or integers kept as numbers; integers are otherwise one-hot
        // encoded by category (RLgraph's `flatten_categories`), which is not written here.
        "reshape" if spec.get("flatten").and_then(Json::as_bool) == Some(true) && flattens_plainly(spec, integer) => {
            (g.op("Flatten", &[x], vec![int_attr("axis", 1)]), 1, integer)
        }
        other => return Err(unsupported(&at, format!("the preprocessor {other:?}"))),
    })
}

/// Whether a flattening `reshape` keeps its input's numbers as they are: floats (unless asked
/// to one-hot them), or integers with `flatten_categories: false`.
fn flattens_plainly(spec: &Json, integer: bool) -> bool {
    match spec.get("flatten_categories") {
        Some(Json::Bool(false)) => true,
        None | Some(Json::Null) => !integer,
        Some(_) => false,
    }
}

/// `x W + b` with the variables under `scope` (the bias is optional).
fn dense(g: &mut GraphBuilder, weights: &BTreeMap<String, HostTensor>, x: &str, scope: &str) -> Result<String> {
    let kernel_path = format!("{scope}/kernel");
    let kernel = weights.get(&kernel_path).ok_or_else(|| CoreError::Config {
        at: kernel_path.clone(),
        reason: "this variable is missing from the weights".into(),
    })?;
    let w = g.weight(&kernel_path, kernel)?;
    Ok(match weights.get(&format!("{scope}/bias")) {
        Some(bias) => {
            let b = g.weight(&format!("{scope}/bias"), bias)?;
            g.op("Gemm", &[x, &w, &b], vec![])
        }
        None => g.op("MatMul", &[x, &w], vec![]),
    })
}

/// `x` through `activation`, as RLgraph defines each.
fn activate(g: &mut GraphBuilder, x: &str, activation: Activation, at: &str) -> Result<String> {
    Ok(match activation {
        Activation::Linear => x.to_string(),
        Activation::Relu => g.op("Relu", &[x], vec![]),
        Activation::Tanh => g.op("Tanh", &[x], vec![]),
        Activation::Sigmoid => g.op("Sigmoid", &[x], vec![]),
        Activation::Elu => g.op("Elu", &[x], vec![float_attr("alpha", 1.0)]),
        Activation::Selu => g.op("Selu", &[x], vec![]),
        Activation::Softplus => g.op("Softplus", &[x], vec![]),
        Activation::Softsign => g.op("Softsign", &[x], vec![]),
        Activation::Softmax => g.op("Softmax", &[x], vec![int_attr("axis", -1)]),
        Activation::LRelu(alpha) => g.op("LeakyRelu", &[x], vec![float_attr("alpha", alpha as f32)]),
        Activation::Swish => {
            let s = g.op("Sigmoid", &[x], vec![]);
            g.op("Mul", &[x, &s], vec![])
        }
        Activation::CRelu => return Err(unsupported(&format!("{at}.activation"), "crelu".into())),
    })
}

/// The action head on the network's output `h`: (actions, their element type, the second
/// output's name, its value, its item shape).
fn head(
    g: &mut GraphBuilder,
    weights: &BTreeMap<String, HostTensor>,
    plan: &ActingPlan,
    policy: &str,
    h: &str,
    action_space: &Space,
    mask: Option<&str>,
) -> Result<(String, Elem, &'static str, String, Vec<usize>)> {
    let adapter = dense(g, weights, h, &format!("{policy}action-adapter"))?;
    match action_space {
        Space::Int(_) if action_space.shape().is_some_and(<[usize]>::is_empty) => {
            let n = action_space.num_categories().unwrap_or_default() as usize;
            let q_values = matches!(plan.head, ActingHead::QValues { .. });
            let mut scores = match plan.head {
                ActingHead::QValues { dueling: Some(_) } => {
                    // q = v + a - mean(a), with v from the state-value stream.
                    let stream = dense(g, weights, h, &format!("{policy}dense-layer-state-value-stream"))?;
                    let stream = g.op("Relu", &[&stream], vec![]);
                    let v = dense(g, weights, &stream, &format!("{policy}state-value-node"))?;
                    let mean = g.op(
                        "ReduceMean",
                        &[&adapter],
                        vec![ints_attr("axes", vec![1]), int_attr("keepdims", 1)],
                    );
                    let centred = g.op("Sub", &[&adapter, &mean], vec![]);
                    g.op("Add", &[&v, &centred], vec![])
                }
                _ => adapter,
            };
            if let Some(mask) = mask {
                let valid = g.op("Cast", &[mask], vec![int_attr("to", 9)]);
                let masked = g.constant("masked", &[], vec![MASKED_VALUE as f32]);
                scores = g.op("Where", &[&valid, &scores, &masked], vec![]);
            }
            let actions = g.op("ArgMax", &[&scores], vec![int_attr("axis", 1), int_attr("keepdims", 0)]);
            let name = if q_values { "q_values" } else { "logits" };
            Ok((actions, Elem::I64, name, scores, vec![n]))
        }
        Space::Float(_) if plan.head == ActingHead::Policy && mask.is_none() => {
            // The adapter's first half is the mean; the deterministic action is the mean,
            // squashed into the bounds where the policy squashes.
            let item = action_space.shape().unwrap_or(&[]).to_vec();
            let n: usize = item.iter().product();
            let starts = g.constant_i64("starts", vec![0]);
            let ends = g.constant_i64("ends", vec![n as i64]);
            let axes = g.constant_i64("axes", vec![1]);
            let mut shape = vec![-1i64];
            shape.extend(item.iter().map(|&d| d as i64));
            let shape = g.constant_i64("shape", shape);
            let flat_mean = g.op("Slice", &[&adapter, &starts, &ends, &axes], vec![]);
            let mean = g.op("Reshape", &[&flat_mean, &shape], vec![]);
            let actions = match squashed_bounds(action_space) {
                Some((low, high)) => {
                    let half = g.constant("half_range", &[], vec![((high - low) / 2.0) as f32]);
                    let centre = g.constant("centre", &[], vec![(low + (high - low) / 2.0) as f32]);
                    let t = g.op("Tanh", &[&mean], vec![]);
                    let scaled = g.op("Mul", &[&t, &half], vec![]);
                    g.op("Add", &[&scaled, &centre], vec![])
                }
                None => mean.clone(),
            };
            Ok((actions, Elem::F32, "mean", mean, item))
        }
        other => Err(unsupported("action_space", format!("actions of {}", other.describe()))),
    }
}
