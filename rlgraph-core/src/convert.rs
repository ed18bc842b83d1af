//! Conversions between host values (`rlgraph_spaces::Value`), host tensors and backend trees.

use std::collections::BTreeMap;

use rlgraph_spaces::{Array, Dtype, Space, Value};

use crate::backend::{Backend, DType, Device, HostData, HostTensor};
use crate::error::{CoreError, Result};
use crate::tree::Tree;

fn unsupported(what: &str) -> CoreError {
    CoreError::Component {
        component: "(executor)".into(),
        method: None,
        reason: format!("{what} cannot become a tensor"),
    }
}

/// A value leaf as a host tensor: ints become I64, bools U8 (0/1).
pub fn value_to_host(value: &Value) -> Result<HostTensor> {
    let shape = value.shape().unwrap_or(&[]).to_vec();
    let data = match value {
        Value::Float32(a) => HostData::F32(a.data().to_vec()),
        Value::Float64(a) => HostData::F64(a.data().to_vec()),
        Value::Int32(a) => HostData::I64(a.data().iter().map(|&x| x as i64).collect()),
        Value::Int64(a) => HostData::I64(a.data().to_vec()),
        Value::Uint8(a) => HostData::U8(a.data().to_vec()),
        Value::Bool(a) => HostData::U8(a.data().iter().map(|&b| u8::from(b)).collect()),
        Value::Text(_) => return Err(unsupported("text")),
        Value::Dict(_) | Value::Tuple(_) => return Err(unsupported("a container leaf")),
    };
    HostTensor::new(shape, data)
}

/// [`value_to_host`] taking the value apart: float, i64 and byte data move into the host
/// tensor without a copy.
pub fn value_into_host(value: Value) -> Result<HostTensor> {
    fn moved<T>(a: Array<T>, data: fn(Vec<T>) -> HostData) -> Result<HostTensor> {
        let (shape, values) = a.into_parts();
        HostTensor::new(shape, data(values))
    }
    match value {
        Value::Float32(a) => moved(a, HostData::F32),
        Value::Float64(a) => moved(a, HostData::F64),
        Value::Int64(a) => moved(a, HostData::I64),
        Value::Uint8(a) => moved(a, HostData::U8),
        other => value_to_host(&other),
    }
}

/// A host tensor as a value leaf of `dtype` (the tensor's own dtype when `None`).
pub fn host_to_value(host: HostTensor, dtype: Option<Dtype>) -> Result<Value> {
    fn arr<T>(shape: &[usize], data: Vec<T>) -> Result<Array<T>> {
        Ok(Array::new(shape.to_vec(), data)?)
    }
    let shape = host.shape;
    let ints = |d: &HostData| -> Vec<i64> {
        match d {
            HostData::I64(v) => v.clone(),
            other => other.to_f64().iter().map(|&x| x as i64).collect(),
        }
    };
    Ok(match (dtype, host.data) {
        (Some(Dtype::Float32) | None, HostData::F32(d)) => Value::Float32(arr(&shape, d)?),
        (Some(Dtype::Float64) | None, HostData::F64(d)) => Value::Float64(arr(&shape, d)?),
        (Some(Dtype::Int64) | None, HostData::I64(d)) => Value::Int64(arr(&shape, d)?),
        (Some(Dtype::Uint8) | None, HostData::U8(d)) => Value::Uint8(arr(&shape, d)?),
        (Some(Dtype::Bool), d) => Value::Bool(arr(&shape, d.to_f64().iter().map(|&x| x != 0.0).collect())?),
        (Some(Dtype::Int32), d) => Value::Int32(arr(&shape, ints(&d).into_iter().map(|x| x as i32).collect())?),
        (Some(Dtype::Int64), d) => Value::Int64(arr(&shape, ints(&d))?),
        (Some(Dtype::Uint8), d) => Value::Uint8(arr(&shape, ints(&d).into_iter().map(|x| x as u8).collect())?),
        (Some(Dtype::Float64), d) => Value::Float64(arr(&shape, d.to_f64())?),
        (Some(Dtype::Float32), d) => Value::Float32(arr(&shape, d.to_f64().iter().map(|&x| x as f32).collect())?),
        (Some(Dtype::Text), _) => return Err(unsupported("text")),
    })
}

/// The tensor dtype a space's leaves use.
pub fn dtype_of(space: &Space) -> DType {
    match space.dtype() {
        Some(Dtype::Float64) => DType::F64,
        Some(Dtype::Int32 | Dtype::Int64) => DType::I64,
        Some(Dtype::Uint8 | Dtype::Bool) => DType::U8,
        _ => DType::F32,
    }
}

