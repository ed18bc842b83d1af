//! PPO on device-resident environments: the agent acts on the copies' observations and
//! learns from their rollouts without either leaving the device (GAE and the minibatches
//! included). Only PPO's entry offers it; a recurrent policy is refused when the config is read.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, Device, Result};
use serde_json::Value as Json;

use super::builder::PgAgent;
use super::config::PgConfig;
use crate::tensor_rollouts::{TensorAgent, TensorAlgorithm, TensorRollout};

/// The PPO config `spec` describes, if the device worker can train it: a memoryless policy;
/// a recurrent one is refused by its key.
pub(crate) fn tensor_config(spec: &Json) -> Result<PgConfig> {
    let config = PgConfig::parse(spec)?;
    if config.recurrence.is_some() {
        return Err(CoreError::Config {
            at: "config.network_spec".into(),
            reason: "device-resident environments train memoryless policies; train a recurrent policy on a \
                     native or gym: environment"
                .into(),
        });
    }
    Ok(config)
}

impl<B: Backend> TensorAlgorithm<B> for PgConfig {
    fn device(&self) -> Device {
        self.device
    }

    fn agent(&self, state_space: &Space, action_space: &Space, seed: u64) -> Result<Box<dyn TensorAgent<B>>> {
        Ok(Box::new(PgAgent::<B>::new(
            self.clone(),
            state_space,
            action_space,
            seed,
        )?))
    }
}

impl<B: Backend> TensorAgent<B> for PgAgent<B> {
    fn act_tensors(&mut self, states: &B::Tensor, explore: bool) -> Result<B::Tensor> {
        PgAgent::act_tensors(self, states, explore)
    }

    fn update_from_tensors(&mut self, rollout: &TensorRollout<B>, time_percentage: f64) -> Result<f64> {
        PgAgent::update_from_tensors(self, rollout, time_percentage)
    }

    fn set_recording(&mut self, on: bool) {
        PgAgent::set_recording(self, on)
    }

    fn recording(&self) -> Option<std::result::Result<(), String>> {
        PgAgent::recording(self)
    }
}
