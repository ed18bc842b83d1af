//! Values and weights on the wire: nested values as lists of raw little-endian tensors, read
//! back with every size checked before anything is allocated, and checked against the space
//! the receiver expects.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{HostData, HostTensor};

use super::error::DistributedError;
use super::proto::{Description, Dtype, LeafSpec, Nest, Tensor};

/// This wire's version, as `Describe` reports it.
pub const PROTOCOL_VERSION: u32 = 1;

/// What a role named `role` takes (`space`, if any) and its limits, for `Describe`.
pub fn describe(role: &str, space: Option<&Space>, max_message_bytes: usize, max_batch_size: usize) -> Description {
    let leaves = space.map_or_else(Vec::new, |space| {
        space
            .flatten()
            .into_iter()
            .map(|(key, leaf)| LeafSpec {
                key,
                dtype: leaf.dtype().map_or(Dtype::Unspecified, wire_dtype) as i32,
                shape: leaf.shape().unwrap_or(&[]).iter().map(|&d| d as u64).collect(),
            })
            .collect()
    });
    Description {
        protocol_version: PROTOCOL_VERSION,
        role: role.to_string(),
        space_json: space.map(|s| s.to_json().to_string()).unwrap_or_default(),
        leaves,
        max_message_bytes: max_message_bytes as u64,
        max_batch_size: u32::try_from(max_batch_size).unwrap_or(u32::MAX),
    }
}

/// The wire's name for a space's element type (text has none).
fn wire_dtype(dtype: rlgraph_core::spaces::Dtype) -> Dtype {
    use rlgraph_core::spaces::Dtype as D;
    match dtype {
        D::Bool => Dtype::Bool,
        D::Int32 => Dtype::Int32,
        D::Int64 => Dtype::Int64,
        D::Uint8 => Dtype::Uint8,
        D::Float32 => Dtype::Float32,
        D::Float64 => Dtype::Float64,
        D::Text => Dtype::Unspecified,
    }
}

/// Splits a nest whose leaves all hold `rows` rows into `parts` nests of `rows / parts` rows
/// each, in order (a reply of several sampled batches into its batches); a leaf with another
/// number of rows, or rows that do not split evenly, is refused by key.
pub fn split_rows(nest: Nest, parts: usize, rows: u64) -> Result<Vec<Nest>, DistributedError> {
    let parts = parts.max(1);
    let mut out = vec![Nest { leaves: vec![] }; parts];
    for leaf in nest.leaves {
        let bad = |reason: String| DistributedError::wire(&leaf.key, reason);
        let held = *leaf
            .shape
            .first()
            .ok_or_else(|| bad("a scalar has no rows to split".into()))?;
        if held != rows {
            return Err(bad(format!("{held} rows, expected {rows}")));
        }
        if !rows.is_multiple_of(parts as u64) || !leaf.data.len().is_multiple_of(parts) {
            return Err(bad(format!(
                "{rows} rows ({} bytes) do not split into {parts} equal batches",
                leaf.data.len()
            )));
        }
        let chunk = leaf.data.len() / parts;
        let mut shape = leaf.shape.clone();
        shape[0] = rows / parts as u64;
        for (i, part) in out.iter_mut().enumerate() {
            part.leaves.push(Tensor {
                key: leaf.key.clone(),
                dtype: leaf.dtype,
                shape: shape.clone(),
                data: leaf.data[i * chunk..(i + 1) * chunk].to_vec(),
            });
        }
    }
    Ok(out)
}

/// Encodes a nested value as its leaves, keyed by flat key. Text leaves have no wire form.
pub fn encode_value(value: &Value) -> Result<Nest, DistributedError> {
    let leaves = value
        .flatten()
        .into_iter()
        .map(|(key, leaf)| encode_leaf(key, leaf))
        .collect::<Result<_, _>>()?;
    Ok(Nest { leaves })
}

fn encode_leaf(key: String, leaf: &Value) -> Result<Tensor, DistributedError> {
    fn bytes<T: Copy, const N: usize>(xs: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        xs.iter().flat_map(|&x| f(x)).collect()
    }
    let (dtype, data) = match leaf {
        Value::Bool(a) => (Dtype::Bool, a.data().iter().map(|&b| b as u8).collect()),
        Value::Int32(a) => (Dtype::Int32, bytes(a.data(), i32::to_le_bytes)),
        Value::Int64(a) => (Dtype::Int64, bytes(a.data(), i64::to_le_bytes)),
        Value::Uint8(a) => (Dtype::Uint8, a.data().to_vec()),
        Value::Float32(a) => (Dtype::Float32, bytes(a.data(), f32::to_le_bytes)),
        Value::Float64(a) => (Dtype::Float64, bytes(a.data(), f64::to_le_bytes)),
        other => {
            return Err(DistributedError::wire(
                &key,
                format!("{} has no wire form", other.kind_name()),
            ))
        }
    };
    let shape = leaf.shape().unwrap_or(&[]).iter().map(|&d| d as u64).collect();
    Ok(Tensor {
        key,
        dtype: dtype as i32,
        shape,
        data,
    })
}

