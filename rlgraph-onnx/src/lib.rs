//! A trained agent's acting graph as an ONNX model, to run where rlgraph-rs does not
//! (onnxruntime, TensorRT, a browser): the stateless preprocessing, the dense network and
//! the action head, with the trained weights inside and the config and spaces in its
//! metadata. The message types come from ONNX's own `onnx.proto` (see `proto/onnx/`).
//!
//! ```
//! use std::collections::BTreeMap;
//! use rlgraph_core::spaces::Space;
//! use rlgraph_core::{HostData, HostTensor};
//!
//! // A DQN over 2 features and 3 actions: one tanh layer of 2 units, then Q = h W + b.
//! let config = serde_json::json!({
//!     "type": "dqn",
//!     "network_spec": [{"type": "dense", "units": 2, "activation": "tanh", "scope": "hidden"}]
//! });
//! let states = Space::from_json_str(r#"{"type": "float-box", "shape": [2]}"#)?;
//! let actions = Space::from_json_str(r#"{"type": "int-box", "high": 3}"#)?;
//! let zeros = |shape: Vec<usize>| HostTensor { data: HostData::F32(vec![0.0; shape.iter().product()]), shape };
//! let weights = BTreeMap::from([
//!     ("dqn-agent/policy/neural-network/hidden/kernel".to_string(), zeros(vec![2, 2])),
//!     ("dqn-agent/policy/neural-network/hidden/bias".to_string(), zeros(vec![2])),
//!     ("dqn-agent/policy/action-adapter/kernel".to_string(), zeros(vec![2, 3])),
//!     ("dqn-agent/policy/action-adapter/bias".to_string(), zeros(vec![3])),
//! ]);
//! let model = rlgraph_onnx::export_onnx(&config, &states, &actions, &weights)?;
//! assert!(!model.is_empty());
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```

mod acting_graph;
mod graph_builder;

/// ONNX's message types, generated from `proto/onnx/onnx.proto`.
#[allow(clippy::all)]
pub mod onnx {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

pub use acting_graph::export_onnx;
pub use graph_builder::OPSET;
