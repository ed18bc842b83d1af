//! Stacking values into one batched value (a leading batch dimension) and back.

use rlgraph_spaces::{Array, Value};

use crate::error::{CoreError, Result};

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
