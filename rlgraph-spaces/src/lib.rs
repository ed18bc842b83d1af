//! Typed spaces for rlgraph-rs: what data looks like, checked before any tensor exists.
//!
//! A [`Space`] is a primitive box ([`BoolBox`], [`IntBox`], [`FloatBox`], [`TextBox`]) or a
//! container ([`DictSpace`], [`TupleSpace`]) of spaces, nested to any depth. Any primitive may
//! carry a batch rank and a time rank ([`Ranks`]), batch-major or time-major. A [`Value`]
//! mirrors a space with typed n-dimensional arrays at the leaves.
//!
//! What a space can do:
//! - flatten to `(flat key, primitive)` pairs in RLgraph's spelling (`/a/b`, `/_T0_`), and
//!   unflatten back ([`flat_key`]);
//! - sample from an RNG the caller passes in ([`Space::sample`]); nothing here reads a global RNG;
//! - say whether a value lies in it, and if not, where and why ([`Space::check`]);
//! - read and write RLgraph's JSON space specs ([`Space::from_json_str`], [`Space::to_json`])
//!   and values as plain JSON ([`Value::to_json`], [`Space::value_from_json`]).
//!
//! # Example
//!
//! ```
//! use rand::SeedableRng;
//! use rlgraph_spaces::Space;
//!
//! let space = Space::from_json_str(r#"{"type": "dict", "add_batch_rank": true, "spec": {
//!     "state": {"type": "float-box", "shape": [4], "low": -1.0, "high": 1.0},
//!     "action": {"type": "int-box", "high": 2}
//! }}"#)?;
//!
//! let keys: Vec<String> = space.flatten().into_iter().map(|(key, _)| key).collect();
//! assert_eq!(keys, ["/action", "/state"]);
//! assert_eq!(space.flat_dim(), 5);
//!
//! let mut rng = rand::rngs::StdRng::seed_from_u64(7);
//! let batch = space.sample(Some(3), &mut rng);
//! assert!(space.contains(&batch));
//!
//! // A value that breaks a bound is rejected with the place and the reason.
//! let bad = space.value_from_json(&serde_json::json!({"action": [2], "state": [[0.0, 0.0, 0.0, 0.0]]}));
//! let message = bad.unwrap_err().to_string();
//! assert!(message.contains("/action") && message.contains("high is exclusive"), "{message}");
//! # Ok::<(), rlgraph_spaces::SpaceError>(())
//! ```

mod boxes;
mod clip;
mod contains;
mod dtype;
mod error;
pub mod flat_key;
mod ranks;
mod sample;
mod space;
mod spec;
mod value;
mod value_json;

pub use boxes::{BoolBox, FloatBounds, FloatBox, IntBox, TextBox};
pub use dtype::Dtype;
pub use error::{Result, SpaceError};
pub use ranks::Ranks;
pub use space::{DictSpace, Space, TupleSpace, MAX_ITEM_ELEMENTS};
pub use value::{Array, Value};
