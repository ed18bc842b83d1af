//! The Gymnasium bridge: any Gymnasium environment, Atari included, as an [`Env`](crate::Env).
//!
//! Each [`GymEnv`] runs `gymnasium.make(id)` in a Python process of its own and talks to it
//! over pipes: requests and reply headers are JSON lines, observations raw little-endian
//! bytes. A [`GymBatch`] runs many copies in one process and steps them all with one
//! message; a [`crate::VectorEnv`] of several processes with threaded stepping runs them in
//! parallel, with no GIL between them. Building needs no Python; running a
//! `gym:` id needs a Python with `gymnasium` (and `ale-py` for Atari), found as
//! [`python`] says.

mod gym_batch;
mod gym_env;
mod process;

pub use gym_batch::GymBatch;
pub use gym_env::{decode, GymEnv, GYM_PREFIX};
pub use process::{python, python_for_tests, BRIDGE};
