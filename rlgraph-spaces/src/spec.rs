//! JSON space specs in RLgraph's spellings, parsed into spaces and written back.
//!
//! Accepted forms:
//! - a string naming a scalar primitive: `"float"`, `"float64"`, `"int"`, `"int64"`, `"uint8"`,
//!   `"bool"`, `"text"`;
//! - a typed object: `{"type": "float-box", "shape": [4], "low": -1.0, "high": 1.0,
//!   "add_batch_rank": true}`; type names match RLgraph's way (case-insensitive, `-` and `_`
//!   ignored), so `"FloatBox"`, `"float_box"` and `"float"` are one type;
//! - `{"type": "dict", "spec": {...}}` or `{"type": "dict", "a": ..., "b": ...}`, and
//!   `{"type": "tuple", "spec": [...]}`; rank keys on a container apply to all its leaves;
//! - any other JSON object is a Dict of specs, any JSON array a Tuple of specs.
//!
//! Infinite float bounds are written as the strings `"inf"` and `"-inf"`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value as Json};

use crate::boxes::{BoolBox, FloatBounds, FloatBox, IntBox, TextBox};
use crate::dtype::Dtype;
use crate::error::{display_key, Result, SpaceError};
use crate::flat_key;
use crate::ranks::Ranks;
use crate::space::{DictSpace, Space, TupleSpace, MAX_ITEM_ELEMENTS};

const RANK_KEYS: [&str; 3] = ["add_batch_rank", "add_time_rank", "time_major"];

impl Space {
    /// Parses a space from JSON text.
    pub fn from_json_str(text: &str) -> Result<Space> {
        let json: Json = serde_json::from_str(text).map_err(|e| {
            if e.to_string().contains("key must be a string") {
                SpaceError::NonStringKey {
                    line: e.line(),
                    column: e.column(),
                }
            } else {
                SpaceError::MalformedJson {
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                }
            }
        })?;
        Space::from_json(&json)
    }

    /// Parses a space from a JSON spec.
    pub fn from_json(spec: &Json) -> Result<Space> {
        parse(spec, "", Ranks::NONE)
    }

    /// The canonical JSON spec of this space; `from_json` reads it back to an equal space.
    pub fn to_json(&self) -> Json {
        let mut obj = Map::new();
        let put_shape = |obj: &mut Map<String, Json>, shape: &[usize]| {
            obj.insert("shape".into(), json!(shape));
        };
        match self {
            Space::Dict(d) => {
                let spec: Map<String, Json> = d.entries().iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
                return json!({"type": "dict", "spec": spec});
            }
            Space::Tuple(t) => {
                return json!({"type": "tuple", "spec": t.items().iter().map(Space::to_json).collect::<Vec<_>>()});
            }
            Space::Bool(b) => {
                obj.insert("type".into(), json!("bool-box"));
                put_shape(&mut obj, &b.shape);
            }
            Space::Text(b) => {
                obj.insert("type".into(), json!("text-box"));
                put_shape(&mut obj, &b.shape);
            }
            Space::Int(b) => {
                obj.insert("type".into(), json!("int-box"));
                put_shape(&mut obj, &b.shape);
                if let Some((low, high)) = b.bounds {
                    obj.insert("low".into(), json!(low));
                    obj.insert("high".into(), json!(high));
                }
                obj.insert("dtype".into(), json!(b.dtype.name()));
            }
            Space::Float(b) => {
                obj.insert("type".into(), json!("float-box"));
                put_shape(&mut obj, &b.shape);
                match &b.bounds {
                    FloatBounds::Unbounded => {}
                    FloatBounds::Scalar { low, high } => {
                        obj.insert("low".into(), float_json(*low));
                        obj.insert("high".into(), float_json(*high));
                    }
                    FloatBounds::PerElement { low, high } => {
                        obj.insert("low".into(), Json::Array(low.iter().map(|x| float_json(*x)).collect()));
                        obj.insert(
                            "high".into(),
                            Json::Array(high.iter().map(|x| float_json(*x)).collect()),
                        );
                    }
                }
                obj.insert("dtype".into(), json!(b.dtype.name()));
            }
        }
        let ranks = self.ranks().unwrap_or_default();
        if ranks.batch {
            obj.insert("add_batch_rank".into(), json!(true));
        }
        if ranks.time {
            obj.insert("add_time_rank".into(), json!(true));
            if ranks.time_major {
                obj.insert("time_major".into(), json!(true));
            }
        }
        Json::Object(obj)
    }
}

impl Serialize for Space {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Space {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let json = Json::deserialize(deserializer)?;
        Space::from_json(&json).map_err(serde::de::Error::custom)
    }
}

/// A float as JSON: infinities become the strings `"inf"` / `"-inf"`, which JSON lacks.
pub(crate) fn float_json(x: f64) -> Json {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("NaN")
    } else if x > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

