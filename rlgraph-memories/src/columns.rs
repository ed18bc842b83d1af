//! `Columns`: records of a nested space stored column by column (one flat vector per flat
//! key), so that inserting and gathering a batch are a few slice copies, not a walk over
//! nested values per record.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, Dtype, Space, Value};
use rlgraph_core::{HostData, HostTensor, SavedState};

use crate::error::{MemoryError, Result};

/// One leaf's storage: every record's elements, back to back.
#[derive(Clone, Debug, PartialEq)]
enum Column {
    Bool(Vec<bool>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Uint8(Vec<u8>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
}

/// Runs `$body` with `$v` bound to the vector of any column, and `$wrap` to its Value variant.
macro_rules! with_column {
    ($col:expr, $v:ident, $wrap:ident => $body:expr) => {
        match $col {
            Column::Bool($v) => {
                let $wrap = Value::Bool;
                $body
            }
            Column::Int32($v) => {
                let $wrap = Value::Int32;
                $body
            }
            Column::Int64($v) => {
                let $wrap = Value::Int64;
                $body
            }
            Column::Uint8($v) => {
                let $wrap = Value::Uint8;
                $body
            }
            Column::Float32($v) => {
                let $wrap = Value::Float32;
                $body
            }
            Column::Float64($v) => {
                let $wrap = Value::Float64;
                $body
            }
        }
    };
}

/// A batch that passed `Columns::check_batch`: its record count and its leaves in column
/// order (flattened once, for the check and the write).
pub(crate) struct Checked<'a> {
    /// The number of records.
    pub(crate) records: usize,
    leaves: Vec<&'a Value>,
}

/// Column storage for up to `capacity` records of one record space.
#[derive(Clone, Debug)]
pub(crate) struct Columns {
    name: String,
    record_space: Space,
    batch_space: Space,
    keys: Vec<String>,
    shapes: Vec<Vec<usize>>,
    widths: Vec<usize>,
    columns: Vec<Column>,
    capacity: usize,
    /// How many record slots hold data (grows to `capacity`, then stays).
    filled: usize,
}

impl Columns {
    /// Storage for `capacity` records of `space` (any batch rank on it is ignored).
    pub(crate) fn new(name: &str, space: &Space, capacity: usize) -> Result<Self> {
        let unsupported = |reason: String| MemoryError::UnsupportedSpace {
            memory: name.into(),
            reason,
        };
        if capacity == 0 {
            return Err(unsupported("capacity must be at least 1".into()));
        }
        let record_space = space.with_batch_rank(false);
        let mut keys = vec![];
        let mut shapes = vec![];
        let mut widths = vec![];
        let mut columns = vec![];
        for (key, leaf) in record_space.flatten() {
            if leaf.has_time_rank() {
                return Err(unsupported(format!(
                    "{key} has a time rank; store one record per time step"
                )));
            }
            let shape = leaf.shape().unwrap_or(&[]).to_vec();
            columns.push(match leaf.dtype() {
                Some(Dtype::Bool) => Column::Bool(vec![]),
                Some(Dtype::Int32) => Column::Int32(vec![]),
                Some(Dtype::Int64) => Column::Int64(vec![]),
                Some(Dtype::Uint8) => Column::Uint8(vec![]),
                Some(Dtype::Float32) => Column::Float32(vec![]),
                Some(Dtype::Float64) => Column::Float64(vec![]),
                other => {
                    return Err(unsupported(format!(
                        "{key} has element type {other:?}, which cannot be stored"
                    )))
                }
            });
            widths.push(shape.iter().product());
            shapes.push(shape);
            keys.push(key);
        }
        Ok(Columns {
            name: name.into(),
            batch_space: record_space.with_batch_rank(true),
            record_space,
            keys,
            shapes,
            widths,
            columns,
            capacity,
            filled: 0,
        })
    }

    /// The space of one record.
    pub(crate) fn record_space(&self) -> &Space {
        &self.record_space
    }

