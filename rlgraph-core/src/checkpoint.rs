//! Checkpoints: every variable as a safetensors tensor named by its scope path, and the rest
//! of the executor's state (its RNG position, the format version) as JSON in the file's
//! safetensors metadata. One file, readable by any safetensors tool. Host state (replay
//! memories) rides along: its tensors under `#host/NAME/...`, its JSON under the metadata
//! key `host`. A CRC-32C over the metadata and every tensor's name, type, shape and bytes
//! (the metadata's `crc32c` field, itself counted as `00000000`) is checked before anything
//! is restored, and the file is written atomically (`atomic_file`), so a damaged or torn
//! checkpoint is refused, never half loaded. The metadata is one key, so that the same state
//! always gives the same bytes (safetensors writes several keys in hash order).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use safetensors::tensor::{Dtype as StDtype, SafeTensors, TensorView};

use crate::backend::{Backend, DType, HostData, HostTensor};
use crate::error::{CoreError, Result};
use crate::executor::GraphExecutor;
use crate::host_state::{check_each, load_checked, HostState, SavedState};
use crate::rng_state::{rng_from_json, rng_to_json};

const FORMAT: &str = "rlgraph-rs checkpoint 2";
/// The first format had no checksum; its files still load.
const FORMAT_WITHOUT_CHECKSUM: &str = "rlgraph-rs checkpoint 1";
/// The checksum's field in the metadata, as it starts in the JSON text.
const CHECKSUM_FIELD: &str = "\"crc32c\":\"";
/// What the checksum's 8 hex digits count as while the checksum is computed.
const CHECKSUM_PLACEHOLDER: &str = "00000000";
const HOST: &str = "#host/";

fn from_bytes(dtype: StDtype, bytes: &[u8]) -> Option<HostData> {
    fn chunks<const N: usize, T>(bytes: &[u8], f: fn([u8; N]) -> T) -> Option<Vec<T>> {
        if !bytes.len().is_multiple_of(N) {
            return None;
        }
        Some(
            bytes
                .chunks_exact(N)
                .map(|c| f(c.try_into().unwrap_or([0; N])))
                .collect(),
        )
    }
    Some(match dtype {
        StDtype::F32 => HostData::F32(chunks(bytes, f32::from_le_bytes)?),
        StDtype::F64 => HostData::F64(chunks(bytes, f64::from_le_bytes)?),
        StDtype::I64 => HostData::I64(chunks(bytes, i64::from_le_bytes)?),
        StDtype::U8 => HostData::U8(bytes.to_vec()),
        _ => return None,
    })
}

/// The CRC-32C of the metadata text and of every tensor (name, type, shape, bytes), in name
/// order, so that a flipped bit anywhere that matters changes it.
fn checksum<'a>(meta: &str, tensors: impl IntoIterator<Item = (&'a str, StDtype, &'a [usize], &'a [u8])>) -> u32 {
    let mut crc = crc32c::crc32c(meta.as_bytes());
    for (name, dtype, shape, data) in tensors {
        crc = crc32c::crc32c_append(crc, name.as_bytes());
        crc = crc32c::crc32c_append(crc, format!("\0{dtype:?}\0").as_bytes());
        for d in shape {
            crc = crc32c::crc32c_append(crc, &(*d as u64).to_le_bytes());
        }
        crc = crc32c::crc32c_append(crc, data);
    }
    crc
}

/// Whether every element of a float tensor is finite (integer data always is).
fn finite(data: &HostData) -> bool {
    match data {
        HostData::F32(v) => v.iter().all(|x| x.is_finite()),
        HostData::F64(v) => v.iter().all(|x| x.is_finite()),
        HostData::I64(_) | HostData::U8(_) => true,
    }
}

fn st_dtype(d: DType) -> StDtype {
    match d {
        DType::F32 => StDtype::F32,
        DType::F64 => StDtype::F64,
        DType::I64 => StDtype::I64,
        DType::U8 => StDtype::U8,
    }
}