/// A short description of a JSON value's kind, for messages.
pub(crate) fn json_kind(j: &Json) -> String {
    match j {
        Json::Null => "null".into(),
        Json::Bool(b) => format!("the bool {b}"),
        Json::Number(n) => format!("the number {n}"),
        Json::String(s) => format!("the string {s:?}"),
        Json::Array(a) => format!("an array of {} items", a.len()),
        Json::Object(_) => "an object".into(),
    }
}

/// Reads a float, also from the strings `"inf"`, `"-inf"`, `"nan"`.
pub(crate) fn json_float(j: &Json) -> Option<f64> {
    match j {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        },
        _ => None,
    }
}

fn wrong(at: &str, field: &str, expected: &str, actual: &Json) -> SpaceError {
    SpaceError::WrongJson {
        at: display_key(at),
        field: field.into(),
        expected: expected.into(),
        actual: json_kind(actual),
    }
}

fn parse(spec: &Json, at: &str, inherited: Ranks) -> Result<Space> {
    match spec {
        Json::String(name) => {
            let space = primitive(&normalize(name), at, name)?;
            Ok(space.with_ranks(inherited))
        }
        Json::Array(items) => parse_tuple(items, at, inherited),
        Json::Object(obj) => match obj.get("type") {
            Some(Json::String(t)) => parse_typed(obj, &normalize(t), t, at, inherited),
            Some(other) => Err(wrong(at, "type", "a type name string", other)),
            None => parse_dict(obj.iter(), at, inherited),
        },
        other => Err(wrong(at, "spec", "a type name, an object or an array", other)),
    }
}

/// RLgraph's matching of type names: case-insensitive, `-` and `_` ignored.
fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

fn primitive(normalized: &str, at: &str, written: &str) -> Result<Space> {
    let unknown = || SpaceError::UnknownType {
        at: display_key(at),
        type_name: written.to_string(),
    };
    let kind = match normalized {
        "floatbox" | "float" | "float32" | "float64" | "double" => "float",
        "intbox" | "int" | "int32" | "int64" | "uint8" => "int",
        "boolbox" | "bool" => "bool",
        "textbox" | "text" | "str" => "text",
        _ => return Err(unknown()),
    };
    let dtype = Dtype::parse(normalized);
    Ok(match kind {
        "float" => Space::Float(FloatBox::new([]).with_dtype(dtype.filter(Dtype::is_float).unwrap_or(Dtype::Float32))?),
        "int" => Space::Int(IntBox::unbounded().with_dtype(dtype.filter(Dtype::is_int).unwrap_or(Dtype::Int32))?),
        "bool" => Space::Bool(BoolBox::new([])),
        _ => Space::Text(TextBox::new([])),
    })
}

fn parse_ranks(obj: &Map<String, Json>, at: &str, inherited: Ranks) -> Result<Ranks> {
    let flag = |key: &str, default: bool| match obj.get(key) {
        None => Ok(default),
        Some(Json::Bool(b)) => Ok(*b),
        Some(other) => Err(wrong(at, key, "true or false", other)),
    };
    let time = flag("add_time_rank", inherited.time)?;
    Ok(Ranks {
        batch: flag("add_batch_rank", inherited.batch)?,
        time,
        time_major: time && flag("time_major", inherited.time_major)?,
    })
}

