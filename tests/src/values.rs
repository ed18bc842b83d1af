//! Builders for the host values and spaces that component tests feed in.

use rlgraph_core::spaces::{Array, Ranks, Space, Value};

/// An f32 value of `shape` from f64 literals (the precision tests write their numbers in).
pub fn floats(shape: &[usize], data: impl AsRef<[f64]>) -> Value {
    let data = data.as_ref().iter().map(|&x| x as f32).collect();
    Value::Float32(Array::new(shape.to_vec(), data).expect("test data fits its shape"))
}

/// The space `spec` (RLgraph JSON) with a batch rank.
pub fn batch(spec: &str) -> Space {
    Space::from_json_str(spec)
        .expect("a valid test space")
        .with_batch_rank(true)
}

/// A FloatBox of `features` with batch and time ranks, time-major or batch-major.
pub fn sequences(features: usize, time_major: bool) -> Space {
    Space::from_json_str(&format!(r#"{{"type": "float-box", "shape": [{features}]}}"#))
        .expect("a valid test space")
        .with_ranks(Ranks {
            batch: true,
            time: true,
            time_major,
        })
}