impl<B: Backend> GraphExecutor<B> {
    /// Writes every variable and the executor's RNG position to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        self.save_with(path, &[])
    }

    /// Like `save`, and also the named host states (`name` must be unique and free of `/`).
    pub fn save_with(&self, path: impl AsRef<Path>, host: &[(&str, &dyn HostState)]) -> Result<()> {
        let mut state = rng_to_json(&self.rng);
        state["backend"] = B::NAME.into();
        write_checkpoint(path.as_ref(), self.variables()?, state, host)
    }

    /// Restores variables and RNG position from `path`. Everything is checked before anything
    /// is changed: on error the executor is as it was.
    pub fn restore(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.restore_with(path, &mut [])
    }

    /// Like `restore`, and also the named host states saved by `save_with`. Every host state
    /// is checked before anything (variables included) is changed.
    pub fn restore_with(&mut self, path: impl AsRef<Path>, host: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        let path = path.as_ref();
        let fail = |reason: String| CoreError::Checkpoint {
            path: path.display().to_string(),
            reason,
        };
        let Read {
            values,
            mut host_saved,
            state,
        } = read_checkpoint(path)?;
        let loads = check_host(host, &mut host_saved, &state, fail)?;
        let expected: Vec<&String> = self.store.infos().iter().map(|i| &i.path).collect();
        let missing: Vec<&&String> = expected.iter().filter(|p| !values.contains_key(**p)).collect();
        if !missing.is_empty() {
            return Err(fail(format!("variables missing from the checkpoint: {missing:?}")));
        }
        if let Some((name, _)) = values.iter().find(|(_, t)| !finite(&t.data)) {
            return Err(fail(format!(
                "variable '{name}' holds NaN or infinity: the run that wrote this checkpoint diverged, so its model is not usable"
            )));
        }
        let rng = rng_from_json(&state).map_err(fail)?;
        self.set_variables(&values)?;
        load_checked(host, loads)?;
        self.rng = rng;
        Ok(())
    }
}

/// Writes named host states alone (a replay shard's memory, with no graph beside it) in the
/// checkpoint format: atomically, with its checksum.
pub fn save_host_states(path: impl AsRef<Path>, host: &[(&str, &dyn HostState)]) -> Result<()> {
    write_checkpoint(path.as_ref(), BTreeMap::new(), serde_json::json!({}), host)
}

/// Restores named host states from a file written by [`save_host_states`] (or the host states
/// of any checkpoint). The file's checksum and every state are checked before any changes.
pub fn restore_host_states(path: impl AsRef<Path>, host: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
    let path = path.as_ref();
    let fail = |reason: String| CoreError::Checkpoint {
        path: path.display().to_string(),
        reason,
    };
    let Read {
        mut host_saved, state, ..
    } = read_checkpoint(path)?;
    let loads = check_host(host, &mut host_saved, &state, fail)?;
    load_checked(host, loads)
}

/// What a checkpoint file holds, its checksum verified.
struct Read {
    /// The variables by scope path.
    values: BTreeMap<String, HostTensor>,
    /// The host states' tensors by owner (their JSON is in `state["host"]`).
    host_saved: BTreeMap<String, SavedState>,
    /// The metadata.
    state: serde_json::Value,
}

/// Each target's saved state checked by the target; nothing changes.
fn check_host(
    host: &mut [(&str, &mut dyn HostState)],
    host_saved: &mut BTreeMap<String, SavedState>,
    state: &serde_json::Value,
    fail: impl Fn(String) -> CoreError,
) -> Result<Vec<SavedState>> {
    check_each(
        host,
        |name| {
            let meta = state["host"].get(name)?.clone();
            let mut saved = host_saved.remove(name).unwrap_or_default();
            saved.meta = meta;
            Some(saved)
        },
        fail,
    )
}

