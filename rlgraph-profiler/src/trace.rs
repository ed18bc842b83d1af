//! A profile on disk: reading the raw events back (`rlgraph profile report`), and the
//! Chrome trace-event form that Perfetto and `chrome://tracing` open. Writing is the
//! caller's (the `rlgraph` command writes atomically).

use std::path::Path;

use serde_json::{json, Value as Json};

use crate::event::{Event, Kind};

/// Why a profile could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A file is not what the profiler wrote.
    #[error("{path}: not a profile file: {reason}")]
    Malformed {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProfileError + '_ {
    move |source| ProfileError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Reads a profile file written as JSON (raw events, a calibration).
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    serde_json::from_str(&text).map_err(|e| ProfileError::Malformed {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// The events as Chrome trace events: complete (`X`) events in microseconds, one track per
/// thread, captured work named by category.
pub fn chrome_trace(events: &[Event]) -> Json {
    let trace: Vec<Json> = events
        .iter()
        .map(|e| {
            let category = match e.kind {
                Kind::Phase => "phase",
                Kind::Operation => "operation",
                Kind::Capture(c) => c.name(),
            };
            let mut args = serde_json::Map::new();
            if let Some(d) = &e.detail {
                args.insert("graph_fn".into(), json!(d.as_str()));
            }
            if let Some(m) = &e.method {
                args.insert("api_method".into(), json!(m.as_str()));
            }
            json!({
                "name": e.name.as_str(),
                "cat": category,
                "ph": "X",
                "ts": e.start as f64 / 1e3,
                "dur": e.duration() as f64 / 1e3,
                "pid": 1,
                "tid": e.thread,
                "args": args,
            })
        })
        .collect();
    json!({"traceEvents": trace, "displayTimeUnit": "ms"})
}
