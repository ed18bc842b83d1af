//! `MetaReader`: typed values out of a checkpoint's metadata, each error naming its key.

use rlgraph_core::{CoreError, Result};
use serde_json::Value as Json;

use crate::evaluation::{rounds_from_json, Evaluated};

/// Reads typed values out of a checkpoint's metadata, each error naming its key.
pub(crate) struct MetaReader<'a, F: Fn(String) -> CoreError> {
    /// The metadata object.
    pub(crate) meta: &'a Json,
    /// Makes the error for a key that is missing or holds the wrong thing.
    pub(crate) bad: &'a F,
}

impl<F: Fn(String) -> CoreError> MetaReader<'_, F> {
    /// The count under `key`.
    pub(crate) fn count(&self, key: &str) -> Result<u64> {
        self.meta[key]
            .as_u64()
            .ok_or_else(|| (self.bad)(format!("{key} is missing or not a count")))
    }

    /// The greedy evaluation rounds under `key`; none where the key is absent, as in
    /// checkpoints written before evaluation rounds existed.
    pub(crate) fn rounds(&self, key: &str) -> Result<Vec<Evaluated>> {
        match &self.meta[key] {
            Json::Null => Ok(vec![]),
            _ => rounds_from_json(self.list(key)?, self.bad),
        }
    }

    /// The list under `key`.
    pub(crate) fn list(&self, key: &str) -> Result<&[Json]> {
        self.meta[key]
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| (self.bad)(format!("{key} is missing or not a list")))
    }

    /// The list of finite numbers under `key`.
    pub(crate) fn finite_numbers(&self, key: &str) -> Result<Vec<f64>> {
        self.list(key)?
            .iter()
            .enumerate()
            .map(|(i, j)| {
                j.as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| (self.bad)(format!("{key}[{i}] is not a finite number")))
            })
            .collect()
    }

    /// The list of counts under `key`.
    pub(crate) fn counts(&self, key: &str) -> Result<Vec<usize>> {
        self.list(key)?
            .iter()
            .enumerate()
            .map(|(i, j)| {
                j.as_u64()
                    .map(|c| c as usize)
                    .ok_or_else(|| (self.bad)(format!("{key}[{i}] is not a count")))
            })
            .collect()
    }
}
