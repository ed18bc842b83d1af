//! The adder role: turns the steps that environment copies observe into the records a replay
//! memory or a queue holds ([`NStepBuffer`], [`RolloutAdder`]), or keeps them as the records
//! themselves ([`Rollout`]). Every adder keeps steps per copy, so each can cut a copy's
//! episode short and rides in checkpoints.

use rlgraph_core::spaces::Value;
use rlgraph_core::{CoreError, HostState, Result};

use crate::agent::Transition;
use crate::carried_memory::StepMemory;
pub(crate) mod n_step;
pub(crate) mod rollout;
pub(crate) mod rollout_adder;

use n_step::NStepBuffer;
use rollout::Rollout;
use rollout_adder::RolloutAdder;

/// One observed step as an adder takes it: the copy, the transition, and what the actor said
/// of it.
#[derive(Clone, Debug, PartialEq)]
pub struct AddedStep {
    /// The environment copy.
    pub env_id: usize,
    /// The step.
    pub transition: Transition,
    /// The log-likelihood the behaviour policy gave the action (IMPALA's adder needs it).
    pub log_prob: Option<f64>,
    /// The memory a recurrent actor acted from.
    pub memory: Option<StepMemory>,
}

impl AddedStep {
    /// A step of copy `env_id` with nothing from the actor beside it.
    pub fn plain(env_id: usize, transition: Transition) -> Self {
        AddedStep {
            env_id,
            transition,
            log_prob: None,
            memory: None,
        }
    }
}

/// Turns observed steps into records, per environment copy.
pub trait Adder: HostState + Send {
    /// What a step completes: n-step transitions, a rollout record, or nothing where the
    /// adder keeps its steps as the records.
    type Records;
    /// Takes a step; returns the records it completes.
    fn add(&mut self, step: AddedStep) -> Result<Self::Records>;
    /// Copy `env_id` restarts without a terminal step: no record reaches across the restart.
    fn cut(&mut self, env_id: usize);
    /// Drops the steps not yet part of a complete record (an agent's `reset`).
    fn drop_partial(&mut self);
}

impl Adder for NStepBuffer {
    type Records = Vec<Transition>;

    fn add(&mut self, step: AddedStep) -> Result<Vec<Transition>> {
        Ok(self.push(step.env_id, step.transition))
    }

    fn cut(&mut self, env_id: usize) {
        NStepBuffer::cut(self, env_id);
    }

    fn drop_partial(&mut self) {
        self.clear();
    }
}

impl Adder for RolloutAdder {
    type Records = Option<Value>;

    /// Refuses a step without the behaviour policy's log-likelihood.
    fn add(&mut self, step: AddedStep) -> Result<Option<Value>> {
        let log_prob = step.log_prob.ok_or_else(|| CoreError::Config {
            at: format!("rollout-adder/add(env_id {})", step.env_id),
            reason: "a rollout step needs the log-likelihood its action was chosen with".into(),
        })?;
        self.push(step.env_id, step.transition, log_prob, step.memory)
    }

    fn cut(&mut self, env_id: usize) {
        RolloutAdder::cut(self, env_id);
    }

    fn drop_partial(&mut self) {
        self.clear();
    }
}

impl Adder for Rollout {
    type Records = ();

    fn add(&mut self, step: AddedStep) -> Result<()> {
        match step.memory {
            Some(memory) => self.push_with_memory(step.env_id, step.transition, memory),
            None => self.push(step.env_id, step.transition),
        }
        Ok(())
    }

    fn cut(&mut self, env_id: usize) {
        Rollout::cut(self, env_id);
    }

    /// Nothing: every held step is already a record, and stays.
    fn drop_partial(&mut self) {}
}
