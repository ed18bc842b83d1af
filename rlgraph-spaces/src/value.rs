//! `Value`: nested host data that mirrors a space, with typed n-dimensional leaves.

use std::collections::BTreeMap;

use crate::boxes::element_count;
use crate::dtype::Dtype;
use crate::error::{Result, SpaceError};
use crate::flat_key::{self, Nest, Nested};

/// A dense row-major n-dimensional array of one element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Array<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T> Array<T> {
    /// An array of the given shape; fails unless `data` has exactly `shape.product()` elements.
    pub fn new(shape: impl Into<Vec<usize>>, data: Vec<T>) -> Result<Self> {
        let shape = shape.into();
        let n = element_count(&shape);
        if n != data.len() {
            return Err(SpaceError::InvalidShape {
                at: "(root)".into(),
                reason: format!("shape {shape:?} holds {n} elements but {} were given", data.len()),
            });
        }
        Ok(Array { shape, data })
    }

    /// An array whose element count the caller has already made equal to the shape's.
    pub(crate) fn from_trusted_parts(shape: Vec<usize>, data: Vec<T>) -> Self {
        debug_assert_eq!(element_count(&shape), data.len());
        Array { shape, data }
    }

    /// A rank-0 array holding one element.
    pub fn scalar(x: T) -> Self {
        Array {
            shape: vec![],
            data: vec![x],
        }
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in row-major order.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// The shape and the elements.
    pub fn into_parts(self) -> (Vec<usize>, Vec<T>) {
        (self.shape, self.data)
    }
}

/// Nested host data: a typed array per leaf, or a Dict or Tuple of values.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Booleans.
    Bool(Array<bool>),
    /// 32-bit integers.
    Int32(Array<i32>),
    /// 64-bit integers.
    Int64(Array<i64>),
    /// Bytes.
    Uint8(Array<u8>),
    /// 32-bit floats.
    Float32(Array<f32>),
    /// 64-bit floats.
    Float64(Array<f64>),
    /// Strings.
    Text(Array<String>),
    /// Named values, sorted by key.
    Dict(BTreeMap<String, Value>),
    /// Ordered values.
    Tuple(Vec<Value>),
}

/// Runs `$body` with `$a` bound to the typed array of any leaf variant.
macro_rules! with_array {
    ($value:expr, $a:ident => $body:expr, container => $other:expr) => {
        match $value {
            Value::Bool($a) => $body,
            Value::Int32($a) => $body,
            Value::Int64($a) => $body,
            Value::Uint8($a) => $body,
            Value::Float32($a) => $body,
            Value::Float64($a) => $body,
            Value::Text($a) => $body,
            Value::Dict(_) | Value::Tuple(_) => $other,
        }
    };
}
pub(crate) use with_array;

impl flat_key::Nest for Value {
    fn children(&self) -> Option<Vec<(String, &Value)>> {
        match self {
            Value::Dict(d) => Some(flat_key::dict_children(d)),
            Value::Tuple(t) => Some(flat_key::tuple_children(t)),
            _ => None,
        }
    }

    fn child(&self, segment: &str) -> Option<&Value> {
        match self {
            Value::Dict(d) => d.get(segment),
            Value::Tuple(t) => t.get(flat_key::parse_tuple_segment(segment)?),
            _ => None,
        }
    }
}

impl Value {
    /// A scalar f32 value.
    pub fn f32(x: f32) -> Value {
        Value::Float32(Array::scalar(x))
    }

    /// A scalar i32 value.
    pub fn i32(x: i32) -> Value {
        Value::Int32(Array::scalar(x))
    }

    /// A scalar bool value.
    pub fn bool(x: bool) -> Value {
        Value::Bool(Array::scalar(x))
    }

    /// The element type of a leaf; `None` for containers.
    pub fn dtype(&self) -> Option<Dtype> {
        Some(match self {
            Value::Bool(_) => Dtype::Bool,
            Value::Int32(_) => Dtype::Int32,
            Value::Int64(_) => Dtype::Int64,
            Value::Uint8(_) => Dtype::Uint8,
            Value::Float32(_) => Dtype::Float32,
            Value::Float64(_) => Dtype::Float64,
            Value::Text(_) => Dtype::Text,
            Value::Dict(_) | Value::Tuple(_) => return None,
        })
    }

    /// The shape of a leaf; `None` for containers.
    pub fn shape(&self) -> Option<&[usize]> {
        with_array!(self, a => Some(a.shape()), container => None)
    }

    /// A short name of this kind of value, for messages.
    pub fn kind_name(&self) -> String {
        match self {
            Value::Dict(_) => "Dict".into(),
            Value::Tuple(_) => "Tuple".into(),
            leaf => format!(
                "{} array of shape {:?}",
                leaf.dtype().map(|d| d.name()).unwrap_or(""),
                leaf.shape().unwrap_or(&[])
            ),
        }
    }

    /// The leaves with their flat keys, in the same order as `Space::flatten`.
    pub fn flatten(&self) -> Vec<(String, &Value)> {
        self.leaves()
    }

    /// The leaves in `flatten`'s order, without their keys: what hot paths (storing records)
    /// need, with no string built per leaf.
    pub fn leaf_values(&self) -> Vec<&Value> {
        fn walk<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
            match v {
                Value::Dict(d) => d.values().for_each(|c| walk(c, out)),
                Value::Tuple(t) => t.iter().for_each(|c| walk(c, out)),
                leaf => out.push(leaf),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// Rebuilds a nested value from (flat key, leaf) pairs; the inverse of `flatten` for
    /// values without empty containers.
    pub fn unflatten(pairs: Vec<(String, Value)>) -> Result<Value> {
        fn build(n: Nested<Value>) -> Value {
            match n {
                Nested::Leaf(v) => v,
                Nested::Dict(m) => Value::Dict(m.into_iter().map(|(k, v)| (k, build(v))).collect()),
                Nested::Tuple(v) => Value::Tuple(v.into_iter().map(build).collect()),
            }
        }
        Ok(build(flat_key::unflatten(pairs)?))
    }

    /// The same nesting with every leaf replaced by `f(flat_key, leaf)`.
    pub fn map(&self, mut f: impl FnMut(&str, &Value) -> Value) -> Value {
        self.map_at("", &mut f)
    }

    fn map_at(&self, key: &str, f: &mut impl FnMut(&str, &Value) -> Value) -> Value {
        match self {
            Value::Dict(d) => Value::Dict(
                d.iter()
                    .map(|(k, v)| (k.clone(), v.map_at(&flat_key::join(key, k), f)))
                    .collect(),
            ),
            Value::Tuple(t) => Value::Tuple(
                t.iter()
                    .enumerate()
                    .map(|(i, v)| v.map_at(&flat_key::join(key, &flat_key::tuple_segment(i)), f))
                    .collect(),
            ),
            leaf => f(key, leaf),
        }
    }
}