/// Decodes a nested value and checks it against `space` (which carries the batch rank the
/// sender must use): structure, dtypes, shapes and bounds, with the flat key named.
pub fn decode_value(nest: &Nest, space: &Space) -> Result<Value, DistributedError> {
    let pairs = nest
        .leaves
        .iter()
        .map(|t| Ok((t.key.clone(), decode_leaf(t)?)))
        .collect::<Result<Vec<_>, DistributedError>>()?;
    let value = Value::unflatten(pairs).map_err(|e| DistributedError::wire("records", e.to_string()))?;
    space
        .check(&value)
        .map_err(|e| DistributedError::wire("records", e.to_string()))?;
    Ok(value)
}

/// The shape of `t` and its element count, refusing counts that overflow or do not match
/// the bytes sent (`width` bytes per element).
fn checked_shape(t: &Tensor, width: usize) -> Result<(Vec<usize>, usize), DistributedError> {
    let bad = |reason: String| DistributedError::wire(&t.key, reason);
    let shape = t
        .shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad(format!("dimension {d} is too large"))))
        .collect::<Result<Vec<_>, _>>()?;
    let count = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {shape:?} has more elements than this machine can count")))?;
    if count.checked_mul(width) != Some(t.data.len()) {
        return Err(bad(format!(
            "shape {shape:?} needs {count} elements of {width} bytes, got {} bytes",
            t.data.len()
        )));
    }
    Ok((shape, count))
}

fn decode_leaf(t: &Tensor) -> Result<Value, DistributedError> {
    fn read<T, const N: usize>(data: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        data.chunks_exact(N)
            .map(|c| {
                let mut b = [0u8; N];
                b.copy_from_slice(c);
                f(b)
            })
            .collect()
    }
    let bad = |reason: String| DistributedError::wire(&t.key, reason);
    let dtype = Dtype::try_from(t.dtype).map_err(|_| bad(format!("unknown dtype {}", t.dtype)))?;
    let width = match dtype {
        Dtype::Bool | Dtype::Uint8 => 1,
        Dtype::Int32 | Dtype::Float32 => 4,
        Dtype::Int64 | Dtype::Float64 => 8,
        Dtype::Unspecified => return Err(bad("no dtype given".into())),
    };
    let (shape, _) = checked_shape(t, width)?;
    let array_err = |e: rlgraph_core::spaces::SpaceError| bad(e.to_string());
    Ok(match dtype {
        Dtype::Bool => {
            if let Some(b) = t.data.iter().find(|&&b| b > 1) {
                return Err(bad(format!("a boolean byte must be 0 or 1, got {b}")));
            }
            Value::Bool(Array::new(shape, t.data.iter().map(|&b| b == 1).collect()).map_err(array_err)?)
        }
        Dtype::Uint8 => Value::Uint8(Array::new(shape, t.data.clone()).map_err(array_err)?),
        Dtype::Int32 => Value::Int32(Array::new(shape, read(&t.data, i32::from_le_bytes)).map_err(array_err)?),
        Dtype::Int64 => Value::Int64(Array::new(shape, read(&t.data, i64::from_le_bytes)).map_err(array_err)?),
        Dtype::Float32 => Value::Float32(Array::new(shape, read(&t.data, f32::from_le_bytes)).map_err(array_err)?),
        Dtype::Float64 => Value::Float64(Array::new(shape, read(&t.data, f64::from_le_bytes)).map_err(array_err)?),
        Dtype::Unspecified => return Err(bad("no dtype given".into())),
    })
}

/// Encodes a policy's weights by scope path.
pub fn encode_weights(weights: &BTreeMap<String, HostTensor>) -> Nest {
    let leaves = weights
        .iter()
        .map(|(path, t)| {
            let dtype = match &t.data {
                HostData::F32(_) => Dtype::Float32,
                HostData::F64(_) => Dtype::Float64,
                HostData::I64(_) => Dtype::Int64,
                HostData::U8(_) => Dtype::Uint8,
            };
            Tensor {
                key: path.clone(),
                dtype: dtype as i32,
                shape: t.shape.iter().map(|&d| d as u64).collect(),
                data: t.data.to_le_bytes(),
            }
        })
        .collect();
    Nest { leaves }
}

