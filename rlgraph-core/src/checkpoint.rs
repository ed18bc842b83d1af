//! Checkpoints: every variable as a safetensors tensor named by its scope path, and the rest
//! of the executor's state (its RNG position, the format version) as JSON in the file's
//! safetensors metadata. One file, readable by any safetensors tool. Host state (replay
//! memories) rides along: its tensors under `#host/NAME/...`, its JSON under the metadata
//! key `host`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use safetensors::tensor::{Dtype as StDtype, SafeTensors, TensorView};

use crate::backend::{Backend, DType, HostData, HostTensor};
use crate::error::{CoreError, Result};
use crate::executor::GraphExecutor;
use crate::host_state::{HostState, SavedState};
use crate::rng_state::{rng_from_json, rng_to_json};

const FORMAT: &str = "rlgraph-rs checkpoint 1";
const HOST: &str = "#host/";

fn to_bytes(data: &HostData) -> Vec<u8> {
    match data {
        HostData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostData::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostData::U8(v) => v.clone(),
    }
}

fn from_bytes(dtype: StDtype, bytes: &[u8]) -> Option<HostData> {
    fn chunks<const N: usize, T>(bytes: &[u8], f: fn([u8; N]) -> T) -> Option<Vec<T>> {
        if bytes.len() % N != 0 {
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
        let path = path.as_ref();
        let fail = |reason: String| CoreError::Checkpoint {
            path: path.display().to_string(),
            reason,
        };
        let mut values = self.variables()?;
        let mut host_meta = serde_json::Map::new();
        for (name, state) in host {
            if name.contains('/') || host_meta.contains_key(*name) {
                return Err(fail(format!("host state name {name:?} contains '/' or is used twice")));
            }
            let saved = state.save_state()?;
            for (k, t) in saved.tensors {
                values.insert(format!("{HOST}{name}/{k}"), t);
            }
            host_meta.insert(name.to_string(), saved.meta);
        }
        let bytes: BTreeMap<&String, (DType, Vec<usize>, Vec<u8>)> = values
            .iter()
            .map(|(k, v)| (k, (v.dtype(), v.shape.clone(), to_bytes(&v.data))))
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
        let mut state = rng_to_json(&self.rng);
        state["format"] = FORMAT.into();
        state["backend"] = B::NAME.into();
        state["host"] = host_meta.into();
        let meta = HashMap::from([("rlgraph".to_string(), state.to_string())]);
        let buffer = safetensors::serialize(views, Some(meta)).map_err(|e| fail(e.to_string()))?;
        // Write to a temporary file and rename, so a failed save never clobbers a good checkpoint.
        let tmp = path.with_extension("partial");
        std::fs::write(&tmp, buffer).map_err(|e| fail(format!("cannot write: {e}")))?;
        std::fs::rename(&tmp, path).map_err(|e| fail(format!("cannot move into place: {e}")))
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
        let buffer = std::fs::read(path).map_err(|e| fail(format!("cannot read: {e}")))?;
        let file = SafeTensors::deserialize(&buffer).map_err(|e| fail(format!("not a safetensors file: {e}")))?;
        let (_, metadata) = SafeTensors::read_metadata(&buffer).map_err(|e| fail(e.to_string()))?;
        let state: serde_json::Value = metadata
            .metadata()
            .as_ref()
            .and_then(|m| m.get("rlgraph"))
            .and_then(|s| serde_json::from_str(s).ok())
            .ok_or_else(|| fail("no rlgraph metadata; was it written by GraphExecutor::save?".into()))?;
        if state["format"] != FORMAT {
            return Err(fail(format!("unknown format {}", state["format"])));
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
        let mut loads = Vec::with_capacity(host.len());
        for (name, target) in host.iter() {
            let meta = state["host"]
                .get(*name)
                .cloned()
                .ok_or_else(|| fail(format!("no host state named {name:?} in the checkpoint")))?;
            let mut saved = host_saved.remove(*name).unwrap_or_default();
            saved.meta = meta;
            target.check_state(&saved)?;
            loads.push(saved);
        }
        let expected: Vec<&String> = self.store.infos().iter().map(|i| &i.path).collect();
        let missing: Vec<&&String> = expected.iter().filter(|p| !values.contains_key(**p)).collect();
        if !missing.is_empty() {
            return Err(fail(format!("variables missing from the checkpoint: {missing:?}")));
        }
        let rng = rng_from_json(&state).map_err(fail)?;
        self.set_variables(&values)?;
        for ((_, target), saved) in host.iter_mut().zip(loads) {
            target.load_state(saved)?;
        }
        self.rng = rng;
        Ok(())
    }
}
