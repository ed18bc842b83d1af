//! Environments: CartPole, MountainCar, Acrobot and Pendulum with Gymnasium's dynamics,
//! Hopper, Walker2d and HalfCheetah on MuJoCo's library in this process, the five MinAtar
//! games with the `minatar` package's dynamics and NumPy's random draws,
//! RLgraph's GridWorld, random and deterministic test environments, and vector
//! environments with auto-reset.
//!
//! ```
//! use rlgraph_envs::{make, Env};
//! use rlgraph_spaces::Value;
//!
//! let mut env = make("CartPole-v1", 0).unwrap();
//! let first = env.reset(Some(42)).unwrap();
//! assert!(env.state_space().contains(&first));
//! let step = env.step(&Value::i32(1)).unwrap();
//! assert_eq!(step.reward, 1.0);
//! ```

pub mod acrobot;
pub mod cartpole;
mod cartpole_no_vel;
mod env;
mod env_check;
mod env_group;
mod env_registry;
mod grid_world;
pub mod gym;
pub mod minatar;
pub mod mountain_car;
pub mod mujoco;
pub mod pendulum;
pub mod render;
mod test_envs;
mod vector_env;

pub use acrobot::Acrobot;
pub use cartpole::CartPole;
pub use cartpole_no_vel::CartPoleNoVel;
pub use env::{
    bad_action, discrete_action, float_action, observation, Env, EnvError, EnvSnapshot, EpisodeClock, Result, Step,
};
pub use env_check::check_env;
pub use env_group::EnvGroup;
pub use env_group::VectorStep;
pub use env_registry::{register_env, registered_envs};
pub use grid_world::{
    ActionType, GridTables, GridWorld, StateRepresentation, FIRE_REWARD, GOAL_REWARD, HOLE_REWARD, MAPS, STEP_REWARD,
};
pub use minatar::MinAtar;
pub use mountain_car::MountainCar;
pub use pendulum::{angle_normalize, Pendulum};
pub use render::RgbFrame;
pub use test_envs::{DeterministicEnv, MaskedChoiceEnv, RandomEnv};
pub use vector_env::{Stepping, VectorEnv};

/// The ids `make` knows.
pub const ENV_IDS: &[&str] = &[
    "CartPole-v1",
    "CartPoleNoVel-v1",
    "MountainCar-v0",
    "Acrobot-v1",
    "Pendulum-v1",
    "GridWorld-<map>[-ftj|-ftjb][-xy|-xy+orientation|-camera]",
    "DeterministicEnv",
    "MaskedChoice-v0",
    "Hopper-v5",
    "Walker2d-v5",
    "HalfCheetah-v5",
    "MinAtar/<Asterix|Breakout|Freeway|Seaquest|SpaceInvaders>-v1 (or -v0: all six actions)",
    "gym:<Gymnasium id>[?key=value&...]",
];

/// An environment by id: `CartPole-v1`, `CartPoleNoVel-v1` (no velocities: a task for
/// recurrent policies), `MountainCar-v0`, `Acrobot-v1`, `Pendulum-v1`,
/// `GridWorld-2x2` (any map of [`MAPS`], optionally followed by `-ftj` or `-ftjb` and by
/// `-xy`, `-xy+orientation` or `-camera`), `DeterministicEnv`, `MaskedChoice-v0` (action masks), the MuJoCo tasks `Hopper-v5`,
/// `Walker2d-v5` and `HalfCheetah-v5` stepped in this process (see [`mujoco`]), the MinAtar games
/// `MinAtar/Breakout-v1` and the others of [`minatar::MINATAR_IDS`] (see [`minatar`]), or any Gymnasium environment
/// through the bridge as `gym:ID` (`gym:ALE/Pong-v5?frameskip=4`; see [`gym::GymEnv`]), or an
/// id registered with [`register_env`].
pub fn make(id: &str, seed: u64) -> Result<Box<dyn Env>> {
    if let Some(env) = builtin(id, seed) {
        return Ok(env);
    }
    if mujoco::is_mujoco_id(id) {
        return Ok(Box::new(mujoco::MujocoEnv::new(id, seed)?));
    }
    if id.starts_with(gym::GYM_PREFIX) {
        return Ok(Box::new(gym::GymEnv::from_id(id, seed)?));
    }
    if let Some(rest) = id.strip_prefix("GridWorld-") {
        return Ok(Box::new(GridWorld::from_id_suffix(rest)?));
    }
    if let Some(made) = env_registry::make_registered(id, seed) {
        return made;
    }
    if id.starts_with(minatar::MINATAR_PREFIX) {
        // Not one of the games: the error names the ones there are.
        return Ok(Box::new(MinAtar::new(id, seed)?));
    }
    let registered = registered_envs();
    let also = match registered.is_empty() {
        true => String::new(),
        false => format!("; registered: {}", registered.join(", ")),
    };
    Err(EnvError::Unknown {
        id: id.into(),
        reason: format!(
            "unknown environment; known: {}{also} (any Gymnasium id through the bridge: gym:ID, as in \
                 gym:Hopper-v4; an environment of your own: rlgraph_envs::register_env)",
            ENV_IDS.join(", ")
        ),
    })
}

/// The built-in environment of a fixed id (not `gym:` or `GridWorld-` ones), seeded.
fn builtin(id: &str, seed: u64) -> Option<Box<dyn Env>> {
    Some(match id {
        "CartPole-v1" | "cartpole" => Box::new(CartPole::new(seed)),
        CartPoleNoVel::ID => Box::new(CartPoleNoVel::new(seed)),
        "MountainCar-v0" | "mountaincar" => Box::new(MountainCar::new(seed)),
        "Acrobot-v1" | "acrobot" => Box::new(Acrobot::new(seed)),
        "Pendulum-v1" | "pendulum" => Box::new(Pendulum::new(seed)),
        "DeterministicEnv" => Box::new(DeterministicEnv::new(0.0, -100.0, 10)),
        MaskedChoiceEnv::ID => Box::new(MaskedChoiceEnv::new(seed)),
        id if minatar::is_minatar_id(id) => Box::new(MinAtar::new(id, seed).ok()?),
        _ => return None,
    })
}
