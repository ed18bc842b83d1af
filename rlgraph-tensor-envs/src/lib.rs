//! Device-resident environments in the spirit of CuLE (Dalton et al., NeurIPS 2020): N copies
//! of an environment stepped as one tensor program over any [`Backend`], on the device where
//! the network lives. Observations, rewards and episode ends never leave the device, and
//! finished copies restart inside the step, from a seeded stream of start states or from
//! Philox draws on the device ([`Restarts`], [`ResetStream`]).
//!
//! CartPole-v1, MountainCar-v0, Acrobot-v1 and Pendulum-v1 follow the host versions in
//! `rlgraph-envs` (Gymnasium's equations and time limits) step for step; RLgraph's GridWorld
//! is its host rules compiled into lookup tables. MinAtar's Asterix, Breakout, Freeway,
//! Seaquest and Space Invaders are the native games' rules as masks over the copies, with sticky actions and restarts drawn from Philox counters.
//!
//! ```
//! use backend_candle::Candle;
//! use rlgraph_core::backend::prelude::*;
//! use rlgraph_core::{DType, Device};
//! use rlgraph_tensor_envs::make;
//!
//! let mut envs = make::<Candle>("CartPole-v1", 1024, 0, Device::Cpu)?;
//! let obs = envs.reset()?;
//! assert_eq!(Candle::shape(&obs), vec![1024, 4]);
//! let push_right = Candle::full(&[1024], 1.0, DType::I64, Device::Cpu)?;
//! let step = envs.step(&push_right)?;
//! assert_eq!(Candle::shape(&step.reward), vec![1024]);
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```

mod acrobot;
mod batched;
mod captured;
mod cartpole;
mod cuda_step;
mod grid_world;
mod host_pass;
mod minatar;
mod mountain_car;
mod one_kernel;
mod pendulum;
mod philox;
mod reset_stream;
mod tensor_env;

pub use acrobot::AcrobotDynamics;
pub use batched::{Batched, CudaStep, Dynamics};
pub use captured::Captured;
pub use cartpole::CartPoleDynamics;
pub use grid_world::GridWorldDynamics;
pub use minatar::{minatar_row, minatar_state};
pub use mountain_car::MountainCarDynamics;
pub use one_kernel::OneKernel;
pub use pendulum::{angle_normalize, PendulumDynamics};
pub use philox::{philox4x32_10, philox4x32_10_tensors, unit_float, PhiloxTensors};
pub use reset_stream::{default_depth, ResetStream, Restarts};
pub use tensor_env::{TensorEnv, TensorEnvSnapshot, TensorStep};

use rlgraph_core::{Backend, CoreError, Device, Result};
use rlgraph_envs::{Env, GridWorld};

/// The ids [`make`] knows.
pub const TENSOR_ENV_IDS: &[&str] = &[
    "CartPole-v1",
    "MountainCar-v0",
    "Acrobot-v1",
    "Pendulum-v1",
    "GridWorld-<map>[-ftjb][-xy|-xy+orientation|-camera]",
    "MinAtar/Asterix-v1",
    "MinAtar/Breakout-v1",
    "MinAtar/Freeway-v1",
    "MinAtar/Seaquest-v1",
    "MinAtar/SpaceInvaders-v1",
    "MinAtar/Asterix-v0",
    "MinAtar/Breakout-v0",
    "MinAtar/Freeway-v0",
    "MinAtar/Seaquest-v0",
    "MinAtar/SpaceInvaders-v0",
];

/// `num_envs` copies of environment `id` on `device`, their start states streamed from
/// `seed` ([`default_depth`] per copy).
pub fn make<B: Backend>(id: &str, num_envs: usize, seed: u64, device: Device) -> Result<Box<dyn TensorEnv<B>>> {
    let depth = default_depth(num_envs);
    make_with(id, num_envs, seed, device, Restarts::Stream { depth })
}

/// `num_envs` copies of environment `id` on `device`, restarting as `restarts` says, keyed by
/// `seed` ([`Restarts::Philox`] draws on the device and never cycles). MinAtar's games draw
/// their restarts and sticky actions from counters in their own rows under `seed`, whatever
/// `restarts` says.
pub fn make_with<B: Backend>(
    id: &str,
    num_envs: usize,
    seed: u64,
    device: Device,
    restarts: Restarts,
) -> Result<Box<dyn TensorEnv<B>>> {
    let host_err = |e: rlgraph_envs::EnvError| CoreError::Config {
        at: format!("tensor env {id}"),
        reason: e.to_string(),
    };
    let spaces = || -> Result<_> {
        let host = rlgraph_envs::make(id, seed).map_err(host_err)?;
        Ok((host.state_space().clone(), host.action_space().clone()))
    };
    let n = num_envs;
    if let Some(envs) = minatar::make(id, n, seed, device, spaces) {
        return envs;
    }
    Ok(match id {
        "CartPole-v1" | "cartpole" => boxed(
            CartPoleDynamics::<B>::new(n, device)?,
            n,
            device,
            seed,
            restarts,
            spaces()?,
        )?,
        "MountainCar-v0" | "mountaincar" => boxed(
            MountainCarDynamics::<B>::new(n, device)?,
            n,
            device,
            seed,
            restarts,
            spaces()?,
        )?,
        "Acrobot-v1" | "acrobot" => boxed(
            AcrobotDynamics::<B>::new(n, device)?,
            n,
            device,
            seed,
            restarts,
            spaces()?,
        )?,
        "Pendulum-v1" | "pendulum" => boxed(
            PendulumDynamics::<B>::new(n, device)?,
            n,
            device,
            seed,
            restarts,
            spaces()?,
        )?,
        _ => match id.strip_prefix("GridWorld-") {
            Some(rest) => {
                let world = GridWorld::from_id_suffix(rest).map_err(host_err)?;
                let spaces = (world.state_space().clone(), world.action_space().clone());
                // The start state is fixed, so one row per copy is the whole stream.
                let restarts = match restarts {
                    Restarts::Stream { .. } => Restarts::Stream { depth: 1 },
                    Restarts::Philox => Restarts::Philox,
                };
                boxed(
                    GridWorldDynamics::<B>::new(id, &world, device)?,
                    n,
                    device,
                    seed,
                    restarts,
                    spaces,
                )?
            }
            None => {
                return Err(CoreError::Config {
                    at: format!("tensor env {id}"),
                    reason: format!("unknown tensor environment; known: {}", TENSOR_ENV_IDS.join(", ")),
                })
            }
        },
    })
}

/// `n` copies of `dynamics` as a boxed [`TensorEnv`]: what every arm of [`make_with`] builds.
fn boxed<B: Backend, D: Dynamics<B> + 'static>(
    dynamics: D,
    n: usize,
    device: Device,
    seed: u64,
    restarts: Restarts,
    spaces: (rlgraph_core::spaces::Space, rlgraph_core::spaces::Space),
) -> Result<Box<dyn TensorEnv<B>>> {
    Ok(Box::new(Batched::with_restarts(
        dynamics, n, device, seed, restarts, spaces,
    )?))
}
