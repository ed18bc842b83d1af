//! `Ga3cSpec`: the GA3C executor's settings, read from an agent config's
//! `execution_spec` (`"executor": "ga3c"`, `"ga3c_spec": {...}`).

use rlgraph_core::{CoreError, Result};
use serde::Deserialize;
use serde_json::Value as Json;

/// How many agent, predictor and trainer threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadCounts {
    /// Agents (NA): each steps one environment.
    pub agents: usize,
    /// Predictors (NP): each runs batched forward passes of the actor.
    pub predictors: usize,
    /// Trainers (NT): each batches experience into updates of the one learner.
    pub trainers: usize,
}

/// The `ga3c_spec` keys; every one is optional.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Ga3cSpec {
    /// Agent threads at the start.
    pub num_agents: usize,
    /// Predictor threads at the start.
    pub num_predictors: usize,
    /// Trainer threads at the start.
    pub num_trainers: usize,
    /// The most agents the adjustment may reach.
    pub max_agents: usize,
    /// The most predictors the adjustment may reach.
    pub max_predictors: usize,
    /// The most trainers the adjustment may reach.
    pub max_trainers: usize,
    /// The most states in one forward pass (GA3C's `PREDICTION_BATCH_SIZE`).
    pub prediction_batch_size: usize,
    /// Frames a trainer gathers before it updates (GA3C's `TRAINING_MIN_BATCH_SIZE`); by
    /// default the agent's `update_spec.batch_size` (IMPALA: that many rollouts' frames).
    pub training_min_batch_size: Option<usize>,
    /// Steps an agent takes before it sends its experience (GA3C's `TIME_MAX`); an episode's
    /// end sends it sooner. IMPALA sends rollouts of `worker_sample_size` steps instead.
    pub t_max: usize,
    /// Experience segments the training queue holds before agents wait (GA3C's
    /// `MAX_QUEUE_SIZE`).
    pub training_queue_capacity: usize,
    /// Tune the thread counts while running (GA3C's `DYNAMIC_SETTINGS`).
    pub dynamic_adjustment: bool,
    /// Seconds of each measuring window of the adjustment.
    pub adjustment_period_seconds: f64,
}

impl Default for Ga3cSpec {
    fn default() -> Self {
        // GA3C's defaults where it has them (32 agents, 2 predictors, 2 trainers, t_max 5,
        // batches of up to 128); the maxima bound what the adjustment may spawn.
        Ga3cSpec {
            num_agents: 32,
            num_predictors: 2,
            num_trainers: 2,
            max_agents: 128,
            max_predictors: 8,
            max_trainers: 8,
            prediction_batch_size: 128,
            training_min_batch_size: None,
            t_max: 5,
            training_queue_capacity: 100,
            dynamic_adjustment: true,
            adjustment_period_seconds: 5.0,
        }
    }
}

impl Ga3cSpec {
    /// The GA3C settings of an agent `config` whose `execution_spec.executor` is `"ga3c"`;
    /// `None` for any other executor. Errors name the key (`execution_spec.ga3c_spec.t_max`).
    pub fn from_config(config: &Json) -> Result<Option<Ga3cSpec>> {
        // Written settings are checked whatever the executor, so a typo in them is refused
        // when the config loads (as the config schema refuses it).
        let spec = Self::parse(config)?;
        match config["execution_spec"].get("executor") {
            Some(Json::String(name)) if name == "ga3c" => Ok(Some(spec)),
            _ => Ok(None),
        }
    }

    /// The `execution_spec.ga3c_spec` of an agent `config` whatever executor it names (the
    /// defaults where it has none).
    pub fn parse(config: &Json) -> Result<Ga3cSpec> {
        let spec = match config["execution_spec"].get("ga3c_spec") {
            None | Some(Json::Null) => Ga3cSpec::default(),
            Some(j) => serde_path_to_error::deserialize(j).map_err(|e| CoreError::Config {
                at: format!("config.execution_spec.ga3c_spec.{}", e.path()),
                reason: e.inner().to_string(),
            })?,
        };
        spec.check()?;
        Ok(spec)
    }

    /// The thread counts at the start.
    pub fn initial_counts(&self) -> ThreadCounts {
        ThreadCounts {
            agents: self.num_agents,
            predictors: self.num_predictors,
            trainers: self.num_trainers,
        }
    }

    /// The most threads of each role.
    pub fn max_counts(&self) -> ThreadCounts {
        ThreadCounts {
            agents: self.max_agents.max(self.num_agents),
            predictors: self.max_predictors.max(self.num_predictors),
            trainers: self.max_trainers.max(self.num_trainers),
        }
    }

    fn check(&self) -> Result<()> {
        let positive = [
            ("num_agents", self.num_agents),
            ("num_predictors", self.num_predictors),
            ("num_trainers", self.num_trainers),
            ("prediction_batch_size", self.prediction_batch_size),
            ("t_max", self.t_max),
            ("training_queue_capacity", self.training_queue_capacity),
            ("training_min_batch_size", self.training_min_batch_size.unwrap_or(1)),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(CoreError::Config {
                at: format!("config.execution_spec.ga3c_spec.{key}"),
                reason: "must be at least 1".into(),
            });
        }
        if !(self.adjustment_period_seconds > 0.0 && self.adjustment_period_seconds.is_finite()) {
            return Err(CoreError::Config {
                at: "config.execution_spec.ga3c_spec.adjustment_period_seconds".into(),
                reason: format!(
                    "must be a positive number of seconds, got {}",
                    self.adjustment_period_seconds
                ),
            });
        }
        Ok(())
    }
}
