//! Environments: CartPole, MountainCar, Acrobot and Pendulum with Gymnasium-exact dynamics,
//! RLgraph's GridWorld, random and deterministic test environments, and vector environments.
//!
//! Status: not built yet. The environments arrive with the agents issue; this crate exports
//! nothing until then.
