//! Python objects to rlgraph `Value`s and back: numpy arrays at the leaves, dicts for Dict
//! spaces, tuples for Tuple spaces.

use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyTuple};
use rlgraph_spaces::{Array, Dtype, Space, Value};

/// The value of `space` (or a batch of them, when the arrays carry extra leading
/// dimensions) that `obj` holds. `at` names the argument in errors. Floats are refused for
/// integer and boolean leaves rather than truncated.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, space: &Space, at: &str) -> PyResult<Value> {
    match space {
        Space::Dict(d) => {
            let dict = obj.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{at}: expected a dict with keys {:?} for the space {}, got {}",
                    d.entries().keys().collect::<Vec<_>>(),
                    space.describe(),
                    type_name(obj)
                ))
            })?;
            let mut out = std::collections::BTreeMap::new();
            for (key, sub) in d.entries() {
                let item = dict
                    .get_item(key)?
                    .ok_or_else(|| PyValueError::new_err(format!("{at}: the key {key:?} is missing")))?;
                out.insert(key.clone(), to_value(&item, sub, &format!("{at}[{key:?}]"))?);
            }
            if let Some(extra) = dict
                .keys()
                .iter()
                .filter_map(|k| k.extract::<String>().ok())
                .find(|k| !d.entries().contains_key(k))
            {
                return Err(PyValueError::new_err(format!(
                    "{at}: the key {extra:?} is not in the space {}",
                    space.describe()
                )));
            }
            Ok(Value::Dict(out))
        }
        Space::Tuple(t) => {
            let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
            if items.len() != t.items().len() {
                return Err(PyValueError::new_err(format!(
                    "{at}: expected {} items for the space {}, got {}",
                    t.items().len(),
                    space.describe(),
                    items.len()
                )));
            }
            let values = items
                .iter()
                .zip(t.items())
                .enumerate()
                .map(|(i, (item, sub))| to_value(item, sub, &format!("{at}[{i}]")))
                .collect::<PyResult<_>>()?;
            Ok(Value::Tuple(values))
        }
        leaf => leaf_to_value(obj, leaf.dtype().unwrap_or(Dtype::Float32), at),
    }
}

/// One numeric leaf: `np.asarray(obj)` checked for its kind, then cast to `dtype`.
fn leaf_to_value(obj: &Bound<'_, PyAny>, dtype: Dtype, at: &str) -> PyResult<Value> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let array = np.call_method1("asarray", (obj,)).map_err(|e| {
        PyTypeError::new_err(format!(
            "{at}: expected an array of {}, got {}: {e}",
            dtype.name(),
            type_name(obj)
        ))
    })?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let allowed = match dtype {
        Dtype::Float32 | Dtype::Float64 => "fiub",
        Dtype::Int32 | Dtype::Int64 | Dtype::Uint8 => "iub",
        Dtype::Bool => "b",
        Dtype::Text => "",
    };
    if !allowed.contains(kind.as_str()) {
        let got: String = array.getattr("dtype")?.str()?.extract()?;
        return Err(PyTypeError::new_err(format!(
            "{at}: expected {} values, got an array of {got}",
            dtype.name()
        )));
    }
    let range = match dtype {
        Dtype::Int32 => Some((i32::MIN as i64, i32::MAX as i64)),
        Dtype::Uint8 => Some((0, 255)),
        _ => None,
    };
    if let Some((low, high)) = range {
        check_range(&array, low, high, at)?;
    }
    let cast = np.call_method(
        "ascontiguousarray",
        (&array,),
        Some(&[("dtype", dtype.name())].into_py_dict(py)?),
    )?;
    Ok(match dtype {
        Dtype::Float32 => Value::Float32(read(&cast)?),
        Dtype::Float64 => Value::Float64(read(&cast)?),
        Dtype::Int32 => Value::Int32(read(&cast)?),
        Dtype::Int64 => Value::Int64(read(&cast)?),
        Dtype::Uint8 => Value::Uint8(read(&cast)?),
        Dtype::Bool => Value::Bool(read(&cast)?),
        // Refused above: no numpy kind is allowed for text.
        Dtype::Text => {
            return Err(PyTypeError::new_err(format!(
                "{at}: text values do not come from Python"
            )))
        }
    })
}

