//! What a user of rlgraph-rs reaches for, in one `use rlgraph::prelude::*`: spaces and
//! values, components and their test harness, registries, environments, agents, workers and
//! the driver.

pub use crate::Candle;
#[cfg(feature = "tch")]
pub use crate::Tch;
pub use agents::{
    build_agent, register_algorithm, transition_space, Agent, AgentBuilder, DqnAgent, ImpalaAgent, PgAgent, SacAgent,
    Transition, UpdateSpec,
};
pub use executors::{
    drive, DriveOptions, Evaluation, OnDivergence, RunLength, SingleThreadedWorker, Worker, WorkerStats,
};
pub use rlgraph_components::{
    dense, from_spec, layers_from_spec, register_component, Activation, DenseSpec, OptimizerSpec, TimeDependent,
};
pub use rlgraph_core::{Backend, Component, ComponentTest, GraphFn, Initializer, Param, VarDecl};
pub use rlgraph_envs::{
    check_env, discrete_action, float_action, make, observation, register_env, Env, EpisodeClock, Step, Stepping,
    VectorEnv,
};
pub use rlgraph_memories::{PrioritizedReplay, ReplayMemory};
pub use rlgraph_spaces::{Array, BoolBox, DictSpace, FloatBox, IntBox, Space, TextBox, TupleSpace, Value};
