//! RL agents built from RLgraph-format JSON configs, with the agent API of DESIGN section 9:
//! `get_actions`, `observe` (buffered per environment), `update`, weights, checkpoints.
//!
//! Built so far: DQN with its double, dueling, n-step and prioritized-replay variants, and
//! Ape-X in its single-process form ([`DqnAgent`]); PPO and actor-critic ([`PgAgent`]); soft
//! actor-critic for bounded continuous or discrete actions ([`SacAgent`]); TD3 ([`Td3Agent`],
//! which ships on [`register_algorithm`] as a user's algorithm would); IMPALA in its
//! single-process form ([`ImpalaAgent`]); and the [`RandomAgent`]. [`build_agent`] picks one by
//! the config's `type`.
//!
//! Every agent but the random one is one [`ComposedAgent`] of roles that can also be used
//! apart, on other threads or other machines: an [`Actor`] (acting graph, exploration inside
//! it), an [`Adder`] ([`NStepBuffer`], [`RolloutAdder`], [`Rollout`]), a [`Replay`] or queue,
//! and a [`GraphLearner`] ([`DqnLearner`], [`ImpalaLearner`], [`PgLearner`], [`SacLearner`])
//! that publishes versioned [`WeightSnapshot`]s of the policy. What differs per algorithm is
//! its [`Algorithm`] ([`Dqn`], [`PolicyGradient`], [`Sac`], [`Td3`], [`Impala`]): a builder of the
//! roles from the config, and where observed steps go and update batches come from;
//! [`DqnAgent`] and the others name the composed agent of each.
//!
//! ```
//! use agents::{dqn_actor, Actor, DqnConfig, DqnLearner, Learner};
//! use backend_candle::Candle;
//! use rlgraph_envs::{CartPole, Env};
//!
//! let config = DqnConfig::parse(&serde_json::json!({
//!     "type": "dqn",
//!     "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}]
//! }))?;
//! let mut env = CartPole::new(0);
//! let (s, a) = (env.state_space().clone(), env.action_space().clone());
//! let mut learner = DqnLearner::<Candle>::new(&config, &s, &a, 0)?;
//! let mut actor = dqn_actor::<Candle>(&config, &s, &a, 0)?;
//! // A snapshot holds the policy's variables and a version; the actor loads it.
//! let snapshot = learner.publish()?;
//! actor.load(&snapshot)?;
//! assert_eq!(actor.version(), Some(1));
//! // Acting: epsilon-greedy at 10% of the run, one action per state.
//! let acted = actor.act(&[env.reset(Some(0))?], true, 0.1)?;
//! assert_eq!(acted.actions.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod acting_plan;
mod actor;
mod actor_critic_networks;
mod adders;
mod agent;
mod agent_builder;
mod agent_graph;
mod agent_parts;
mod agent_spec;
mod algorithm_registry;
mod batch;
mod bounded_numbers;
mod carried_memory;
mod composed_agent;
mod config_schema;
mod counters;
mod distributed_roles;
mod dqn;
mod frame_storage;
mod from_config;
mod host_checkpoint;
mod impala;
mod learner;
mod mask_key;
mod normalizer;
mod off_policy;
mod pg;
mod preprocessing;
mod random_agent;
mod recurrence;
mod replay;
mod sac;
mod schema_refs;
mod segments;
mod shipped_backends;
mod snapshot;
mod td3;
mod tensor_rollouts;
mod transition_json;
mod twin_critics;
mod update_spec;
mod worker_preprocessing;

pub use acting_plan::{ActingHead, ActingPlan};
pub use actor::{Acted, Actor, GraphActor};
pub use adders::n_step::NStepBuffer;
pub use adders::rollout::{Rollout, RolloutBatch};
pub use adders::rollout_adder::{rollout_record, RolloutAdder};
pub use adders::{AddedStep, Adder};
pub use agent::{Agent, Transition};
pub use agent_builder::AgentBuilder;
pub use agent_graph::build_graph;
pub use agent_parts::AgentParts;
pub use agent_spec::{unused_keys, FrameStorage};
pub use algorithm_registry::{
    acting_plan, agent_types, algorithm_of, distributed_algorithm, register_acting_plan, register_algorithm,
    register_distributed_algorithm, register_segment_algorithm, register_tensor_algorithm, registered_algorithms,
    segment_algorithm, tensor_algorithm, types_offering, Layout,
};
pub use batch::{stack, transition_space, transitions_batch, unstack};
pub use carried_memory::{memory_rows, memory_value, CarriedMemory, StepMemory};
pub use composed_agent::{Algorithm, ComposedAgent, Roles};
pub use config_schema::{config_schema, SCHEMA_ID};
pub use distributed_roles::{DistributedAlgorithm, Experience, ReplayFeed, RolloutFeed};
pub use dqn::actor::{apex_priorities, dqn_actor};
pub use dqn::builder::{dqn_replay, Dqn, DqnAgent};
pub use dqn::config::{DqnConfig, MemoryKind};
pub use dqn::learner::DqnLearner;
pub use frame_storage::WorkerLayout;
pub use from_config::{build_agent, check_config, without_float_bounds};
pub use host_checkpoint::{save_host_checkpoint, HostCheckpoint};
pub use impala::actor::impala_actor;
pub use impala::builder::{Impala, ImpalaAgent};
pub use impala::config::ImpalaConfig;
pub use impala::learner::ImpalaLearner;
pub use learner::{GraphLearner, Learned, Learner, LearnerGraph};
pub use mask_key::MaskKey;
pub use normalizer::{NormalizeSpec, Normalizer};
pub use off_policy::{DistributedOffPolicy, OffPolicy, OffPolicyRoles, ReplaySettings};
pub use pg::actor::pg_actor;
pub use pg::builder::{PgAgent, PolicyGradient};
pub use pg::config::{PgAlgorithm, PgConfig};
pub use pg::learner::PgLearner;
pub use preprocessing::{is_stateful, preprocessor_kind};
pub use random_agent::RandomAgent;
pub use recurrence::Recurrence;
pub use replay::{Replay, ReplaySample};
pub use sac::builder::{Sac, SacAgent, SacRoles};
pub use sac::config::SacConfig;
pub use sac::learner::{sac_actor, SacLearner};
pub use segments::{Segment, SegmentAlgorithm, SegmentLearner};
#[doc(hidden)]
pub use shipped_backends::compiled_entry_points;
pub use snapshot::WeightSnapshot;
pub use td3::builder::{Td3, Td3Agent, Td3Roles};
pub use td3::config::{Td3Config, Td3Settings};
pub use td3::learner::Td3Learner;
pub use td3::loss::td3_loss;
pub use tensor_rollouts::{TensorAgent, TensorAlgorithm, TensorRollout};
pub use update_spec::{UpdateMode, UpdateSpec};
pub use worker_preprocessing::{PreprocessedAgent, WorkerStreams};