/// Decodes weights by scope path. Whether they fit the actor's graph (names, shapes) is the
/// actor's `load` to check, which refuses before writing any.
pub fn decode_weights(nest: &Nest) -> Result<BTreeMap<String, HostTensor>, DistributedError> {
    nest.leaves
        .iter()
        .map(|t| {
            let data = match decode_leaf(t)? {
                Value::Float32(a) => HostData::F32(a.into_parts().1),
                Value::Float64(a) => HostData::F64(a.into_parts().1),
                Value::Int64(a) => HostData::I64(a.into_parts().1),
                Value::Uint8(a) => HostData::U8(a.into_parts().1),
                other => {
                    return Err(DistributedError::wire(
                        &t.key,
                        format!("a weight cannot be a {}", other.kind_name()),
                    ))
                }
            };
            let shape = t.shape.iter().map(|&d| d as usize).collect();
            Ok((t.key.clone(), HostTensor { shape, data }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlgraph_core::spaces::{BoolBox, FloatBox, IntBox};

    fn records_space() -> Space {
        Space::dict([
            ("states", Space::from(FloatBox::new([2]))),
            ("actions", Space::from(IntBox::new(3).unwrap())),
            ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ])
        .unwrap()
        .with_batch_rank(true)
    }

    fn records() -> Value {
        Value::Dict(BTreeMap::from([
            (
                "states".to_string(),
                Value::Float32(Array::new([2, 2], vec![0.5, -1.0, 2.0, 3.25]).unwrap()),
            ),
            (
                "actions".to_string(),
                Value::Int32(Array::new([2], vec![2, 0]).unwrap()),
            ),
            (
                "terminals".to_string(),
                Value::Bool(Array::new([2], vec![false, true]).unwrap()),
            ),
        ]))
    }

    #[test]
    fn a_value_comes_back_exactly() {
        let nest = encode_value(&records()).unwrap();
        // f32 little-endian: 0.5 is 0x3F000000.
        let states = nest.leaves.iter().find(|t| t.key == "/states").unwrap();
        assert_eq!(&states.data[..4], &[0, 0, 0, 0x3f]);
        assert_eq!(decode_value(&nest, &records_space()).unwrap(), records());
    }

    #[test]
    fn a_wrong_shape_is_refused_with_its_key() {
        let mut nest = encode_value(&records()).unwrap();
        let states = nest.leaves.iter_mut().find(|t| t.key == "/states").unwrap();
        states.shape = vec![2, 3];
        let err = decode_value(&nest, &records_space()).unwrap_err().to_string();
        assert!(err.contains("states") && err.contains("needs 6 elements"), "{err}");
    }

    #[test]
    fn a_value_outside_the_space_is_refused() {
        let mut nest = encode_value(&records()).unwrap();
        let actions = nest.leaves.iter_mut().find(|t| t.key == "/actions").unwrap();
        actions.data[..4].copy_from_slice(&7i32.to_le_bytes());
        let err = decode_value(&nest, &records_space()).unwrap_err().to_string();
        assert!(err.contains("actions"), "{err}");
    }

    #[test]
    fn a_shape_that_overflows_is_refused_before_allocating() {
        let nest = Nest {
            leaves: vec![Tensor {
                key: "/states".into(),
                dtype: Dtype::Float32 as i32,
                shape: vec![1 << 62, 1 << 62],
                data: vec![],
            }],
        };
        let err = decode_value(&nest, &records_space()).unwrap_err().to_string();
        assert!(err.contains("more elements than"), "{err}");
    }

    #[test]
    fn a_reply_of_two_batches_splits_into_each_batch_row_for_row() {
        let nest = encode_value(&records()).unwrap();
        let halves = split_rows(nest, 2, 2).unwrap();
        // Row 0 is the first batch, row 1 the second, in every leaf.
        let row = |states: [f32; 2], action: i32, terminal: bool| {
            Value::Dict(BTreeMap::from([
                (
                    "states".to_string(),
                    Value::Float32(Array::new([1, 2], states.to_vec()).unwrap()),
                ),
                (
                    "actions".to_string(),
                    Value::Int32(Array::new([1], vec![action]).unwrap()),
                ),
                (
                    "terminals".to_string(),
                    Value::Bool(Array::new([1], vec![terminal]).unwrap()),
                ),
            ]))
        };
        assert_eq!(
            decode_value(&halves[0], &records_space()).unwrap(),
            row([0.5, -1.0], 2, false)
        );
        assert_eq!(
            decode_value(&halves[1], &records_space()).unwrap(),
            row([2.0, 3.25], 0, true)
        );
        // Rows that do not split evenly, or are not the rows asked for, are refused by key.
        let err = split_rows(encode_value(&records()).unwrap(), 2, 4)
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 rows, expected 4"), "{err}");
        let mut odd = encode_value(&records()).unwrap();
        for leaf in &mut odd.leaves {
            leaf.shape[0] = 3;
        }
        let err = split_rows(odd, 2, 3).unwrap_err().to_string();
        assert!(err.contains("do not split into 2"), "{err}");
    }

    #[test]
    fn weights_come_back_exactly() {
        let w = BTreeMap::from([(
            "agent/policy/w".to_string(),
            HostTensor {
                shape: vec![1, 2],
                data: HostData::F32(vec![1.5, -2.0]),
            },
        )]);
        assert_eq!(decode_weights(&encode_weights(&w)).unwrap(), w);
    }
}
