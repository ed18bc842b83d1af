//! Reading RLgraph agent configs: typed getters with RLgraph's defaults whose errors name
//! the key (`config.update_spec.batch_size: expected ...`), shared by every agent's config.

use rlgraph_components::TimeDependent;
use rlgraph_core::{Device, Result};
use serde_json::{Map, Value as Json};

use crate::agent::config;

/// A JSON object and the dotted path it was found at.
#[derive(Clone, Copy)]
pub(crate) struct Obj<'a> {
    /// The object's entries.
    pub map: &'a Map<String, Json>,
    /// Where it sits in the config (`config`, `config.memory_spec`, ...).
    pub at: &'a str,
}

impl<'a> Obj<'a> {
    /// `j` as an object found at `at`.
    pub fn new(j: &'a Json, at: &'a str) -> Result<Self> {
        j.as_object()
            .map(|map| Obj { map, at })
            .ok_or_else(|| config(at, format!("expected a JSON object, got {j}")))
    }

    /// The dotted path of `key`.
    pub fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    /// The value of `key`, where `null` counts as absent (RLgraph writes `null` for defaults).
    pub fn get(&self, key: &str) -> Option<&'a Json> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Refuses every key outside `keys`, naming it.
    pub fn only(&self, keys: &[&str]) -> Result<()> {
        match self.map.keys().find(|k| !keys.contains(&k.as_str())) {
            Some(k) => Err(config(
                &self.path(k),
                format!("not yet supported (supported here: {})", keys.join(", ")),
            )),
            None => Ok(()),
        }
    }

    /// A number, or `default`.
    pub fn num(&self, key: &str, default: f64) -> Result<f64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_f64()
                .ok_or_else(|| config(&self.path(key), format!("expected a number, got {v}"))),
        }
    }

    /// A boolean, or `default`.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| config(&self.path(key), format!("expected true or false, got {v}"))),
        }
    }

    /// A positive integer, or `default`.
    pub fn positive(&self, key: &str, default: usize) -> Result<usize> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|&n| n > 0)
                .map(|n| n as usize)
                .ok_or_else(|| config(&self.path(key), format!("expected a positive integer, got {v}"))),
        }
    }

    /// A list of specs (empty when absent).
    pub fn list(&self, key: &str) -> Result<Vec<Json>> {
        match self.get(key) {
            None => Ok(vec![]),
            Some(Json::Array(a)) => Ok(a.clone()),
            Some(other) => Err(config(
                &self.path(key),
                format!("expected a list of specs, got {other}"),
            )),
        }
    }

    /// A time-dependent parameter (a number or an RLgraph schedule), or the constant `default`.
    pub fn schedule(&self, key: &str, default: f64) -> Result<TimeDependent> {
        match self.get(key) {
            None => Ok(TimeDependent::Constant(default)),
            Some(v) => TimeDependent::parse(v, &self.path(key)),
        }
    }

    /// The lower-cased `type` with `-` and `_` removed, or `default`.
    pub fn kind(&self, default: &str) -> String {
        self.get("type")
            .and_then(Json::as_str)
            .unwrap_or(default)
            .to_lowercase()
            .replace(['-', '_'], "")
    }

    /// The device of `execution_spec.default_device` (the CPU when absent), refusing every
    /// other `execution_spec`, `summary_spec` and `saver_spec` entry, which are not supported
    /// yet; empty objects pass.
    pub fn execution_device(&self) -> Result<Device> {
        let mut device = Device::Cpu;
        for key in ["execution_spec", "summary_spec", "saver_spec"] {
            let Some(v) = self.get(key) else { continue };
            let path = self.path(key);
            let o = Obj::new(v, &path)?;
            for (k, value) in o.map {
                match (key, k.as_str(), value.as_str()) {
                    ("execution_spec", "default_device", Some(text)) => {
                        device = Device::parse(text).ok_or_else(|| {
                            config(&o.path(k), format!("{text:?} is not a device; use cpu or cuda:N"))
                        })?;
                    }
                    _ => return Err(config(&o.path(k), "not yet supported".into())),
                }
            }
        }
        Ok(device)
    }
}