/// A value uploaded to `device` as a tree of tensors.
pub fn value_to_tree<B: Backend>(value: &Value, device: Device) -> Result<Tree<B::Tensor>> {
    Ok(match value {
        Value::Dict(d) => Tree::Dict(
            d.iter()
                .map(|(k, v)| Ok((k.clone(), value_to_tree::<B>(v, device)?)))
                .collect::<Result<_>>()?,
        ),
        Value::Tuple(t) => Tree::Tuple(t.iter().map(|v| value_to_tree::<B>(v, device)).collect::<Result<_>>()?),
        leaf => Tree::Leaf(B::from_host(&value_to_host(leaf)?, device)?),
    })
}

/// [`value_to_tree`] taking the value apart ([`value_into_host`]).
pub fn value_into_tree<B: Backend>(value: Value, device: Device) -> Result<Tree<B::Tensor>> {
    Ok(match value {
        Value::Dict(d) => Tree::Dict(
            d.into_iter()
                .map(|(k, v)| Ok((k, value_into_tree::<B>(v, device)?)))
                .collect::<Result<_>>()?,
        ),
        Value::Tuple(t) => Tree::Tuple(
            t.into_iter()
                .map(|v| value_into_tree::<B>(v, device))
                .collect::<Result<_>>()?,
        ),
        leaf => Tree::Leaf(B::from_host(&value_into_host(leaf)?, device)?),
    })
}

/// A tree of tensors downloaded as a value, with the dtypes `space` says.
pub fn tree_to_value<B: Backend>(tree: &Tree<B::Tensor>, space: Option<&Space>) -> Result<Value> {
    Ok(match (tree, space) {
        (Tree::Leaf(t), s) => host_to_value(B::to_host(t)?, s.and_then(Space::dtype))?,
        (Tree::Dict(d), Some(Space::Dict(s))) => Value::Dict(
            d.iter()
                .map(|(k, v)| Ok((k.clone(), tree_to_value::<B>(v, s.get(k))?)))
                .collect::<Result<BTreeMap<_, _>>>()?,
        ),
        (Tree::Tuple(t), Some(Space::Tuple(s))) => Value::Tuple(
            t.iter()
                .enumerate()
                .map(|(i, v)| tree_to_value::<B>(v, s.items().get(i)))
                .collect::<Result<_>>()?,
        ),
        (Tree::Dict(d), _) => Value::Dict(
            d.iter()
                .map(|(k, v)| Ok((k.clone(), tree_to_value::<B>(v, None)?)))
                .collect::<Result<BTreeMap<_, _>>>()?,
        ),
        (Tree::Tuple(t), _) => Value::Tuple(t.iter().map(|v| tree_to_value::<B>(v, None)).collect::<Result<_>>()?),
    })
}

/// A zero-filled tree for `space`, with every batch and time rank of length 1.
pub fn zeros_tree<B: Backend>(space: &Space, device: Device) -> Result<Tree<B::Tensor>> {
    Ok(match space {
        Space::Dict(d) => Tree::Dict(
            d.entries()
                .iter()
                .map(|(k, s)| Ok((k.clone(), zeros_tree::<B>(s, device)?)))
                .collect::<Result<_>>()?,
        ),
        Space::Tuple(t) => Tree::Tuple(
            t.items()
                .iter()
                .map(|s| zeros_tree::<B>(s, device))
                .collect::<Result<_>>()?,
        ),
        leaf => {
            let ranks = leaf.ranks().unwrap_or_default();
            let mut shape = vec![1; ranks.count()];
            shape.extend_from_slice(leaf.shape().unwrap_or(&[]));
            Tree::Leaf(B::full(&shape, 0.0, dtype_of(leaf), device)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moving a value's data gives the host tensor that copying it gives, for every leaf type,
    /// and text is refused both ways.
    #[test]
    fn taking_a_value_apart_gives_what_copying_it_gives() {
        let values = [
            Value::Float32(Array::new([2], vec![1.5, -0.25]).unwrap()),
            Value::Float64(Array::new([1, 2], vec![3.0, f64::MAX]).unwrap()),
            Value::Int32(Array::new([3], vec![-7, 0, 9]).unwrap()),
            Value::Int64(Array::new([2], vec![i64::MIN, 4]).unwrap()),
            Value::Uint8(Array::new([2, 2], vec![0, 255, 17, 3]).unwrap()),
            Value::Bool(Array::new([2], vec![true, false]).unwrap()),
        ];
        for v in values {
            let copied = value_to_host(&v).unwrap();
            assert_eq!(value_into_host(v.clone()).unwrap(), copied, "{}", v.kind_name());
            assert_eq!(copied.shape, v.shape().unwrap().to_vec());
        }
        let text = Value::Text(Array::new([1], vec!["a".to_string()]).unwrap());
        assert!(value_into_host(text.clone()).is_err() && value_to_host(&text).is_err());
    }
}
