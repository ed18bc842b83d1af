//! An agent config file as the one-process layouts and the bench runner read it: JSON, the
//! GA3C executor's settings checked whatever the layout (so a typo is refused when the config
//! loads, as the schema refuses it), and the keys accepted but not used named.

use std::path::Path;

use serde_json::Value as Json;

/// A config file read by [`read_config_file`].
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// The config, with the device override applied.
    pub json: Json,
    /// One line per key accepted and not used, naming the file, the key and why.
    pub notes: Vec<String>,
}

/// Reads the agent config at `path`, checks the executors' settings in it, and sets
/// `execution_spec.default_device` to `device` where one is given (`cpu`, `cuda:N`).
pub fn read_config_file(path: &Path, device: Option<&str>) -> Result<ConfigFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut json: Json = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    if json.pointer("/execution_spec/ga3c_spec").is_some() {
        crate::ga3c::Ga3cSpec::parse(&json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let notes = agents::unused_keys(&json)
        .into_iter()
        .map(|(key, why)| format!("note: {}: {key}: accepted and not used ({why})", path.display()))
        .collect();
    if let (Some(device), Some(obj)) = (device, json.as_object_mut()) {
        let exec = obj.entry("execution_spec").or_insert_with(|| serde_json::json!({}));
        if let Some(exec) = exec.as_object_mut() {
            exec.insert("default_device".into(), device.into());
        }
    }
    Ok(ConfigFile { json, notes })
}
