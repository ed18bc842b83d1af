//! What the profiler records: one closed interval per scope, on one thread.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Where time goes inside an operation. Framework time is what no capture covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The framework's own (Rust) code: everything inside an operation that nothing else covers.
    Framework,
    /// A backend kernel step on the CPU side (a plan step: component, graph function).
    Backend,
    /// GPU kernels, from CUDA events or synchronized brackets.
    Gpu,
    /// Uploads to and downloads from a device.
    Transfer,
    /// Environment steps.
    Simulator,
}

impl Category {
    /// Every category, in the order tables and charts show them.
    pub const ALL: [Category; 5] = [
        Category::Framework,
        Category::Backend,
        Category::Gpu,
        Category::Transfer,
        Category::Simulator,
    ];

    /// The category's name in tables and traces.
    pub fn name(self) -> &'static str {
        match self {
            Category::Framework => "framework",
            Category::Backend => "backend",
            Category::Gpu => "gpu",
            Category::Transfer => "transfer",
            Category::Simulator => "simulator",
        }
    }
}

/// What kind of scope an event closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A phase of the algorithm (`data_collection`, `training`): annotation.
    Phase,
    /// An operation inside a phase (`inference`, `backpropagation`): annotation.
    Operation,
    /// Captured work of one category, recorded by the library without user code.
    Capture(Category),
}

/// A scope's name: a string known at compile time, or one shared by many events (a plan
/// step's component path), so recording never allocates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// A literal.
    Static(&'static str),
    /// A shared string.
    Shared(Arc<str>),
}

impl Name {
    /// The text.
    pub fn as_str(&self) -> &str {
        match self {
            Name::Static(s) => s,
            Name::Shared(s) => s,
        }
    }
}

impl From<&'static str> for Name {
    fn from(s: &'static str) -> Self {
        Name::Static(s)
    }
}

impl From<Arc<str>> for Name {
    fn from(s: Arc<str>) -> Self {
        Name::Shared(s)
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Name::Shared(Arc::from(String::deserialize(d)?)))
    }
}

/// One closed scope: what it was, on which thread, from when to when (nanoseconds since the
/// profiler started).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Phase, operation or captured category.
    pub kind: Kind,
    /// The scope's name (a phase, an operation, `component/graph_fn`, `upload`, `env.step`).
    pub name: Name,
    /// For plan steps, the graph function the step runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Name>,
    /// For plan steps, the root API method the step belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Name>,
    /// The recording thread, numbered from 0 in order of first use.
    pub thread: u32,
    /// Start, in nanoseconds.
    pub start: u64,
    /// End, in nanoseconds (at least `start`).
    pub end: u64,
}

impl Event {
    /// The scope's length in nanoseconds.
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}
