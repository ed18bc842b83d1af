//! Stacking per-environment values into one batched value and back.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::spaces::{BoolBox, FloatBox};
use rlgraph_core::{CoreError, Result};

use crate::agent::Transition;

fn stack_leaf<T: Clone>(arrays: &[&Array<T>], wrap: fn(Array<T>) -> Value) -> Result<Value> {
    let shape = arrays[0].shape().to_vec();
    let mut data = Vec::with_capacity(arrays.len() * arrays[0].data().len());
    for a in arrays {
        if a.shape() != shape.as_slice() {
            return Err(mismatch(format!("shapes {:?} and {:?}", shape, a.shape())));
        }
        data.extend_from_slice(a.data());
    }
    let mut full = vec![arrays.len()];
    full.extend(shape);
    Ok(wrap(Array::new(full, data)?))
}

fn mismatch(what: String) -> CoreError {
    CoreError::Config {
        at: "batch".into(),
        reason: format!("values to stack differ: {what}"),
    }
}

/// `[v_0, v_1, ...]` (equal structure and shapes) as one value with a leading batch dimension.
pub fn stack(values: &[Value]) -> Result<Value> {
    let first = values.first().ok_or_else(|| mismatch("nothing to stack".into()))?;
    macro_rules! leaf {
        ($variant:ident) => {{
            let arrays = values
                .iter()
                .map(|v| match v {
                    Value::$variant(a) => Ok(a),
                    other => Err(mismatch(format!("{} and {}", first.kind_name(), other.kind_name()))),
                })
                .collect::<Result<Vec<_>>>()?;
            stack_leaf(&arrays, Value::$variant)
        }};
    }
    match first {
        Value::Bool(_) => leaf!(Bool),
        Value::Int32(_) => leaf!(Int32),
        Value::Int64(_) => leaf!(Int64),
        Value::Uint8(_) => leaf!(Uint8),
        Value::Float32(_) => leaf!(Float32),
        Value::Float64(_) => leaf!(Float64),
        Value::Text(_) => leaf!(Text),
        Value::Dict(d) => {
            let mut out = std::collections::BTreeMap::new();
            for k in d.keys() {
                let parts = values
                    .iter()
                    .map(|v| match v {
                        Value::Dict(e) => e.get(k).cloned().ok_or_else(|| mismatch(format!("key {k} is missing"))),
                        other => Err(mismatch(format!("Dict and {}", other.kind_name()))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                out.insert(k.clone(), stack(&parts)?);
            }
            Ok(Value::Dict(out))
        }
        Value::Tuple(t) => {
            let mut out = vec![];
            for i in 0..t.len() {
                let parts = values
                    .iter()
                    .map(|v| match v {
                        Value::Tuple(e) => e
                            .get(i)
                            .cloned()
                            .ok_or_else(|| mismatch(format!("Tuple entry {i} is missing"))),
                        other => Err(mismatch(format!("Tuple and {}", other.kind_name()))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                out.push(stack(&parts)?);
            }
            Ok(Value::Tuple(out))
        }
    }
}

fn unstack_leaf<T: Clone>(a: &Array<T>, wrap: fn(Array<T>) -> Value) -> Result<Vec<Value>> {
    let n = a.shape().first().copied().unwrap_or(0);
    let inner = a.shape().get(1..).unwrap_or(&[]).to_vec();
    let width: usize = inner.iter().product();
    (0..n)
        .map(|i| {
            Ok(wrap(Array::new(
                inner.clone(),
                a.data()[i * width..(i + 1) * width].to_vec(),
            )?))
        })
        .collect()
}

/// The rows of a batched value (the inverse of `stack`).
pub fn unstack(value: &Value) -> Result<Vec<Value>> {
    match value {
        Value::Dict(d) => {
            let columns = d
                .iter()
                .map(|(k, v)| Ok((k.clone(), unstack(v)?)))
                .collect::<Result<Vec<_>>>()?;
            let n = columns.first().map_or(0, |(_, c)| c.len());
            if columns.iter().any(|(_, c)| c.len() != n) {
                return Err(mismatch("Dict entries with different batch sizes".into()));
            }
            Ok((0..n)
                .map(|i| Value::Dict(columns.iter().map(|(k, c)| (k.clone(), c[i].clone())).collect()))
                .collect())
        }
        Value::Tuple(t) => {
            let columns = t.iter().map(unstack).collect::<Result<Vec<_>>>()?;
            let n = columns.first().map_or(0, Vec::len);
            if columns.iter().any(|c| c.len() != n) {
                return Err(mismatch("Tuple entries with different batch sizes".into()));
            }
            Ok((0..n)
                .map(|i| Value::Tuple(columns.iter().map(|c| c[i].clone()).collect()))
                .collect())
        }
        Value::Bool(a) => unstack_leaf(a, Value::Bool),
        Value::Int32(a) => unstack_leaf(a, Value::Int32),
        Value::Int64(a) => unstack_leaf(a, Value::Int64),
        Value::Uint8(a) => unstack_leaf(a, Value::Uint8),
        Value::Float32(a) => unstack_leaf(a, Value::Float32),
        Value::Float64(a) => unstack_leaf(a, Value::Float64),
        Value::Text(a) => unstack_leaf(a, Value::Text),
    }
}

/// The record space of replayed transitions: a Dict of `states`, `actions`, `rewards`,
/// `terminals` and `next_states`.
pub(crate) fn transition_space(state_space: &Space, action_space: &Space) -> Result<Space> {
    Ok(Space::dict([
        ("states", state_space.with_batch_rank(false)),
        ("actions", action_space.with_batch_rank(false)),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ("next_states", state_space.with_batch_rank(false)),
    ])?)
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
    match batch {
        Value::Dict(d) => d.get(key).cloned(),
        _ => None,
    }
    .ok_or_else(|| CoreError::Config {
        at: "replay-memory".into(),
        reason: format!("sampled records lack {key}"),
    })
}

/// The five inputs of a replayed batch, in the order the agents' update methods take them:
/// states, actions, rewards, terminals, next states.
pub(crate) fn transition_inputs(batch: &Value) -> Result<Vec<Value>> {
    ["states", "actions", "rewards", "terminals", "next_states"]
        .iter()
        .map(|k| field(batch, k))
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
