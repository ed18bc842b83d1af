//! `Columns`: records of a nested space stored column by column (one flat vector per flat
//! key), so that inserting and gathering a batch are a few slice copies, not a walk over
//! nested values per record.

use std::collections::BTreeMap;

use rlgraph_core::spaces::{Array, Dtype, Space, Value};
use rlgraph_core::{HostData, HostTensor, SavedState};

use crate::error::{MemoryError, Result};
use crate::frames::{FramePool, FrameStack};

/// One leaf's storage: every record's elements, back to back.
#[derive(Clone, Debug, PartialEq)]
enum Column {
    Bool(Vec<bool>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Uint8(Vec<u8>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    /// Stacks of frames held in the shared [`FramePool`]: the frame ids of each record.
    Frames(Vec<u32>),
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
            // Frame columns have no vector of elements; their callers take them apart first.
            Column::Frames(_) => Value::Dict(BTreeMap::new()),
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

/// The frame pool of a memory whose stacked observations are stored frame by frame, and
/// how its stacks split.
#[derive(Clone, Debug)]
struct FrameStore {
    stack: FrameStack,
    /// The frames' element type, and bytes per element.
    dtype: Dtype,
    elem: usize,
    pool: FramePool,
}

/// Column storage for up to `capacity` records of one record space.
#[derive(Clone, Debug)]
pub(crate) struct Columns {
    name: String,
    record_space: Space,
    batch_space: Space,
    keys: Vec<String>,
    leaf_spaces: Vec<Space>,
    shapes: Vec<Vec<usize>>,
    widths: Vec<usize>,
    columns: Vec<Column>,
    frames: Option<FrameStore>,
    capacity: usize,
    /// How many record slots hold data (grows to `capacity`, then stays).
    filled: usize,
}

/// Bytes per element of the dtypes a frame pool stores (those a checkpoint tensor holds as
/// they are).
fn frame_elem(dtype: Dtype) -> Option<usize> {
    match dtype {
        Dtype::Uint8 => Some(1),
        Dtype::Float32 => Some(4),
        Dtype::Float64 | Dtype::Int64 => Some(8),
        _ => None,
    }
}

/// The bytes of a leaf of a frame dtype.
fn leaf_bytes(leaf: &Value) -> Option<&[u8]> {
    match leaf {
        Value::Uint8(a) => Some(a.data()),
        Value::Float32(a) => Some(bytemuck::cast_slice(a.data())),
        Value::Float64(a) => Some(bytemuck::cast_slice(a.data())),
        Value::Int64(a) => Some(bytemuck::cast_slice(a.data())),
        _ => None,
    }
}

/// A leaf of `dtype` and `shape` from its bytes (`bytes` holds exactly its elements).
fn leaf_from_bytes(dtype: Dtype, shape: Vec<usize>, bytes: Vec<u8>) -> Value {
    fn typed<T: bytemuck::Pod + Default>(bytes: &[u8]) -> Vec<T> {
        let mut v = vec![T::default(); bytes.len() / std::mem::size_of::<T>()];
        bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
        v
    }
    fn sized<T>(a: rlgraph_core::spaces::Result<Array<T>>) -> Array<T> {
        a.unwrap_or_else(|_| unreachable!("the bytes are sized to the shape"))
    }
    match dtype {
        Dtype::Float32 => Value::Float32(sized(Array::new(shape, typed::<f32>(&bytes)))),
        Dtype::Float64 => Value::Float64(sized(Array::new(shape, typed::<f64>(&bytes)))),
        Dtype::Int64 => Value::Int64(sized(Array::new(shape, typed::<i64>(&bytes)))),
        _ => Value::Uint8(sized(Array::new(shape, bytes))),
    }
}

/// A saved tensor's data as the bytes of a frame pool of `dtype`, if it is of that type.
fn host_bytes(data: &HostData, dtype: Dtype) -> Option<&[u8]> {
    match (data, dtype) {
        (HostData::U8(d), Dtype::Uint8) => Some(d),
        (HostData::F32(d), Dtype::Float32) => Some(bytemuck::cast_slice(d)),
        (HostData::F64(d), Dtype::Float64) => Some(bytemuck::cast_slice(d)),
        (HostData::I64(d), Dtype::Int64) => Some(bytemuck::cast_slice(d)),
        _ => None,
    }
}

/// Bytes as saved-tensor data of `dtype`.
fn bytes_to_host(dtype: Dtype, bytes: Vec<u8>) -> HostData {
    match leaf_from_bytes(dtype, vec![bytes.len() / frame_elem(dtype).unwrap_or(1)], bytes) {
        Value::Float32(a) => HostData::F32(a.data().to_vec()),
        Value::Float64(a) => HostData::F64(a.data().to_vec()),
        Value::Int64(a) => HostData::I64(a.data().to_vec()),
        Value::Uint8(a) => HostData::U8(a.data().to_vec()),
        _ => HostData::U8(vec![]),
    }
}

impl Columns {
    /// Storage for `capacity` records of `space` (any batch rank on it is ignored); the
    /// leaves at the flat keys of `frames`, if given, are stacks of frames split as its
    /// `FrameStack` says, each frame stored once in a pool they share.
    pub(crate) fn new(
        name: &str,
        space: &Space,
        capacity: usize,
        frames: Option<(&FrameStack, &[String])>,
    ) -> Result<Self> {
        let unsupported = |reason: String| MemoryError::UnsupportedSpace {
            memory: name.into(),
            reason,
        };
        if capacity == 0 {
            return Err(unsupported("capacity must be at least 1".into()));
        }
        let record_space = space.with_batch_rank(false);
        let mut keys = vec![];
        let mut leaf_spaces = vec![];
        let mut shapes = vec![];
        let mut widths = vec![];
        let mut columns = vec![];
        // The frame pool's element type and frame length, from the first frame column.
        let mut pool: Option<(Dtype, usize)> = None;
        for (key, leaf) in record_space.flatten() {
            if leaf.has_time_rank() {
                return Err(unsupported(format!(
                    "{key} has a time rank; store one record per time step"
                )));
            }
            let shape = leaf.shape().unwrap_or(&[]).to_vec();
            let stacked = frames.filter(|(_, ks)| ks.iter().any(|k| normalized(k) == key));
            columns.push(match (stacked, leaf.dtype()) {
                (Some((stack, _)), Some(dtype)) => {
                    if frame_elem(dtype).is_none() || !matches!(leaf, Space::Int(_) | Space::Float(_)) {
                        return Err(unsupported(format!(
                            "{key} has element type {dtype:?}; frames are stored for uint8, int64, float32 or float64 stacks"
                        )));
                    }
                    let len = stack.frame_len(&shape).map_err(|e| unsupported(format!("{key}: {e}")))?;
                    match pool {
                        Some(p) if p != (dtype, len) => {
                            return Err(unsupported(format!(
                                "{key} holds frames of {len} {dtype:?} elements, but the other stacked leaves hold frames of {} {:?}; one pool needs one frame type",
                                p.1, p.0
                            )))
                        }
                        _ => pool = Some((dtype, len)),
                    }
                    Column::Frames(vec![])
                }
                (_, Some(Dtype::Bool)) => Column::Bool(vec![]),
                (_, Some(Dtype::Int32)) => Column::Int32(vec![]),
                (_, Some(Dtype::Int64)) => Column::Int64(vec![]),
                (_, Some(Dtype::Uint8)) => Column::Uint8(vec![]),
                (_, Some(Dtype::Float32)) => Column::Float32(vec![]),
                (_, Some(Dtype::Float64)) => Column::Float64(vec![]),
                (_, other) => {
                    return Err(unsupported(format!(
                        "{key} has element type {other:?}, which cannot be stored"
                    )))
                }
            });
            widths.push(shape.iter().product());
            shapes.push(shape);
            leaf_spaces.push(leaf.clone());
            keys.push(key);
        }
        let frames = match (frames, pool) {
            (Some((stack, _)), Some((dtype, len))) => {
                let elem = frame_elem(dtype).unwrap_or(1);
                Some(FrameStore {
                    stack: *stack,
                    dtype,
                    elem,
                    pool: FramePool::new(len * elem, capacity),
                })
            }
            (Some((_, wanted)), None) => {
                return Err(unsupported(format!(
                    "frame stacks were asked for at {wanted:?}, but the record space has no such leaf (its leaves: {keys:?})"
                )))
            }
            _ => None,
        };
        Ok(Columns {
            name: name.into(),
            batch_space: record_space.with_batch_rank(true),
            record_space,
            keys,
            leaf_spaces,
            shapes,
            widths,
            columns,
            frames,
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
        let capacity = self.capacity;
        // Only the last `capacity` records of an oversized batch survive; skip the rest.
        let skip = n.saturating_sub(capacity);
        // Every frame column's new frames are interned before any old one is released, so
        // a frame that a new record shares with an overwritten one is never dropped and
        // stored again.
        let mut interned: Vec<Vec<u32>> = vec![];
        if let Some(store) = &mut self.frames {
            for (col, leaf) in self.columns.iter().zip(&batch.leaves) {
                if let (Column::Frames(_), Some(bytes)) = (col, leaf_bytes(leaf)) {
                    let stack_bytes = store.pool.frame_bytes() * store.stack.frames;
                    interned.push(
                        store
                            .pool
                            .intern_stacks(&store.stack, store.elem, &bytes[skip * stack_bytes..]),
                    );
                }
            }
        }
        let mut interned = interned.into_iter();
        for (col, (leaf, &width)) in self.columns.iter_mut().zip(batch.leaves.iter().zip(&self.widths)) {
            match (col, *leaf) {
                (Column::Bool(d), Value::Bool(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Int32(d), Value::Int32(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Int64(d), Value::Int64(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Uint8(d), Value::Uint8(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Float32(d), Value::Float32(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Float64(d), Value::Float64(a)) => ring_copy(d, a.data(), start, n, width, capacity),
                (Column::Frames(ids), _) => {
                    let (Some(store), Some(new)) = (&mut self.frames, interned.next()) else {
                        continue;
                    };
                    let k = store.stack.frames;
                    // An oversized first batch starts past the end of a growing column; it
                    // then fills every slot, so no placeholder survives it.
                    let first = (start + skip) % capacity;
                    if first * k > ids.len() {
                        ids.resize(capacity * k, u32::MAX);
                    }
                    for (row, stack) in new.chunks_exact(k).enumerate() {
                        let at = (first + row) % capacity * k;
                        if at == ids.len() {
                            ids.extend_from_slice(stack);
                            continue;
                        }
                        for (old, &id) in ids[at..at + k].iter_mut().zip(stack) {
                            if *old != u32::MAX {
                                store.pool.release(*old);
                            }
                            *old = id;
                        }
                    }
                }
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
                if let (Column::Frames(ids), Some(store)) = (col, &self.frames) {
                    return gather_stacks(store, ids, indices, width, out_shape);
                }
                gather_column(col, width, indices, out_shape)
            });
        nest(&self.record_space, &mut leaves)
    }

    /// Bytes this storage has reserved for records: every column and the frame pool.
    pub(crate) fn reserved_bytes(&self) -> usize {
        let columns: usize = self
            .columns
            .iter()
            .map(|col| match col {
                Column::Bool(v) => v.capacity(),
                Column::Uint8(v) => v.capacity(),
                Column::Int32(v) => v.capacity() * 4,
                Column::Frames(v) => v.capacity() * 4,
                Column::Float32(v) => v.capacity() * 4,
                Column::Int64(v) => v.capacity() * 8,
                Column::Float64(v) => v.capacity() * 8,
            })
            .sum();
        columns + self.frames.as_ref().map_or(0, |f| f.pool.reserved_bytes())
    }

    /// The state as host tensors, one per flat key (bools as bytes, int32 as int64). A
    /// frame column saves its stacks' frame numbers (`KEY#frame_ids`, `[records, frames]`),
    /// and the frames they refer to go once into `#frames` (`[frames, frame elements]`).
    pub(crate) fn save(&self, prefix: &str, state: &mut SavedState) {
        let packed = self.frames.as_ref().map(|f| (f, f.pool.packed()));
        if let Some((store, (data, _))) = &packed {
            let len = store.pool.frame_bytes() / store.elem;
            let shape = vec![data.len() / store.pool.frame_bytes().max(1), len];
            if let Ok(t) = HostTensor::new(shape, bytes_to_host(store.dtype, data.clone())) {
                state.tensors.insert(format!("{prefix}#frames"), t);
            }
        }
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
                Column::Frames(ids) => {
                    let Some((store, (_, renumber))) = &packed else {
                        continue;
                    };
                    let k = store.stack.frames;
                    let data = HostData::I64(
                        ids.iter()
                            .map(|id| renumber.get(id).map_or(-1, |&n| i64::from(n)))
                            .collect(),
                    );
                    if let Ok(t) = HostTensor::new(vec![self.filled, k], data) {
                        state.tensors.insert(format!("{prefix}{key}#frame_ids"), t);
                    }
                    continue;
                }
            };
            if let Ok(t) = HostTensor::new(full, data) {
                state.tensors.insert(format!("{prefix}{key}"), t);
            }
        }
    }

    /// Columns rebuilt from saved tensors holding `filled` records; fails without side effects.
    ///
    /// A frame column takes its frames from `KEY#frame_ids` and `#frames`, or, from a
    /// checkpoint that holds whole stacks under `KEY` (a memory saved before it stored
    /// frames once), splits those stacks into frames, when their element type is the one
    /// this memory stores.
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
        // Frame columns: ids into the saved pool, or whole stacks to split after it is built.
        let mut saved_ids: Vec<u32> = vec![];
        let mut whole: Vec<(usize, &[u8])> = vec![];
        let pool_frames = match &self.frames {
            Some(store) => saved_pool(tensors, prefix, store).map_err(&bad)?,
            None => None,
        };
        for (c, ((key, col), (shape, &width))) in next
            .keys
            .iter()
            .zip(next.columns.iter_mut())
            .zip(self.shapes.iter().zip(&self.widths))
            .enumerate()
        {
            let name = format!("{prefix}{key}");
            let mut want = vec![filled];
            want.extend_from_slice(shape);
            if let (Column::Frames(ids), Some(store)) = (&mut *col, &self.frames) {
                let k = store.stack.frames;
                let id_name = format!("{name}#frame_ids");
                if let Some(t) = tensors.get(&id_name) {
                    let (frames, _) = pool_frames
                        .as_ref()
                        .ok_or_else(|| bad(format!("tensor {prefix}#frames is missing (needed by {id_name})")))?;
                    let count = frames.len() / store.pool.frame_bytes().max(1);
                    let parsed = match (&t.data, t.shape == [filled, k]) {
                        (HostData::I64(d), true) => d
                            .iter()
                            .map(|&x| u32::try_from(x).ok().filter(|&x| (x as usize) < count))
                            .collect::<Option<Vec<u32>>>(),
                        _ => None,
                    };
                    *ids = parsed.ok_or_else(|| {
                        bad(format!(
                            "tensor {id_name} must be [{filled}, {k}] int64 frame numbers below {count}, got shape {:?} of {:?}",
                            t.shape,
                            t.dtype()
                        ))
                    })?;
                    saved_ids.extend_from_slice(ids);
                    continue;
                }
                let t = tensors
                    .get(&name)
                    .ok_or_else(|| bad(format!("tensors {id_name} and {name} are missing")))?;
                if t.shape != want {
                    return Err(bad(format!("tensor {name} has shape {:?}, expected {want:?}", t.shape)));
                }
                let bytes = host_bytes(&t.data, store.dtype).ok_or_else(|| {
                    bad(format!(
                        "tensor {name} holds whole stacks of element type {:?}; this memory stores frames of {:?}, so it cannot take them",
                        t.dtype(),
                        store.dtype
                    ))
                })?;
                whole.push((c, bytes));
                continue;
            }
            let t = tensors
                .get(&name)
                .ok_or_else(|| bad(format!("tensor {name} is missing")))?;
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
        if let Some(store) = &mut next.frames {
            let data = pool_frames.map(|(data, _)| data).unwrap_or_default();
            store.pool = FramePool::from_packed(store.pool.frame_bytes(), self.capacity, data, &saved_ids);
            for (c, bytes) in whole {
                if let Column::Frames(ids) = &mut next.columns[c] {
                    *ids = store.pool.intern_stacks(&store.stack, store.elem, bytes);
                }
            }
        }
        // Stored records must be records of the space (actions within bounds, finite where
        // bounded), or a restored memory would feed the learner what no insert could. Stacks
        // are checked frame by frame: a frame is in the space when a stack of it is.
        let all: Vec<usize> = (0..filled).collect();
        for (c, (key, leaf)) in self.keys.iter().zip(&self.leaf_spaces).enumerate() {
            let checked = match (&next.columns[c], &next.frames) {
                (Column::Frames(_), Some(store)) => check_frames(store, leaf),
                (Column::Frames(_), None) => Ok(()),
                (col, _) => {
                    let mut shape = vec![filled];
                    shape.extend_from_slice(&self.shapes[c]);
                    let column = gather_column(col, self.widths[c], &all, shape);
                    leaf.with_batch_rank(true).check(&column).map_err(|e| e.to_string())
                }
            };
            checked.map_err(|e| bad(format!("a stored record is not in the record space at {key}: {e}")))?;
        }
        Ok(next)
    }
}

/// Rows `indices` of a column of records `width` elements wide (not a frame column), as a
/// leaf of shape `out_shape`.
fn gather_column(col: &Column, width: usize, indices: &[usize], out_shape: Vec<usize>) -> Value {
    with_column!(col, v, wrap => {
        let mut out = Vec::with_capacity(indices.len() * width);
        // Rows of the small widths of classic-control states are copied with the width known
        // when compiled: a few moves each, where a slice of run-time length is a call to
        // `memmove` (a quarter of a sample's time).
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
}

/// Normalizes a flat key to its leading-slash form (`states` and `/states` name one leaf).
fn normalized(key: &str) -> String {
    if key.starts_with('/') {
        key.to_string()
    } else {
        format!("/{key}")
    }
}

/// The saved frame pool (`PREFIX#frames`, packed frames) as bytes, and its frame count;
/// `None` when the checkpoint has none.
fn saved_pool(
    tensors: &BTreeMap<String, HostTensor>,
    prefix: &str,
    store: &FrameStore,
) -> std::result::Result<Option<(Vec<u8>, usize)>, String> {
    let name = format!("{prefix}#frames");
    let Some(t) = tensors.get(&name) else {
        return Ok(None);
    };
    let len = store.pool.frame_bytes() / store.elem;
    match (host_bytes(&t.data, store.dtype), t.shape.as_slice()) {
        (Some(bytes), &[n, l]) if l == len && bytes.len() == n * store.pool.frame_bytes() => {
            Ok(Some((bytes.to_vec(), n)))
        }
        _ => Err(format!(
            "tensor {name} must be [frames, {len}] of {:?}, got shape {:?} of {:?}",
            store.dtype,
            t.shape,
            t.dtype()
        )),
    }
}

/// Whether every live frame of the pool is in `leaf` (the space of a whole stack).
fn check_frames(store: &FrameStore, leaf: &Space) -> std::result::Result<(), String> {
    // Bytes always fit bounds that cover every byte: skip the scan of the pool, as a check
    // of a uint8 value does.
    if let (Space::Int(b), Dtype::Uint8) = (leaf, store.dtype) {
        if b.low().is_none_or(|l| l <= 0) && b.high().is_none_or(|h| h >= 256) {
            return Ok(());
        }
    }
    let (data, _) = store.pool.packed();
    let fb = store.pool.frame_bytes().max(1);
    let shape = leaf.shape().unwrap_or(&[]).to_vec();
    for frame in data.chunks_exact(fb) {
        let mut stack = vec![0u8; fb * store.stack.frames];
        store
            .stack
            .join(&vec![frame; store.stack.frames], store.elem, &mut stack);
        leaf.check(&leaf_from_bytes(store.dtype, shape.clone(), stack))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The stacks of `indices` from a frame column, as a leaf of shape `out_shape`.
fn gather_stacks(store: &FrameStore, ids: &[u32], indices: &[usize], width: usize, out_shape: Vec<usize>) -> Value {
    let k = store.stack.frames;
    let stack_bytes = width * store.elem;
    let mut out = vec![0u8; indices.len() * stack_bytes];
    for (&i, dst) in indices.iter().zip(out.chunks_exact_mut(stack_bytes.max(1))) {
        store
            .pool
            .write_stack(&store.stack, store.elem, &ids[i * k..(i + 1) * k], dst);
    }
    leaf_from_bytes(store.dtype, out_shape, out)
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
