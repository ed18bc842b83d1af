//! `check_env`: whether an environment keeps the `Env` contract, as Gymnasium's `check_env`
//! checks a Python one, so that an environment of one's own fails here, by name, rather than
//! deep inside a training run.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::Value;

use crate::env::{Env, EnvError, Result};

/// One observed transition: the observation, the reward and the two episode ends.
type Seen = (Value, f64, bool, bool);

/// Checks `env` over `steps` actions drawn from its action space (with an RNG seeded from
/// `seed`), resetting whenever an episode ends:
///
/// - every observation, from `reset` and from `step`, lies in the state space;
/// - every reward is a finite number;
/// - where an observation is a dict with an `action_mask` (1 for an allowed action), the
///   action drawn is one the mask allows;
/// - the run is reproducible: `reset(Some(seed))` and the same actions give the same
///   observations, rewards and episode ends a second time.
///
/// The error names the step and what is wrong. The environment is left mid-episode.
///
/// ```
/// use rlgraph_envs::{check_env, make};
///
/// let mut env = make("CartPole-v1", 0)?;
/// check_env(env.as_mut(), 7, 300)?;
/// # Ok::<(), rlgraph_envs::EnvError>(())
/// ```
pub fn check_env(env: &mut dyn Env, seed: u64, steps: usize) -> Result<()> {
    let first = play(env, seed, steps)?;
    let second = play(env, seed, steps)?;
    for (i, (a, b)) in first.iter().zip(&second).enumerate() {
        if a != b {
            return Err(broken(
                env,
                format!(
                    "not reproducible from its seed: at transition {i} (0 is the first reset) the first run \
                     saw {} and the second {}; reseed every random choice from reset(Some(seed))",
                    shown(a),
                    shown(b)
                ),
            ));
        }
    }
    Ok(())
}

/// Resets `env` with `seed` and takes `steps` seeded random actions, checking each result.
fn play(env: &mut dyn Env, seed: u64, steps: usize) -> Result<Vec<Seen>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen = Vec::with_capacity(steps + 1);
    let first = env.reset(Some(seed))?;
    check_observation(env, &first, "reset(Some(seed))")?;
    seen.push((first, 0.0, false, false));
    for i in 1..=steps {
        let action = draw(env, seen.last().map(|s| &s.0), &mut rng).ok_or_else(|| {
            broken(
                env,
                format!("the observation before step {i} has an action_mask that allows no action"),
            )
        })?;
        let step = env
            .step(&action)
            .map_err(|e| broken(env, format!("step {i} with action {}: {e}", action.to_json())))?;
        check_observation(env, &step.observation, &format!("step {i}"))?;
        if !step.reward.is_finite() {
            return Err(broken(
                env,
                format!("step {i} gives the reward {}; rewards must be finite", step.reward),
            ));
        }
        let over = step.terminated || step.truncated;
        seen.push((step.observation, step.reward, step.terminated, step.truncated));
        if over {
            let obs = env.reset(None)?;
            check_observation(env, &obs, &format!("reset after step {i}"))?;
            seen.push((obs, 0.0, false, false));
        }
    }
    Ok(seen)
}

/// An action from the action space, one the `action_mask` of observation `obs` allows where it
/// has one (drawn again until it does); `None` when the mask allows none.
fn draw(env: &dyn Env, obs: Option<&Value>, rng: &mut ChaCha8Rng) -> Option<Value> {
    let mask: Option<Vec<bool>> = match obs {
        Some(Value::Dict(entries)) => match entries.get("action_mask") {
            Some(Value::Uint8(m)) => Some(m.data().iter().map(|&x| x != 0).collect()),
            Some(Value::Bool(m)) => Some(m.data().to_vec()),
            _ => None,
        },
        _ => None,
    };
    let Some(mask) = mask else {
        return Some(env.action_space().sample(None, rng));
    };
    if !mask.contains(&true) {
        return None;
    }
    // Rejection keeps the action space's own dtype and shape.
    (0..10_000).map(|_| env.action_space().sample(None, rng)).find(|a| {
        let index = match a {
            Value::Int32(x) if x.data().len() == 1 => x.data()[0] as i64,
            Value::Int64(x) if x.data().len() == 1 => x.data()[0],
            _ => return true,
        };
        usize::try_from(index).is_ok_and(|i| mask.get(i) == Some(&true))
    })
}

fn check_observation(env: &dyn Env, obs: &Value, at: &str) -> Result<()> {
    if env.state_space().contains(obs) {
        return Ok(());
    }
    Err(broken(
        env,
        format!(
            "{at} gives the observation {}, which is not in the state space {}",
            obs.to_json(),
            env.state_space().describe()
        ),
    ))
}

fn broken(env: &dyn Env, reason: String) -> EnvError {
    EnvError::Contract {
        env: env.id().into(),
        reason,
    }
}

fn shown((obs, reward, terminated, truncated): &Seen) -> String {
    format!(
        "observation {}, reward {reward}, terminated {terminated}, truncated {truncated}",
        obs.to_json()
    )
}