    /// `batch` checked against the record space with a batch rank; every leaf must hold the
    /// same number of records.
    pub(crate) fn check_batch<'a>(&self, batch: &'a Value) -> Result<Checked<'a>> {
        let mismatch = |reason: String| MemoryError::RecordMismatch {
            memory: self.name.clone(),
            reason,
        };
        self.batch_space.check(batch).map_err(|e| mismatch(e.to_string()))?;
        let leaves = batch.leaf_values();
        let records = |leaf: &Value| leaf.shape().and_then(|s| s.first().copied()).unwrap_or(0);
        let first = leaves.first().map(|leaf| records(leaf));
        if let Some(m) = first {
            if leaves.iter().any(|leaf| records(leaf) != m) {
                let keyed = batch.flatten();
                let first_key = keyed.first().map_or("", |(k, _)| k.as_str());
                let (key, leaf) = keyed
                    .iter()
                    .find(|(_, leaf)| records(leaf) != m)
                    .map_or(("", 0), |(k, l)| (k.as_str(), records(l)));
                return Err(mismatch(format!(
                    "{first_key} holds {m} records but {key} holds {leaf}; every leaf needs the same batch size"
                )));
            }
        }
        Ok(Checked {
            records: first.unwrap_or(0),
            leaves,
        })
    }

    /// Writes the records of a checked batch to the ring slots starting at `start`.
    pub(crate) fn write(&mut self, start: usize, batch: &Checked<'_>) {
        let n = batch.records;
        for (col, (leaf, &width)) in self.columns.iter_mut().zip(batch.leaves.iter().zip(&self.widths)) {
            let capacity = self.capacity;
            match (col, *leaf) {
                (Column::Bool(d), Value::Bool(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Int32(d), Value::Int32(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Int64(d), Value::Int64(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Uint8(d), Value::Uint8(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Float32(d), Value::Float32(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Float64(d), Value::Float64(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                // check_batch has matched every dtype already.
                _ => {}
            }
        }
        self.filled = self.filled.max((start + n).min(self.capacity));
        if start + n > self.capacity {
            self.filled = self.capacity;
        }
    }

    /// The records at `indices` as one batched value of the record space.
    pub(crate) fn gather(&self, indices: &[usize]) -> Value {
        let mut leaves = self
            .columns
            .iter()
            .zip(self.shapes.iter().zip(&self.widths))
            .map(|(col, (shape, &width))| {
                let mut out_shape = Vec::with_capacity(shape.len() + 1);
                out_shape.push(indices.len());
                out_shape.extend_from_slice(shape);
                with_column!(col, v, wrap => {
                    let mut out = Vec::with_capacity(indices.len() * width);
                    // Rows of the small widths of classic-control states are copied with the
                    // width known when compiled: a few moves each, where a slice of
                    // run-time length is a call to `memmove` (a quarter of a sample's time).
                    match width {
                        1 => out.extend(indices.iter().map(|&i| v[i])),
                        2 => gather_rows::<_, 2>(v, indices, &mut out),
                        3 => gather_rows::<_, 3>(v, indices, &mut out),
                        4 => gather_rows::<_, 4>(v, indices, &mut out),
                        6 => gather_rows::<_, 6>(v, indices, &mut out),
                        8 => gather_rows::<_, 8>(v, indices, &mut out),
                        _ => {
                            for &i in indices {
                                out.extend_from_slice(&v[i * width..(i + 1) * width]);
                            }
                        }
                    }
                    wrap(Array::new(out_shape, out).unwrap_or_else(|_| unreachable!("sized to the shape")))
                })
            });
        nest(&self.record_space, &mut leaves)
    }

    /// The state as host tensors, one per flat key (bools as bytes, int32 as int64).
    pub(crate) fn save(&self, prefix: &str, state: &mut SavedState) {
        for ((key, col), shape) in self.keys.iter().zip(&self.columns).zip(&self.shapes) {
            let mut full = vec![self.filled];
            full.extend_from_slice(shape);
            let data = match col {
                Column::Bool(v) => HostData::U8(v.iter().map(|&b| b as u8).collect()),
                Column::Int32(v) => HostData::I64(v.iter().map(|&x| x as i64).collect()),
                Column::Int64(v) => HostData::I64(v.clone()),
                Column::Uint8(v) => HostData::U8(v.clone()),
                Column::Float32(v) => HostData::F32(v.clone()),
                Column::Float64(v) => HostData::F64(v.clone()),
            };
            if let Ok(t) = HostTensor::new(full, data) {
                state.tensors.insert(format!("{prefix}{key}"), t);
            }
        }
    }

    /// Columns rebuilt from saved tensors holding `filled` records; fails without side effects.
    pub(crate) fn restored(&self, prefix: &str, state: &SavedState, filled: usize) -> Result<Columns> {
        let bad = |reason: String| MemoryError::BadState {
            memory: self.name.clone(),
            reason,
        };
        if filled > self.capacity {
            return Err(bad(format!("{filled} records saved, capacity is {}", self.capacity)));
        }
        let mut next = self.clone();
        next.filled = filled;
        let tensors: &BTreeMap<String, HostTensor> = &state.tensors;
        for ((key, col), (shape, &width)) in next
            .keys
            .iter()
            .zip(next.columns.iter_mut())
            .zip(self.shapes.iter().zip(&self.widths))
        {
            let name = format!("{prefix}{key}");
            let t = tensors
                .get(&name)
                .ok_or_else(|| bad(format!("tensor {name} is missing")))?;
            let mut want = vec![filled];
            want.extend_from_slice(shape);
            if t.shape != want || t.data.len() != filled * width {
                return Err(bad(format!("tensor {name} has shape {:?}, expected {want:?}", t.shape)));
            }
            let ok = match (col, &t.data) {
                (Column::Bool(v), HostData::U8(d)) => {
                    if let Some(b) = d.iter().find(|&&b| b > 1) {
                        return Err(bad(format!("tensor {name} holds {b}, which is not a flag (0 or 1)")));
                    }
                    *v = d.iter().map(|&b| b != 0).collect();
                    true
                }
                (Column::Int32(v), HostData::I64(d)) => {
                    *v = d
                        .iter()
                        .map(|&x| i32::try_from(x))
                        .collect::<std::result::Result<_, _>>()
                        .map_err(|_| bad(format!("tensor {name} holds a value beyond int32")))?;
                    true
                }
                (Column::Int64(v), HostData::I64(d)) => {
                    *v = d.clone();
                    true
                }
                (Column::Uint8(v), HostData::U8(d)) => {
                    *v = d.clone();
                    true
                }
                (Column::Float32(v), HostData::F32(d)) => {
                    *v = d.clone();
                    true
                }
                (Column::Float64(v), HostData::F64(d)) => {
                    *v = d.clone();
                    true
                }
                _ => false,
            };
            if !ok {
                return Err(bad(format!("tensor {name} has element type {:?}", t.dtype())));
            }
        }
        // Stored records must be records of the space (actions within bounds, finite where
        // bounded), or a restored memory would feed the learner what no insert could.
        let all: Vec<usize> = (0..filled).collect();
        self.batch_space
            .check(&next.gather(&all))
            .map_err(|e| bad(format!("a stored record is not in the record space: {e}")))?;
        Ok(next)
    }
}

/// Copies `n` records of `width` elements from `src` into ring slots `start..start+n` of
/// `dst` (mod `capacity`), appending while `dst` is still growing.
fn ring_copy<T: Copy + Default>(dst: &mut Vec<T>, src: &[T], start: usize, n: usize, width: usize, capacity: usize) {
    // Only the last `capacity` records of an oversized batch survive; skip the rest.
    let skip = n.saturating_sub(capacity);
    let mut slot = (start + skip) % capacity;
    let mut row = skip;
    while row < n {
        let run = (n - row).min(capacity - slot);
        let chunk = &src[row * width..(row + run) * width];
        let at = slot * width;
        if at > dst.len() {
            // An oversized first batch starts past the end of a growing column.
            dst.resize(capacity * width, T::default());
        }
        if at == dst.len() {
            dst.extend_from_slice(chunk);
        } else {
            dst[at..at + chunk.len()].copy_from_slice(chunk);
        }
        row += run;
        slot = (slot + run) % capacity;
    }
}

/// Nests leaves (in flat-key order) into the structure of `space`, without parsing keys.
fn nest(space: &Space, leaves: &mut impl Iterator<Item = Value>) -> Value {
    match space {
        Space::Dict(d) => Value::Dict(d.entries().iter().map(|(k, s)| (k.clone(), nest(s, leaves))).collect()),
        Space::Tuple(t) => Value::Tuple(t.items().iter().map(|s| nest(s, leaves)).collect()),
        _ => leaves.next().unwrap_or_else(|| Value::Dict(BTreeMap::new())),
    }
}

/// Appends rows `indices` of a column `W` values wide to `out`.
fn gather_rows<T: Copy, const W: usize>(column: &[T], indices: &[usize], out: &mut Vec<T>) {
    let (rows, _) = column.as_chunks::<W>();
    for &i in indices {
        out.extend_from_slice(&rows[i]);
    }
}