/// Writes `values` and the host states with the metadata `state` (format, host states and
/// checksum added) to `path`, atomically.
fn write_checkpoint(
    path: &Path,
    mut values: BTreeMap<String, HostTensor>,
    mut state: serde_json::Value,
    host: &[(&str, &dyn HostState)],
) -> Result<()> {
    let fail = |reason: String| CoreError::Checkpoint {
        path: path.display().to_string(),
        reason,
    };
    let mut host_meta = serde_json::Map::new();
    for (name, saved_state) in host {
        if name.contains('/') || host_meta.contains_key(*name) {
            return Err(fail(format!("host state name {name:?} contains '/' or is used twice")));
        }
        let saved = saved_state.save_state()?;
        for (k, t) in saved.tensors {
            values.insert(format!("{HOST}{name}/{k}"), t);
        }
        host_meta.insert(name.to_string(), saved.meta);
    }
    let bytes: BTreeMap<&String, (DType, Vec<usize>, Vec<u8>)> = values
        .iter()
        .map(|(k, v)| (k, (v.dtype(), v.shape.clone(), v.data.to_le_bytes())))
        .collect();
    let views: Vec<(String, TensorView<'_>)> = bytes
        .iter()
        .map(|(k, (d, shape, b))| {
            Ok((
                (*k).clone(),
                TensorView::new(st_dtype(*d), shape.clone(), b).map_err(|e| fail(e.to_string()))?,
            ))
        })
        .collect::<Result<_>>()?;
    state["format"] = FORMAT.into();
    state["host"] = host_meta.into();
    state["crc32c"] = CHECKSUM_PLACEHOLDER.into();
    let text = state.to_string();
    let crc = checksum(
        &text,
        views.iter().map(|(k, v)| (k.as_str(), v.dtype(), v.shape(), v.data())),
    );
    let field = format!("{CHECKSUM_FIELD}{CHECKSUM_PLACEHOLDER}");
    let text = text.replacen(&field, &format!("{CHECKSUM_FIELD}{crc:08x}"), 1);
    let meta = HashMap::from([("rlgraph".to_string(), text)]);
    let buffer = safetensors::serialize(views, Some(meta)).map_err(|e| fail(e.to_string()))?;
    // A failed or killed save never clobbers a good checkpoint.
    crate::atomic_file::write_atomically(path, &buffer).map_err(|e| fail(format!("cannot write: {e}")))
}

/// Reads `path`, checks its format and checksum, and splits its tensors into variables and
/// host states.
fn read_checkpoint(path: &Path) -> Result<Read> {
    let fail = |reason: String| CoreError::Checkpoint {
        path: path.display().to_string(),
        reason,
    };
    let buffer = std::fs::read(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let file = SafeTensors::deserialize(&buffer).map_err(|e| fail(format!("not a safetensors file: {e}")))?;
    let (_, metadata) = SafeTensors::read_metadata(&buffer).map_err(|e| fail(e.to_string()))?;
    let meta = metadata.metadata().as_ref();
    let text = meta
        .and_then(|m| m.get("rlgraph"))
        .ok_or_else(|| fail("no rlgraph metadata; was it written by GraphExecutor::save?".into()))?;
    let state: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| fail(format!("the rlgraph metadata is not JSON ({e}); the file is damaged")))?;
    if state["format"] != FORMAT && state["format"] != FORMAT_WITHOUT_CHECKSUM {
        return Err(fail(format!("unknown format {}", state["format"])));
    }
    if state["format"] == FORMAT {
        // The text as it was checksummed: the stored digits read as the placeholder.
        let stored = text
            .find(CHECKSUM_FIELD)
            .map(|at| at + CHECKSUM_FIELD.len())
            .and_then(|at| Some((at, text.get(at..at + CHECKSUM_PLACEHOLDER.len())?)));
        let Some((at, stored)) = stored else {
            return Err(fail(
                "the checksum is missing: the file is damaged; restore from another copy".into(),
            ));
        };
        let counted = format!(
            "{}{CHECKSUM_PLACEHOLDER}{}",
            &text[..at],
            &text[at + CHECKSUM_PLACEHOLDER.len()..]
        );
        let mut tensors = file.tensors();
        tensors.sort_by(|a, b| a.0.cmp(&b.0));
        let computed = checksum(
            &counted,
            tensors
                .iter()
                .map(|(k, v)| (k.as_str(), v.dtype(), v.shape(), v.data())),
        );
        if stored != format!("{computed:08x}") {
            return Err(fail(format!(
                "checksum mismatch (stored crc32c {stored}, computed {computed:08x}): the file is damaged; restore from another copy"
            )));
        }
    }
    let mut values = BTreeMap::new();
    let mut host_saved: BTreeMap<String, SavedState> = BTreeMap::new();
    for (name, view) in file.tensors() {
        let data = from_bytes(view.dtype(), view.data())
            .ok_or_else(|| fail(format!("tensor {name}: unsupported dtype {:?}", view.dtype())))?;
        let tensor = HostTensor::new(view.shape().to_vec(), data)?;
        match name.strip_prefix(HOST).and_then(|rest| rest.split_once('/')) {
            Some((owner, key)) => {
                host_saved
                    .entry(owner.to_string())
                    .or_default()
                    .tensors
                    .insert(key.to_string(), tensor);
            }
            None => {
                values.insert(name, tensor);
            }
        }
    }
    Ok(Read {
        values,
        host_saved,
        state,
    })
}