fn check_keys(obj: &Map<String, Json>, at: &str, type_name: &str, allowed: &[&str]) -> Result<()> {
    match obj
        .keys()
        .find(|k| k.as_str() != "type" && !allowed.contains(&k.as_str()))
    {
        Some(k) => Err(SpaceError::UnknownKey {
            at: display_key(at),
            type_name: type_name.into(),
            key: k.clone(),
            allowed: std::iter::once("type")
                .chain(allowed.iter().copied())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        None => Ok(()),
    }
}

fn parse_typed(obj: &Map<String, Json>, normalized: &str, written: &str, at: &str, inherited: Ranks) -> Result<Space> {
    let ranks = parse_ranks(obj, at, inherited)?;
    match normalized {
        "dict" => {
            let entries: Vec<(&String, &Json)> = match obj.get("spec") {
                Some(Json::Object(spec)) => {
                    check_keys(obj, at, "dict", &["spec", RANK_KEYS[0], RANK_KEYS[1], RANK_KEYS[2]])?;
                    spec.iter().collect()
                }
                Some(other) => return Err(wrong(at, "spec", "an object of sub-space specs", other)),
                // RLgraph's keyword form: `Dict(a=..., b=...)`.
                None => obj
                    .iter()
                    .filter(|(k, _)| k.as_str() != "type" && !RANK_KEYS.contains(&k.as_str()))
                    .collect(),
            };
            parse_dict(entries.into_iter(), at, ranks)
        }
        "tuple" => {
            check_keys(obj, at, "tuple", &["spec", RANK_KEYS[0], RANK_KEYS[1], RANK_KEYS[2]])?;
            match obj.get("spec") {
                Some(Json::Array(items)) => parse_tuple(items, at, ranks),
                Some(other) => Err(wrong(at, "spec", "an array of sub-space specs", other)),
                None => Ok(Space::tuple(vec![])),
            }
        }
        _ => {
            let base = primitive(normalized, at, written)?;
            let space = match base {
                Space::Float(b) => parse_float(obj, at, b.dtype)?,
                Space::Int(b) => parse_int(obj, at, b.dtype)?,
                Space::Bool(_) => {
                    check_keys(
                        obj,
                        at,
                        "bool-box",
                        &["shape", RANK_KEYS[0], RANK_KEYS[1], RANK_KEYS[2]],
                    )?;
                    Space::Bool(BoolBox::new(parse_shape(obj.get("shape"), at)?.unwrap_or_default()))
                }
                _ => {
                    check_keys(
                        obj,
                        at,
                        "text-box",
                        &["shape", RANK_KEYS[0], RANK_KEYS[1], RANK_KEYS[2]],
                    )?;
                    Space::Text(TextBox::new(parse_shape(obj.get("shape"), at)?.unwrap_or_default()))
                }
            };
            Ok(space.with_ranks(ranks))
        }
    }
}

fn parse_dict<'a>(entries: impl Iterator<Item = (&'a String, &'a Json)>, at: &str, ranks: Ranks) -> Result<Space> {
    let mut out = Vec::new();
    for (k, v) in entries {
        flat_key::check_dict_key(at, k)?;
        out.push((k.clone(), parse(v, &flat_key::join(at, k), ranks)?));
    }
    Ok(Space::Dict(DictSpace::new(out)?))
}

fn parse_tuple(items: &[Json], at: &str, ranks: Ranks) -> Result<Space> {
    let parsed: Result<Vec<Space>> = items
        .iter()
        .enumerate()
        .map(|(i, v)| parse(v, &flat_key::join(at, &flat_key::tuple_segment(i)), ranks))
        .collect();
    Ok(Space::Tuple(TupleSpace::new(parsed?)))
}

fn parse_shape(shape: Option<&Json>, at: &str) -> Result<Option<Vec<usize>>> {
    let bad = |reason: String| SpaceError::InvalidShape {
        at: display_key(at),
        reason,
    };
    let dim = |j: &Json| -> Result<usize> {
        match j {
            Json::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => usize::try_from(u).map_err(|_| bad(format!("dimension {u} is too large"))),
                (None, Some(i)) => Err(bad(format!(
                    "dimension {i} is negative; dimensions are counts (0 or more)"
                ))),
                _ => Err(bad(format!("dimension {n} is not an integer"))),
            },
            other => Err(bad(format!(
                "a dimension must be a non-negative integer, got {}",
                json_kind(other)
            ))),
        }
    };
    let dims = match shape {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Array(dims)) => dims.iter().map(dim).collect::<Result<Vec<_>>>()?,
        Some(single @ Json::Number(_)) => vec![dim(single)?],
        Some(other) => {
            return Err(bad(format!(
                "shape must be a list of non-negative integers, got {}",
                json_kind(other)
            )))
        }
    };
    match dims.iter().try_fold(1usize, |n, d| n.checked_mul(*d)) {
        Some(n) if n <= MAX_ITEM_ELEMENTS => Ok(Some(dims)),
        _ => Err(bad(format!(
            "shape {dims:?} has {} elements per item; the most a space takes is {MAX_ITEM_ELEMENTS} (1 GiB of float32)",
            dims.iter().fold(1u128, |n, d| n.saturating_mul(*d as u128))
        ))),
    }
}

/// Flattens a (possibly nested) JSON array of bounds, and returns its nesting as a shape.
fn bound_array(j: &Json, at: &str, field: &str) -> Result<(Vec<usize>, Vec<f64>)> {
    match j {
        Json::Array(items) => {
            let mut shape = vec![items.len()];
            let mut flat = Vec::new();
            let mut inner: Option<Vec<usize>> = None;
            for item in items {
                let (s, mut f) = bound_array(item, at, field)?;
                if inner.as_ref().is_some_and(|prev| *prev != s) {
                    return Err(SpaceError::InvalidShape {
                        at: display_key(at),
                        reason: format!("{field} is a ragged nested array"),
                    });
                }
                inner = Some(s);
                flat.append(&mut f);
            }
            shape.extend(inner.unwrap_or_default());
            Ok((shape, flat))
        }
        other => json_float(other)
            .map(|x| (vec![], vec![x]))
            .ok_or_else(|| wrong(at, field, "a number, \"inf\", \"-inf\" or an array of them", other)),
    }
}

