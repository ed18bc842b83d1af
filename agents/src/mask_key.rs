//! Where Dict states carry their action mask (`config.action_mask_key`, or Gymnasium's
//! `action_mask`), and the checks of that key against the environment's spaces.

use rlgraph_components::action_mask::{check_mask, has_mask};
use rlgraph_core::spaces::Space;
use rlgraph_core::{CoreError, Result};

/// Where Dict states carry their action mask: the config's `action_mask_key`, or
/// Gymnasium's `action_mask` where the config names none (then states without it are fine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskKey {
    /// The key.
    pub key: String,
    /// Whether the config named it (then states must carry it).
    pub explicit: bool,
}

/// The mask key (`config.action_mask_key`) where states of `state_space` carry a mask under
/// it, checked against `action_space`; `None` where they carry none (an error where the
/// config named the key).
pub(crate) fn mask_key<'k>(key: &'k MaskKey, state_space: &Space, action_space: &Space) -> Result<Option<&'k str>> {
    let states = state_space.with_batch_rank(false);
    if !has_mask(&states, &key.key) {
        return match key.explicit {
            true => Err(CoreError::Config {
                at: "config.action_mask_key".into(),
                reason: format!(
                    "the states have no entry {:?} to take action masks from: they are {}",
                    key.key,
                    states.describe()
                ),
            }),
            false => Ok(None),
        };
    }
    check_mask(&states, &key.key, action_space)?;
    Ok(Some(&key.key))
}

/// Refuses states of `state_space` that carry an action mask under `key`, for an agent that
/// cannot use one (`agent` names it).
pub(crate) fn refuse_mask(key: &MaskKey, state_space: &Space, agent: &str) -> Result<()> {
    let key = &key.key;
    match has_mask(&state_space.with_batch_rank(false), key) {
        true => Err(CoreError::Config {
            at: format!("states/{key}"),
            reason: format!(
                "{agent} does not take action masks (DQN, PPO, actor-critic and IMPALA do); \
                 drop the mask from the observation or set action_mask_key to another key"
            ),
        }),
        false => Ok(()),
    }
}
