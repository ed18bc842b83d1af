//! `SacAgent`: soft actor-critic (Haarnoja et al. 2018), as RLgraph's `SACAgent`: a
//! tanh-squashed Gaussian policy for bounded continuous actions, or for discrete ones a
//! Gumbel-softmax policy whose relaxed one-hot actions the critics read (RLgraph's
//! `gumbel_softmax_temperature`; the environment gets their argmax); twin critics with
//! Polyak-averaged targets, and a temperature alpha tuned toward a target entropy.
//!
//! Composed of the roles: an actor from [`crate::sac_actor`], one-step transitions into a
//! uniform replay memory ([`OffPolicy`]), and the [`SacLearner`]. The actor takes the
//! learner's weights after every update.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Result};
use serde_json::Value as Json;

use crate::actor::GraphActor;
use crate::agent_parts::{AgentParts, SAMPLES_ITS_POLICY};
use crate::composed_agent::ComposedAgent;
use crate::off_policy::{OffPolicy, OffPolicyRoles, ReplaySettings};
use crate::sac::config::SacConfig;
use crate::sac::learner::{sac_actor_with, SacLearner};

/// How SAC's roles are made.
pub struct SacRoles;

/// SAC's part of a composed agent: one-step transitions into a uniform replay memory, and
/// updates on batches sampled from it.
pub type Sac = OffPolicy<SacRoles>;

/// A SAC agent on backend `B`: an actor, a replay memory and a learner, composed in one
/// process.
pub type SacAgent<B> = ComposedAgent<B, Sac>;

impl<B: Backend> OffPolicyRoles<B> for SacRoles {
    type Config = SacConfig;
    type Learner = SacLearner<B>;

    const NAME: &'static str = "SAC";
    const UNUSED_PARTS: &'static [(&'static str, &'static str)] = &[
        ("exploration", SAMPLES_ITS_POLICY),
        ("memory", "set `memory_spec.capacity` in the config"),
    ];
    // RLgraph's SAC acts from its policy from the first step.
    const WARMS_UP_UNIFORMLY: bool = false;

    fn parse(spec: &Json) -> Result<SacConfig> {
        SacConfig::parse(spec)
    }

    fn replay(config: &SacConfig) -> ReplaySettings {
        ReplaySettings {
            discount: config.discount,
            capacity: config.capacity,
            update: config.update.clone(),
        }
    }

    /// A SAC agent's learner and actor for `state_space` and a bounded FloatBox (or scalar
    /// IntBox) `action_space`.
    fn make(
        mut config: SacConfig,
        mut parts: AgentParts<B>,
        state_space: &Space,
        action_space: &Space,
        seed: u64,
    ) -> Result<(SacLearner<B>, GraphActor<B>)> {
        // The critics follow the given optimizer unless the JSON gave them their own.
        if let (Some(optimizer), true) = (&parts.optimizer, config.value_function_optimizer_follows) {
            config.value_function_optimizer = optimizer.clone();
        }
        parts.take_optimizer(&mut config.optimizer);
        Ok((
            SacLearner::with_parts(&config, &parts, state_space, action_space, seed)?,
            sac_actor_with(&config, &parts, state_space, action_space, seed)?,
        ))
    }
}

impl<B: Backend> ComposedAgent<B, Sac> {
    /// The current temperature alpha.
    pub fn alpha(&mut self) -> Result<f64> {
        self.learner.alpha()
    }
}
