//! Reading RLgraph JSON specs: type names matched RLgraph's way, unknown keys refused.

use serde_json::{Map, Value as Json};

use rlgraph_core::{CoreError, Result};

/// RLgraph's matching of type names: case-insensitive, `-` and `_` ignored.
pub fn normalize_type(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// One JSON object spec at a known place, with typed getters that name the key on error.
pub struct Spec<'a> {
    obj: &'a Map<String, Json>,
    at: String,
}

impl<'a> Spec<'a> {
    /// Wraps `json`, which must be an object, found at `at` (a JSON path for messages).
    pub fn new(json: &'a Json, at: impl Into<String>) -> Result<Self> {
        let at = at.into();
        match json {
            Json::Object(obj) => Ok(Spec { obj, at }),
            other => Err(CoreError::Config {
                at,
                reason: format!("expected a JSON object, got {other}"),
            }),
        }
    }

    /// Fails on any key not in `allowed` (nor `type`), naming it and the allowed ones.
    pub fn only(&self, allowed: &[&str]) -> Result<()> {
        match self
            .obj
            .keys()
            .find(|k| k.as_str() != "type" && !allowed.contains(&k.as_str()))
        {
            Some(k) => Err(CoreError::Config {
                at: format!("{}.{k}", self.at),
                reason: format!("unknown key {k:?}; this spec takes: type, {}", allowed.join(", ")),
            }),
            None => Ok(()),
        }
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a Json> {
        self.obj.get(key)
    }

    /// Where `key` is, for messages.
    pub fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    fn wrong(&self, key: &str, expected: &str) -> CoreError {
        CoreError::Config {
            at: self.at(key),
            reason: format!("expected {expected}, got {}", self.obj[key]),
        }
    }

    /// A required non-negative integer.
    pub fn usize(&self, key: &str) -> Result<usize> {
        match self.obj.get(key) {
            None => Err(CoreError::Config {
                at: self.at(key),
                reason: "missing; this key is required".into(),
            }),
            Some(j) => j
                .as_u64()
                .and_then(|u| usize::try_from(u).ok())
                .ok_or_else(|| self.wrong(key, "a non-negative integer")),
        }
    }

    /// An optional non-negative integer, or `default`.
    pub fn usize_or(&self, key: &str, default: usize) -> Result<usize> {
        match self.obj.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(_) => self.usize(key),
        }
    }

    /// A required count of at least 1 (units, filters, window sizes, strides).
    pub fn positive(&self, key: &str) -> Result<usize> {
        match self.usize(key)? {
            0 => Err(self.wrong(key, "an integer of at least 1")),
            n => Ok(n),
        }
    }

    /// An optional count of at least 1, or `default`.
    pub fn positive_or(&self, key: &str, default: usize) -> Result<usize> {
        match self.obj.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(_) => self.positive(key),
        }
    }

    /// An optional finite number above 0 (a temperature, a scale), or `default`.
    pub fn positive_f64_or(&self, key: &str, default: f64) -> Result<f64> {
        match self.f64_or(key, default)? {
            x if x > 0.0 && x.is_finite() => Ok(x),
            _ => Err(self.wrong(key, "a finite number above 0")),
        }
    }

    /// An optional number, or `default`.
    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64> {
        match self.obj.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(j) => j.as_f64().ok_or_else(|| self.wrong(key, "a number")),
        }
    }

    /// An optional bool, or `default`.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.obj.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(j) => j.as_bool().ok_or_else(|| self.wrong(key, "true or false")),
        }
    }

    /// An optional string, or `default`.
    pub fn str_or(&self, key: &str, default: &'a str) -> Result<&'a str> {
        match self.obj.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(j) => j.as_str().ok_or_else(|| self.wrong(key, "a string")),
        }
    }
}
