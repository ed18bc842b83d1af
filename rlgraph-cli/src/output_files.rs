//! Every file `rlgraph` writes for a user (summaries, episode CSVs, configs, profiles) is
//! written atomically, so a run killed at any moment leaves the old file or the new one.

use std::path::Path;

/// Writes `bytes` to `dir/name` atomically.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    rlgraph_core::write_atomically(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes one line to standard error. Unlike `eprintln!`, a closed or broken stderr
/// (`2>&-`) is ignored instead of panicking: the exit code still tells the outcome.
pub fn stderr_line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Writes `value` as JSON to `path` atomically.
pub(crate) fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), String> {
    let bytes = serde_json::to_vec(value).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    rlgraph_core::write_atomically(path, &bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
