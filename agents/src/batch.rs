//! Stacking per-environment values into one batched value and back.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::spaces::{BoolBox, FloatBox};
use rlgraph_core::{CoreError, Result};

use crate::agent::Transition;

pub use rlgraph_core::batching::{stack, unstack};

/// The error for values that do not make one batch.
fn mismatch(what: String) -> CoreError {
    CoreError::Config {
        at: "batch".into(),
        reason: format!("values to stack differ: {what}"),
    }
}

/// The record space of replayed transitions: a Dict of `states`, `actions`, `rewards`,
/// `terminals` and `next_states`.
pub fn transition_space(state_space: &Space, action_space: &Space) -> Result<Space> {
    Ok(Space::dict([
        ("states", state_space.with_batch_rank(false)),
        ("actions", action_space.with_batch_rank(false)),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ("next_states", state_space.with_batch_rank(false)),
    ])?)
}

/// The inputs of an update graph that learns from batches of [`transition_space`] records:
/// each record field with a batch rank, and the scalar `time_percentage`.
pub(crate) fn update_input_spaces(state_space: &Space, action_space: &Space) -> BTreeMap<String, Space> {
    let batch = |s: &Space| s.with_batch_rank(true);
    BTreeMap::from([
        ("states".to_string(), batch(state_space)),
        ("next_states".to_string(), batch(state_space)),
        ("actions".to_string(), batch(action_space)),
        (
            "rewards".to_string(),
            batch(&Space::from(FloatBox::new(Vec::<usize>::new()))),
        ),
        (
            "terminals".to_string(),
            batch(&Space::from(BoolBox::new(Vec::<usize>::new()))),
        ),
        (
            "time_percentage".to_string(),
            Space::from(FloatBox::new(Vec::<usize>::new())),
        ),
    ])
}

/// Transitions as one batch of replay records (`states`, `actions`, `rewards`, `terminals`,
/// `next_states`).
pub fn transitions_batch(transitions: &[Transition]) -> Result<Value> {
    let n = transitions.len();
    let column = |f: fn(&Transition) -> &Value| stack(&transitions.iter().map(|t| f(t).clone()).collect::<Vec<_>>());
    Ok(Value::Dict(BTreeMap::from([
        ("states".to_string(), column(|t| &t.state)?),
        ("next_states".to_string(), column(|t| &t.next_state)?),
        ("actions".to_string(), column(|t| &t.action)?),
        (
            "rewards".to_string(),
            Value::Float32(Array::new([n], transitions.iter().map(|t| t.reward as f32).collect())?),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([n], transitions.iter().map(|t| t.terminated).collect())?),
        ),
    ])))
}

/// Entry `key` of a batch of records.
pub(crate) fn field(batch: &Value, key: &str) -> Result<Value> {
    field_ref(batch, key).cloned()
}

/// [`field`] without the copy.
pub(crate) fn field_ref<'a>(batch: &'a Value, key: &str) -> Result<&'a Value> {
    match batch {
        Value::Dict(d) => d.get(key),
        _ => None,
    }
    .ok_or_else(|| CoreError::Config {
        at: "replay-memory".into(),
        reason: format!("sampled records lack {key}"),
    })
}

/// The five inputs of a replayed batch, in the order the agents' update methods take them:
/// states, actions, rewards, terminals, next states.
pub(crate) fn transition_inputs(batch: &Value) -> Result<Vec<&Value>> {
    ["states", "actions", "rewards", "terminals", "next_states"]
        .iter()
        .map(|k| field_ref(batch, k))
        .collect()
}

/// The floats of a graph output (`at` names it in the error).
pub(crate) fn host_floats(v: Option<&Value>, at: &str) -> Result<Vec<f64>> {
    match v {
        Some(Value::Float32(a)) => Ok(a.data().iter().map(|&x| x as f64).collect()),
        Some(Value::Float64(a)) => Ok(a.data().to_vec()),
        other => Err(CoreError::Config {
            at: at.into(),
            reason: format!(
                "expected floats, got {}",
                other.map_or_else(|| "nothing".to_string(), Value::kind_name)
            ),
        }),
    }
}

/// The first float of a graph output (a loss), NaN when it is empty.
pub(crate) fn host_scalar(v: Option<&Value>, at: &str) -> Result<f64> {
    Ok(host_floats(v, at)?.first().copied().unwrap_or(f64::NAN))
}

/// A `[n]` float column.
pub(crate) fn float_column(values: &[f64]) -> Result<Value> {
    Ok(Value::Float32(Array::new(
        [values.len()],
        values.iter().map(|&v| v as f32).collect(),
    )?))
}

/// A `[n]` bool column.
pub(crate) fn flag_column(values: &[bool]) -> Result<Value> {
    Ok(Value::Bool(Array::new([values.len()], values.to_vec())?))
}

fn time_major_leaf<T: Clone>(a: &Array<T>, wrap: fn(Array<T>) -> Value) -> Result<Value> {
    let shape = a.shape();
    if shape.len() < 2 {
        return Err(mismatch(format!(
            "a rollout batch needs [batch, time, ...] values, got shape {shape:?}"
        )));
    }
    let (b, t) = (shape[0], shape[1]);
    let inner: usize = shape[2..].iter().product();
    let mut data = Vec::with_capacity(a.data().len());
    for ti in 0..t {
        for bi in 0..b {
            let start = (bi * t + ti) * inner;
            data.extend_from_slice(&a.data()[start..start + inner]);
        }
    }
    let mut out = vec![t * b];
    out.extend_from_slice(&shape[2..]);
    Ok(wrap(Array::new(out, data)?))
}

/// `[B, T, ...]` values (rollouts stacked batch-first) as `[T * B, ...]` in time-major order:
/// step `t` of rollout `b` lands at `t * B + b`.
pub(crate) fn time_major(value: &Value) -> Result<Value> {
    Ok(match value {
        Value::Dict(d) => Value::Dict(
            d.iter()
                .map(|(k, v)| Ok((k.clone(), time_major(v)?)))
                .collect::<Result<_>>()?,
        ),
        Value::Tuple(t) => Value::Tuple(t.iter().map(time_major).collect::<Result<_>>()?),
        Value::Bool(a) => time_major_leaf(a, Value::Bool)?,
        Value::Int32(a) => time_major_leaf(a, Value::Int32)?,
        Value::Int64(a) => time_major_leaf(a, Value::Int64)?,
        Value::Uint8(a) => time_major_leaf(a, Value::Uint8)?,
        Value::Float32(a) => time_major_leaf(a, Value::Float32)?,
        Value::Float64(a) => time_major_leaf(a, Value::Float64)?,
        Value::Text(a) => time_major_leaf(a, Value::Text)?,
    })
}
