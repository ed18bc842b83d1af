//! Reusable RL components, each written once over [`rlgraph_core::Backend`] and buildable
//! from its RLgraph JSON spec with [`from_spec`].
//!
//! Built so far: layers (dense, conv2d, max-pool, reshape, concat, residual, embedding),
//! `NeuralNetwork` from layer-spec lists, preprocessors, distributions, policies,
//! exploration, time-dependent parameters, optimizers, synchronization, loss functions
//! (DQN, actor-critic, PPO, IMPALA, SAC, supervised) and sequence helpers (GAE, V-trace).
//! Replay memories live on the host in `rlgraph-memories`.
//!
//! ```
//! use backend_candle::Candle;
//! use rlgraph_components::from_spec;
//! use rlgraph_core::spaces::{Space, Value};
//! use rlgraph_core::{ComponentTest, Tolerance};
//!
//! // RLgraph's dense-layer test: all weights 1.0, no bias, [[0.5, 2.0]] -> [[2.5, 2.5]].
//! let spec = serde_json::json!({"type": "dense", "units": 2, "weights_spec": 1.0, "use_bias": false});
//! let space = Space::from_json_str(r#"{"type": "float-box", "shape": [2], "add_batch_rank": true}"#)?;
//! let mut test = ComponentTest::<Candle>::new(from_spec(&spec, "spec")?, [("inputs", space.clone())], 0)?;
//! let x = space.value_from_json(&serde_json::json!([[0.5, 2.0]]))?;
//! let want = space.value_from_json(&serde_json::json!([[2.5, 2.5]]))?;
//! test.assert_call("call", &[x], &[want], Tolerance::decimals(5));
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```

pub mod action_adapter;
pub mod action_mask;
pub mod activation;
pub mod common;
mod component_table;
mod custom_components;
pub mod discrete_actions;
pub mod distributions;
pub mod dueling_policy;
pub mod exploration;
pub mod helpers;
pub mod image_preprocessors;
pub mod initializer_spec;
pub mod layer_registry;
pub mod layers;
pub mod losses;
pub mod memory_component;
pub mod nest;
pub mod network;
pub mod optimizer;
pub mod policy;
pub mod preprocessors;
pub mod registry;
pub mod registry_utilities;
pub mod spec;
pub mod spec_keys;
pub mod spec_schema;
pub mod special_functions;
pub mod stateful_preprocessors;
pub mod synchronizable;
pub mod time_dependent;
pub mod towers;
pub mod training_harness;

pub use action_adapter::{action_adapter, AdapterSpec};
pub use activation::Activation;
pub use component_table::registered_components;
pub use custom_components::{read_settings, register_component};
pub use discrete_actions::{discrete_actions, greedy_fn, DiscreteAction};
pub use distributions::{distribution, Kind as DistributionKind};
pub use dueling_policy::dueling_policy;
pub use exploration::{epsilon_exploration, gaussian_noise, ornstein_uhlenbeck_noise};
pub use layer_registry::{layers_from_spec, lstm_spec, network_layers};
pub use layers::{dense, DenseSpec};
pub use losses::{
    actor_critic_loss, cross_entropy_loss, dqn_loss, euclidean_distance_loss, impala_loss, ppo_loss, sac_loss,
    ActorCriticLossSpec, DqnLossSpec, ImpalaLossSpec, PpoLossSpec, SacLossSpec,
};
pub use memory_component::{memory_component, MemoryKind};
pub use nest::join_like;
pub use network::{batch_apply, neural_network, stack, stack_with_inputs};
pub use optimizer::{optimizer, OptimizerSpec, Rule};
pub use policy::{
    policy, policy_with, shared_value_function_policy, sum_item_dims, value_function, BoundedDistribution,
    PolicyOptions,
};
pub use preprocessors::preprocessor_stack;
pub use registry::{from_spec, from_spec_with};
pub use synchronizable::synchronizable;
pub use time_dependent::TimeDependent;
pub use towers::MultiGpuSync;
pub use training_harness::training_harness;
