//! Values as plain JSON: nested arrays per leaf, objects for Dicts, arrays for Tuples.
//!
//! Bools are JSON bools, ints are JSON integers, floats are JSON numbers (non-finite floats
//! as `"inf"`, `"-inf"`, `"NaN"`), text is JSON strings. Because a Tuple and an array leaf
//! both look like JSON arrays, reading JSON back needs the space (`Space::value_from_json`).

use serde_json::{Map, Value as Json};

use crate::boxes::element_count;
use crate::dtype::Dtype;
use crate::error::{display_key, Result, SpaceError};
use crate::flat_key;
use crate::space::Space;
use crate::spec::{float_json, json_float, json_kind};
use crate::value::{Array, Value};

impl Value {
    /// This value as plain JSON (see the module docs for the mapping).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Dict(d) => Json::Object(d.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<Map<_, _>>()),
            Value::Tuple(t) => Json::Array(t.iter().map(Value::to_json).collect()),
            Value::Bool(a) => nest(a, |x| Json::Bool(*x)),
            Value::Int32(a) => nest(a, |x| Json::from(*x)),
            Value::Int64(a) => nest(a, |x| Json::from(*x)),
            Value::Uint8(a) => nest(a, |x| Json::from(*x)),
            Value::Float32(a) => nest(a, |x| float_json(*x as f64)),
            Value::Float64(a) => nest(a, |x| float_json(*x)),
            Value::Text(a) => nest(a, |x| Json::String(x.clone())),
        }
    }
}

fn nest<T>(a: &Array<T>, leaf: impl Fn(&T) -> Json + Copy) -> Json {
    fn build<T>(shape: &[usize], data: &[T], leaf: impl Fn(&T) -> Json + Copy) -> Json {
        match shape.split_first() {
            None => data.first().map(leaf).unwrap_or(Json::Null),
            Some((&d, rest)) => {
                let step = element_count(rest);
                Json::Array(
                    (0..d)
                        .map(|i| build(rest, &data[i * step..(i + 1) * step], leaf))
                        .collect(),
                )
            }
        }
    }
    build(a.shape(), a.data(), leaf)
}

impl Space {
    /// Reads a value of this space from plain JSON, and checks that it lies in the space.
    pub fn value_from_json(&self, json: &Json) -> Result<Value> {
        let value = self.read_at("", json)?;
        self.check(&value)?;
        Ok(value)
    }

    fn read_at(&self, key: &str, json: &Json) -> Result<Value> {
        let wrong = |expected: &str| SpaceError::WrongJson {
            at: display_key(key),
            field: "value".into(),
            expected: expected.into(),
            actual: json_kind(json),
        };
        match self {
            Space::Dict(d) => {
                let Json::Object(obj) = json else {
                    return Err(wrong("an object (Dict)"));
                };
                if let Some(extra) = obj.keys().find(|k| d.get(k).is_none()) {
                    return Err(SpaceError::NotContained {
                        at: display_key(key),
                        reason: format!(
                            "unexpected Dict key {extra:?}; expected keys {:?}",
                            d.entries().keys().collect::<Vec<_>>()
                        ),
                    });
                }
                let mut out = std::collections::BTreeMap::new();
                for (k, s) in d.entries() {
                    let child = flat_key::join(key, k);
                    let j = obj.get(k).ok_or_else(|| SpaceError::NotContained {
                        at: display_key(key),
                        reason: format!("missing Dict key {k:?}"),
                    })?;
                    out.insert(k.clone(), s.read_at(&child, j)?);
                }
                Ok(Value::Dict(out))
            }
            Space::Tuple(t) => {
                let Json::Array(items) = json else {
                    return Err(wrong("an array (Tuple)"));
                };
                if items.len() != t.items().len() {
                    return Err(SpaceError::NotContained {
                        at: display_key(key),
                        reason: format!("expected a Tuple of {} entries, got {}", t.items().len(), items.len()),
                    });
                }
                let parts: Result<Vec<Value>> = t
                    .items()
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (s, j))| s.read_at(&flat_key::join(key, &flat_key::tuple_segment(i)), j))
                    .collect();
                Ok(Value::Tuple(parts?))
            }
            leaf => read_leaf(leaf, key, json),
        }
    }
}

/// Reads nested arrays of one dtype; the shape comes from the nesting, with the space's own
/// trailing dimensions filling in below an empty array.
fn read_leaf(space: &Space, key: &str, json: &Json) -> Result<Value> {
    let dtype = space.dtype().unwrap_or(Dtype::Float32);
    let core = space.shape().unwrap_or(&[]);
    let extra = space.ranks().unwrap_or_default().count();
    let mut shape = Vec::new();
    let mut elements = Vec::new();
    collect(json, 0, &mut shape, &mut elements, key)?;
    // Below an empty array nothing tells the remaining dimensions; take them from the space.
    let rank = extra + core.len();
    if shape.len() < rank && shape.last() == Some(&0) {
        let have = shape.len();
        shape.extend(core.iter().skip(have.saturating_sub(extra)).copied());
    }
    let bad = |i: usize, expected: &str| SpaceError::WrongJson {
        at: display_key(key),
        field: format!("element {i}"),
        expected: expected.into(),
        actual: json_kind(elements[i]),
    };
    macro_rules! read {
        ($variant:ident, $expected:expr, $conv:expr) => {{
            let data: Result<Vec<_>> = elements
                .iter()
                .enumerate()
                .map(|(i, j)| $conv(*j).ok_or_else(|| bad(i, $expected)))
                .collect();
            Value::$variant(Array::new(shape.clone(), data?).map_err(|e| crate::space::nest_error(key, e))?)
        }};
    }
    Ok(match dtype {
        Dtype::Bool => read!(Bool, "a bool", |j: &Json| j.as_bool()),
        Dtype::Int32 => read!(Int32, "an int32 integer", |j: &Json| j
            .as_i64()
            .and_then(|x| i32::try_from(x).ok())),
        Dtype::Int64 => read!(Int64, "an int64 integer", |j: &Json| j.as_i64()),
        Dtype::Uint8 => read!(Uint8, "an integer 0..=255", |j: &Json| j
            .as_u64()
            .and_then(|x| u8::try_from(x).ok())),
        // A finite number beyond float32's range would silently become an infinity.
        Dtype::Float32 => read!(
            Float32,
            "a number within float32's range (magnitude at most 3.4028235e38)",
            |j: &Json| json_float(j).and_then(|x| Some(x as f32).filter(|y| y.is_finite() || !x.is_finite()))
        ),
        Dtype::Float64 => read!(Float64, "a number", json_float),
        Dtype::Text => read!(Text, "a string", |j: &Json| j.as_str().map(String::from)),
    })
}

/// Walks nested arrays depth-first, recording the shape and checking it is rectangular.
fn collect<'a>(json: &'a Json, depth: usize, shape: &mut Vec<usize>, out: &mut Vec<&'a Json>, key: &str) -> Result<()> {
    let ragged = || SpaceError::InvalidShape {
        at: display_key(key),
        reason: format!("ragged nested array at depth {depth}: all arrays at one depth must have one length"),
    };
    match json {
        Json::Array(items) => {
            match shape.get(depth) {
                None if out.is_empty() && shape.len() == depth => shape.push(items.len()),
                Some(&d) if d == items.len() => {}
                _ => return Err(ragged()),
            }
            items.iter().try_for_each(|j| collect(j, depth + 1, shape, out, key))
        }
        scalar => {
            if shape.len() != depth {
                return Err(ragged());
            }
            out.push(scalar);
            Ok(())
        }
    }
}
