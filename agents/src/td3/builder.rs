//! `Td3`: TD3's part of a composed agent (Fujimoto et al. 2018, at CleanRL's
//! `td3_continuous_action` settings): one-step transitions into a uniform replay memory
//! ([`OffPolicy`]), actions drawn uniformly at random for the first `steps_before_update`
//! steps, then the policy's with Gaussian noise.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::agent_parts::AgentParts;
use crate::composed_agent::ComposedAgent;
use crate::off_policy::{OffPolicy, OffPolicyRoles, ReplaySettings};
use crate::td3::config::Td3Config;
use crate::td3::learner::{td3_actor, Td3Learner};

/// How TD3's roles are made.
pub struct Td3Roles;

/// TD3's part of a composed agent.
pub type Td3 = OffPolicy<Td3Roles>;

/// A TD3 agent on backend `B`: an actor, a replay memory and a learner in one process.
pub type Td3Agent<B> = ComposedAgent<B, Td3>;

impl<B: Backend> OffPolicyRoles<B> for Td3Roles {
    type Config = Td3Config;
    type Learner = Td3Learner<B>;

    const NAME: &'static str = "TD3";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[
        ("exploration", "set `exploration_noise` in the config"),
        ("memory", "set `memory_spec.capacity` in the config"),
    ];
    const WARMS_UP_UNIFORMLY: bool = true;

    fn parse(spec: &Json) -> Result<Td3Config> {
        Td3Config::parse(spec)
    }

    fn replay(config: &Td3Config) -> ReplaySettings {
        ReplaySettings {
            discount: config.discount,
            capacity: config.capacity,
            update: config.update.clone(),
        }
    }

    /// TD3's learner and actor for `state_space` and a bounded FloatBox `action_space`.
    fn make(
        mut config: Td3Config,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<(Td3Learner<B>, GraphActor<B>)> {
        parts.take_optimizer(&mut config.optimizer);
        Ok((
            Td3Learner::new(&config, &parts, state_space, action_space, seed)?,
            td3_actor(&config, &parts, state_space, action_space, seed)?,
        ))
    }
}
