//! Environments a user registers by id, so that [`crate::make`] builds them as it builds the
//! built-in ones: in configs, in `rlgraph train --env`, in workers and in evaluation rounds.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use crate::env::{Env, EnvError, Result};

/// Makes a registered environment, seeded.
type Maker = Arc<dyn Fn(u64) -> Result<Box<dyn Env>> + Send + Sync>;

fn registry() -> &'static RwLock<BTreeMap<String, Maker>> {
    static REGISTRY: OnceLock<RwLock<BTreeMap<String, Maker>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(BTreeMap::new()))
}

/// Registers `id` for the whole process, so that `make(id, seed)` calls `maker(seed)`, as
/// Gymnasium's `register` and RLlib's `register_env` do. An id that a built-in environment,
/// the Gymnasium bridge (`gym:`) or another registration already answers to is refused, and
/// nothing changes.
///
/// ```
/// use rlgraph_envs::{make, register_env, CartPole, Env};
///
/// register_env("MyCartPole-v0", |seed| Ok(Box::new(CartPole::new(seed)) as Box<dyn Env>))?;
/// let env = make("MyCartPole-v0", 3)?;
/// assert_eq!(env.id(), "CartPole-v1");
/// let again = register_env("MyCartPole-v0", |seed| Ok(Box::new(CartPole::new(seed)) as Box<dyn Env>));
/// assert!(again.unwrap_err().to_string().contains("already registered"));
/// # Ok::<(), rlgraph_envs::EnvError>(())
/// ```
pub fn register_env(id: &str, maker: impl Fn(u64) -> Result<Box<dyn Env>> + Send + Sync + 'static) -> Result<()> {
    let refuse = |reason: String| EnvError::Unknown { id: id.into(), reason };
    if id.trim().is_empty() || id.trim() != id {
        return Err(refuse(
            "an environment id must be non-empty, without spaces at its ends".into(),
        ));
    }
    if crate::builtin(id, 0).is_some() || id.starts_with(crate::gym::GYM_PREFIX) || id.starts_with("GridWorld-") {
        return Err(refuse(
            "a built-in environment has this id; register yours under another".into(),
        ));
    }
    let mut envs = registry()
        .write()
        .map_err(|_| refuse("the registry was poisoned by a panic while registering".into()))?;
    if envs.contains_key(id) {
        return Err(refuse(
            "already registered in this process; register each id once".into(),
        ));
    }
    envs.insert(id.into(), Arc::new(maker));
    Ok(())
}

/// The ids registered so far, in order.
pub fn registered_envs() -> Vec<String> {
    registry()
        .read()
        .map(|envs| envs.keys().cloned().collect())
        .unwrap_or_default()
}

/// The registered environment `id`, seeded, if one is registered.
pub(crate) fn make_registered(id: &str, seed: u64) -> Option<Result<Box<dyn Env>>> {
    // The maker is cloned out so that it runs without the lock (it may make others).
    let maker = registry().read().ok()?.get(id).cloned()?;
    Some(maker(seed))
}