/// Refuses integers of `array` outside `[low, high]` (a cast would wrap them).
fn check_range(array: &Bound<'_, PyAny>, low: i64, high: i64, at: &str) -> PyResult<()> {
    let size: usize = array.getattr("size")?.extract()?;
    if size > 0 {
        let (min, max): (i64, i64) = (
            array.call_method0("min")?.call_method0("__int__")?.extract()?,
            array.call_method0("max")?.call_method0("__int__")?.extract()?,
        );
        if min < low || max > high {
            return Err(PyValueError::new_err(format!(
                "{at}: values from {min} to {max} do not fit [{low}, {high}]"
            )));
        }
    }
    Ok(())
}

fn read<T: Element + Clone>(array: &Bound<'_, PyAny>) -> PyResult<Array<T>> {
    let typed: PyReadonlyArrayDyn<'_, T> = array.extract()?;
    let shape = typed.shape().to_vec();
    let data = typed
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?
        .to_vec();
    Array::new(shape, data).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `value` as Python: a numpy array per leaf (0-d for scalars), dicts and tuples around them.
/// Each leaf's buffer moves into its array without a copy (numpy frees it through Rust).
pub(crate) fn from_value(py: Python<'_>, value: Value) -> PyResult<Bound<'_, PyAny>> {
    fn array<T: Element>(py: Python<'_>, a: Array<T>) -> PyResult<Bound<'_, PyAny>> {
        let (shape, data) = a.into_parts();
        Ok(PyArray1::from_vec(py, data).reshape(shape)?.into_any())
    }
    match value {
        Value::Bool(a) => array(py, a),
        Value::Int32(a) => array(py, a),
        Value::Int64(a) => array(py, a),
        Value::Uint8(a) => array(py, a),
        Value::Float32(a) => array(py, a),
        Value::Float64(a) => array(py, a),
        Value::Text(a) => Ok(a.into_parts().1.into_pyobject(py)?.into_any()),
        Value::Dict(d) => {
            let dict = PyDict::new(py);
            for (k, v) in d {
                dict.set_item(k, from_value(py, v)?)?;
            }
            Ok(dict.into_any())
        }
        Value::Tuple(items) => {
            let items = items
                .into_iter()
                .map(|v| from_value(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, items)?.into_any())
        }
    }
}

/// How many values of `space` `value` holds: `None` for one, `Some(n)` for a batch of `n`
/// (leaves with one more leading dimension than the space's shape).
pub(crate) fn batch_size(value: &Value, space: &Space, at: &str) -> PyResult<Option<usize>> {
    let mut found: Option<Option<usize>> = None;
    for ((key, leaf), (_, sub)) in value.flatten().into_iter().zip(space.flatten()) {
        let want = sub.shape().unwrap_or(&[]);
        let got = leaf.shape().unwrap_or(&[]);
        let this = if got == want {
            None
        } else if got.len() == want.len() + 1 && &got[1..] == want {
            Some(got[0])
        } else {
            let place = if key.is_empty() {
                at.to_string()
            } else {
                format!("{at}/{key}")
            };
            return Err(PyValueError::new_err(format!(
                "{place}: an array of shape {got:?} fits neither the space's shape {want:?} nor a batch of it (n, {})",
                want.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            )));
        };
        if found.is_some_and(|f| f != this) {
            return Err(PyValueError::new_err(format!(
                "{at}: the leaves disagree on the batch size"
            )));
        }
        found = Some(this);
    }
    Ok(found.flatten())
}

/// The Python type name of `obj`, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an object".into())
}
