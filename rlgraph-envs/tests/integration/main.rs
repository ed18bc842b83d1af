//! Every integration test of this crate, as one test binary: one link instead of one per
//! file, and generic code compiled once, which took minutes off CI. Each module was once
//! its own file under `tests/` and still reads as one.

mod classic_control;
mod env_of_ones_own;
mod grid_world;
mod gym_bridge;
mod masked_choice;
mod minatar;
mod mujoco;
mod render;
mod snapshots;
mod vector_env;
