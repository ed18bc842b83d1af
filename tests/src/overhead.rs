//! The MLP of the executor-overhead measurements (8 -> 64 -> 64 -> 4, ReLU between): built
//! through the executor, and the same forward pass hand-written on candle and on tch, with
//! the executor's own weights. Shared by `benches/executor_overhead.rs` and
//! `examples/executor_overhead_ratio.rs`.

use rlgraph_core::backend::prelude::*;
use std::collections::BTreeMap;

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, BuildOptions, Device, DeviceMap, GraphExecutor};

use crate::dummies::mlp;
use crate::{Candle, Tch};

/// The layer widths after the 8 inputs.
pub const WIDTHS: [usize; 3] = [64, 64, 4];

/// The MLP built on `device`, seeded 0; its API method is `run(x)`.
pub fn mlp_executor<B: Backend>(device: Device) -> GraphExecutor<B> {
    let spaces = BTreeMap::from([("x".to_string(), Space::from(FloatBox::new([8])).with_batch_rank(true))]);
    let options = BuildOptions {
        device_map: DeviceMap::new(device),
        ..Default::default()
    };
    GraphExecutor::build(mlp::<B>("mlp", &WIDTHS), &spaces, &options, 0).expect("the MLP builds")
}

/// The executor's weights, kernel and bias of each layer in order: handles to the same
/// trainable variables, so both sides record autograd history alike.
pub fn mlp_weights<B: Backend>(exec: &GraphExecutor<B>) -> Vec<B::Tensor> {
    let paths = (0..WIDTHS.len()).flat_map(|i| ["kernel", "bias"].map(|v| format!("mlp/dense-{i}/{v}")));
    crate::variable_tensors(exec, paths)
}

/// The forward pass written directly on candle.
pub fn candle_forward(
    x: &<Candle as BackendCore>::Tensor,
    w: &[<Candle as BackendCore>::Tensor],
) -> <Candle as BackendCore>::Tensor {
    let h = x
        .matmul(&w[0])
        .and_then(|h| h.broadcast_add(&w[1]))
        .and_then(|h| h.relu())
        .expect("h0");
    let h = h
        .matmul(&w[2])
        .and_then(|h| h.broadcast_add(&w[3]))
        .and_then(|h| h.relu())
        .expect("h1");
    h.matmul(&w[4]).and_then(|h| h.broadcast_add(&w[5])).expect("out")
}

/// The forward pass written directly on tch.
pub fn tch_forward(
    x: &<Tch as BackendCore>::Tensor,
    w: &[<Tch as BackendCore>::Tensor],
) -> <Tch as BackendCore>::Tensor {
    let h = (x.0.matmul(&w[0].0) + &w[1].0).relu();
    let h = (h.matmul(&w[2].0) + &w[3].0).relu();
    backend_tch::TchTensor(h.matmul(&w[4].0) + &w[5].0)
}
