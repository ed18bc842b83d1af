//! RL agents (DQN and its variants, Ape-X, PPO, actor-critic, SAC, IMPALA, random) built from
//! RLgraph-format JSON configs, with the agent API of DESIGN section 9.
//!
//! Status: not built yet. The agents arrive with the agents issue; this crate exports nothing
//! until then.
