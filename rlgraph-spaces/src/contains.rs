//! Whether a value lies in a space, and if not, exactly where and why.

use crate::dtype::Dtype;
use crate::error::{display_key, Result, SpaceError};
use crate::flat_key;
use crate::space::Space;
use crate::value::{with_array, Value};

impl Space {
    /// Whether `value` lies in this space (structure, dtype, shape with any batch/time sizes, bounds).
    pub fn contains(&self, value: &Value) -> bool {
        self.check(value).is_ok()
    }

    /// Like `contains`, but says why not: the flat key, and which element broke which bound.
    pub fn check(&self, value: &Value) -> Result<()> {
        self.check_at(&KeyPath::Root, value)
    }

    // Checking runs on every record stored and every graph input, so nothing here allocates
    // unless the check fails: the key is a chain of borrowed segments, rendered on failure.
    fn check_at(&self, key: &KeyPath<'_>, value: &Value) -> Result<()> {
        let fail = |reason: String| SpaceError::NotContained {
            at: display_key(&key.render()),
            reason,
        };
        match (self, value) {
            (Space::Dict(d), Value::Dict(v)) => {
                if !d.entries().keys().eq(v.keys()) {
                    let want: Vec<&String> = d.entries().keys().collect();
                    let got: Vec<&String> = v.keys().collect();
                    return Err(fail(format!("expected Dict keys {want:?}, got {got:?}")));
                }
                d.entries()
                    .iter()
                    .zip(v.values())
                    .try_for_each(|((k, s), x)| s.check_at(&KeyPath::Key(key, k), x))
            }
            (Space::Tuple(t), Value::Tuple(v)) => {
                if t.items().len() != v.len() {
                    return Err(fail(format!(
                        "expected a Tuple of {} entries, got {}",
                        t.items().len(),
                        v.len()
                    )));
                }
                t.items()
                    .iter()
                    .zip(v)
                    .enumerate()
                    .try_for_each(|(i, (s, x))| s.check_at(&KeyPath::Index(key, i), x))
            }
            (Space::Dict(_) | Space::Tuple(_), other) => Err(fail(format!(
                "expected a {}, got {}",
                self.kind_name(),
                other.kind_name()
            ))),
            (leaf, other) => {
                let want = leaf.dtype().unwrap_or(Dtype::Bool);
                if other.dtype() != Some(want) {
                    return Err(fail(format!(
                        "expected dtype {want} ({}), got {}",
                        leaf.describe(),
                        other.kind_name()
                    )));
                }
                let shape = with_array!(other, a => a.shape(), container => &[][..]);
                check_shape(leaf, shape).map_err(fail)?;
                check_bounds(leaf, other).map_err(fail)
            }
        }
    }
}

/// Where a check is in a nested value: a chain of borrowed segments, so that descending
/// costs nothing and the flat key is built only for an error.
enum KeyPath<'a> {
    /// The value itself.
    Root,
    /// A Dict entry under a parent.
    Key(&'a KeyPath<'a>, &'a str),
    /// A Tuple item under a parent.
    Index(&'a KeyPath<'a>, usize),
}

impl KeyPath<'_> {
    /// The flat key (`/a/_T0_`; `""` for the root).
    fn render(&self) -> String {
        match self {
            KeyPath::Root => String::new(),
            KeyPath::Key(parent, k) => flat_key::join(&parent.render(), k),
            KeyPath::Index(parent, i) => flat_key::join(&parent.render(), &flat_key::tuple_segment(*i)),
        }
    }
}

fn check_shape(space: &Space, got: &[usize]) -> std::result::Result<(), String> {
    let ranks = space.ranks().unwrap_or_default();
    let core = space.shape().unwrap_or(&[]);
    let extra = ranks.count();
    if got.len() == extra + core.len() && got[extra..] == *core {
        return Ok(());
    }
    let names: Vec<String> = ranks
        .order()
        .into_iter()
        .map(|r| format!("{r:?}").to_lowercase())
        .chain(core.iter().map(usize::to_string))
        .collect();
    Err(format!("expected shape [{}], got {got:?}", names.join(", ")))
}

/// Where element `flat_index` of an array of `shape` sits, as `[i, j, ...]`.
fn position(shape: &[usize], mut flat_index: usize) -> Vec<usize> {
    let mut pos = vec![0; shape.len()];
    for (p, &d) in pos.iter_mut().zip(shape).rev() {
        if d > 0 {
            *p = flat_index % d;
            flat_index /= d;
        }
    }
    pos
}

fn check_bounds(space: &Space, value: &Value) -> std::result::Result<(), String> {
    let shape = value.shape().unwrap_or(&[]);
    let per_item = space.flat_dim().max(1);
    let out_of =
        |i: usize, shown: String, bound: String| Err(format!("element {:?} = {shown} {bound}", position(shape, i)));
    match (space, value) {
        (Space::Int(b), _) => {
            let (low, high) = b.inclusive_range();
            let bad = match value {
                // Every byte fits bounds that cover 0..=255: skip the scan (image frames).
                Value::Uint8(_) if low <= 0 && high >= 255 => None,
                Value::Uint8(a) => first_outside(a.data(), low, high),
                Value::Int32(a) => first_outside(a.data(), low, high),
                Value::Int64(a) => first_outside(a.data(), low, high),
                _ => None,
            };
            match bad {
                Some((i, x)) if x < low => out_of(i, x.to_string(), format!("is below low {low}")),
                Some((i, x)) => out_of(
                    i,
                    x.to_string(),
                    format!("is not below high {} (high is exclusive)", high + 1),
                ),
                None => Ok(()),
            }
        }
        (Space::Float(b), _) => {
            let check = |i: usize, x: f64, low: f64, high: f64| {
                if x.is_nan() {
                    out_of(i, "NaN".into(), "is not a number".into())
                } else if x < low {
                    out_of(i, x.to_string(), format!("is below low {low}"))
                } else if x > high {
                    out_of(i, x.to_string(), format!("is above high {high}"))
                } else {
                    Ok(())
                }
            };
            match value {
                // Bounds given as f64 are compared at f32 precision for f32 data, so that a bound
                // such as 0.1 admits the f32 nearest to it.
                Value::Float32(a) => a.data().iter().enumerate().try_for_each(|(i, &x)| {
                    let (l, h) = b.bounds_of(i % per_item);
                    check(i, x as f64, l as f32 as f64, h as f32 as f64)
                }),
                Value::Float64(a) => a.data().iter().enumerate().try_for_each(|(i, &x)| {
                    let (l, h) = b.bounds_of(i % per_item);
                    check(i, x, l, h)
                }),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The first element outside `low..=high`, with its index.
fn first_outside<T: Copy + Into<i64>>(data: &[T], low: i64, high: i64) -> Option<(usize, i64)> {
    // A pass without early exit first, which vectorises: nearly every batch is inside its
    // bounds (the search alone was a fiftieth of a MinAtar DQN update, over its two boards).
    let inside = data.iter().fold(true, |ok, &x| {
        let x: i64 = x.into();
        ok & (low <= x) & (x <= high)
    });
    if inside {
        return None;
    }
    data.iter()
        .map(|&x| x.into())
        .enumerate()
        .find(|&(_, x)| x < low || x > high)
}
