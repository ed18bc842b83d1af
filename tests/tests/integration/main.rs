//! Every integration test of this crate, as one test binary: one link instead of one per
//! file, and generic code compiled once, which took minutes off CI. Each module was once
//! its own file under `tests/` and still reads as one.

mod agents_from_values;
mod agents_multi_gpu;
mod atari;
mod checkpoint_integrity;
mod checkpoint_memories;
mod component_view;
mod components_action_masks;
mod components_common;
mod components_conv;
mod components_distributions;
mod components_exploration;
mod components_helpers;
mod components_layers;
mod components_losses;
mod components_lstm;
mod components_memories;
mod components_networks;
mod components_optimizers;
mod components_policies;
mod components_preprocessors;
mod components_sequences;
mod components_spec_readers;
mod conformance;
mod core_build;
mod core_components;
mod custom_algorithms;
mod custom_components;
mod gae_time_major;
mod gpu;
mod onnx_registered_plan;
mod readme_example;
mod tensor_envs;
mod tensor_envs_philox;
mod tensor_minatar;
mod tensor_minatar_host_pass;