fn parse_float(obj: &Map<String, Json>, at: &str, default_dtype: Dtype) -> Result<Space> {
    check_keys(
        obj,
        at,
        "float-box",
        &[
            "shape",
            "low",
            "high",
            "dtype",
            RANK_KEYS[0],
            RANK_KEYS[1],
            RANK_KEYS[2],
        ],
    )?;
    let dtype = parse_dtype(obj, at, default_dtype, Dtype::is_float, "float32 or float64")?;
    let shape = parse_shape(obj.get("shape"), at)?;
    let low = obj.get("low").map(|j| bound_array(j, at, "low")).transpose()?;
    let high = obj.get("high").map(|j| bound_array(j, at, "high")).transpose()?;
    // A float32 bound beyond f32's range would become infinite: say so instead.
    let too_wide = |b: &Option<(Vec<usize>, Vec<f64>)>| {
        b.as_ref().and_then(|(_, v)| {
            v.iter()
                .copied()
                .find(|x| x.is_finite() && x.abs() > f64::from(f32::MAX))
        })
    };
    if let Some(x) = too_wide(&low).or(too_wide(&high)).filter(|_| dtype == Dtype::Float32) {
        return Err(SpaceError::InvalidBounds {
            at: display_key(at),
            reason: format!(
                "bound {x:e} does not fit float32 (at most ±3.4e38); use \"dtype\": \"float64\" or a smaller bound"
            ),
        });
    }
    let scalar = |b: &Option<(Vec<usize>, Vec<f64>)>| b.as_ref().is_none_or(|(s, _)| s.is_empty());
    let space = if low.is_none() && high.is_none() {
        FloatBox::new(shape.unwrap_or_default())
    } else if scalar(&low) && scalar(&high) {
        let l = low.map_or(f64::NEG_INFINITY, |(_, v)| v[0]);
        let h = high.map_or(f64::INFINITY, |(_, v)| v[0]);
        FloatBox::bounded(shape.unwrap_or_default(), l, h).map_err(|e| crate::space::nest_error(at, e))?
    } else {
        // RLgraph infers the shape from array bounds when no shape is given.
        let inferred = low
            .iter()
            .chain(high.iter())
            .map(|(s, _)| s.clone())
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        let shape = shape.unwrap_or(inferred);
        let n: usize = shape.iter().product();
        let expand = |b: Option<(Vec<usize>, Vec<f64>)>, fill: f64| match b {
            None => vec![fill; n],
            Some((s, v)) if s.is_empty() => vec![v[0]; n],
            Some((_, v)) => v,
        };
        FloatBox::per_element(shape, expand(low, f64::NEG_INFINITY), expand(high, f64::INFINITY))
            .map_err(|e| crate::space::nest_error(at, e))?
    };
    Ok(Space::Float(space.with_dtype(dtype)?))
}

fn parse_int(obj: &Map<String, Json>, at: &str, default_dtype: Dtype) -> Result<Space> {
    check_keys(
        obj,
        at,
        "int-box",
        &[
            "shape",
            "low",
            "high",
            "num_categories",
            "dtype",
            RANK_KEYS[0],
            RANK_KEYS[1],
            RANK_KEYS[2],
        ],
    )?;
    let dtype = parse_dtype(obj, at, default_dtype, Dtype::is_int, "int32, int64 or uint8")?;
    let int = |key: &str| -> Result<Option<i64>> {
        match obj.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
            Some(other) => Err(wrong(at, key, "an integer (IntBox bounds are scalar integers)", other)),
        }
    };
    let (low, high, cats) = (int("low")?, int("high")?, int("num_categories")?);
    // RLgraph's `IntBox(n)` puts n in `low` and means the categories 0..n.
    let bounds = match (low, high.or(cats)) {
        (None, None) => None,
        (Some(n), None) | (None, Some(n)) => Some((0, n)),
        (Some(l), Some(h)) => Some((l, h)),
    };
    let b = match bounds {
        None => IntBox::unbounded(),
        Some((l, h)) => IntBox::with_bounds(l, h).map_err(|e| crate::space::nest_error(at, e))?,
    };
    let b = b.with_shape(parse_shape(obj.get("shape"), at)?.unwrap_or_default());
    Ok(Space::Int(
        b.with_dtype(dtype).map_err(|e| crate::space::nest_error(at, e))?,
    ))
}

fn parse_dtype(
    obj: &Map<String, Json>,
    at: &str,
    default: Dtype,
    ok: fn(&Dtype) -> bool,
    expected: &str,
) -> Result<Dtype> {
    match obj.get("dtype") {
        None => Ok(default),
        Some(Json::String(s)) => Dtype::parse(s)
            .filter(ok)
            .ok_or_else(|| wrong(at, "dtype", expected, &Json::String(s.clone()))),
        Some(other) => Err(wrong(at, "dtype", expected, other)),
    }
}
