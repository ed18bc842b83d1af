//! Every file `rlgraph` writes for a user (summaries, episode CSVs, configs, profiles) is
//! written atomically, so a run killed at any moment leaves the old file or the new one.

use std::path::Path;

/// Writes `bytes` to `dir/name` atomically.
pub(crate) fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    rlgraph_core::write_atomically(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes `value` as JSON to `path` atomically.
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), String> {
    let bytes = serde_json::to_vec(value).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    rlgraph_core::write_atomically(path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
