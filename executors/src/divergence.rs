//! The divergence guard: a non-finite loss or weight stops training with an error naming the
//! step and the variable, or (when asked) is recorded and training goes on.

use std::collections::BTreeMap;

use rlgraph_core::{CoreError, HostData, HostTensor, Result};

/// What a worker does when training diverges: a loss or a weight that is NaN or infinite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnDivergence {
    /// Stop with [`CoreError::Diverged`] (the default): a NaN policy is worth nothing.
    #[default]
    Stop,
    /// Record the first step it happened at ([`crate::WorkerStats::diverged_at_timestep`]) and go on.
    Warn,
}

impl OnDivergence {
    /// Parses `stop` or `warn`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "stop" => Some(OnDivergence::Stop),
            "warn" => Some(OnDivergence::Warn),
            _ => None,
        }
    }
}

/// The scope path of the first of `variables` holding a NaN or an infinity, if any; model
/// weights come before optimizer slots.
pub fn first_non_finite(variables: &BTreeMap<String, HostTensor>) -> Option<String> {
    let bad =
        |(path, t): &(&String, &HostTensor), slots: bool| path.contains("/optimizer") == slots && !all_finite(&t.data);
    variables
        .iter()
        .find(|w| bad(w, false))
        .or_else(|| variables.iter().find(|w| bad(w, true)))
        .map(|(path, _)| path.clone())
}

fn all_finite(data: &HostData) -> bool {
    match data {
        HostData::F32(v) => v.iter().all(|x| x.is_finite()),
        other => other.to_f64().iter().all(|x| x.is_finite()),
    }
}

/// Watches one run: the first divergence seen, and what to do about it. The variables are
/// read only when something is wrong (or at a checkpoint), since reading them costs a copy.
#[derive(Debug, Default)]
pub(crate) struct DivergenceGuard {
    pub(crate) policy: OnDivergence,
    /// The step of the first divergence, under [`OnDivergence::Warn`].
    pub(crate) diverged_at: Option<u64>,
}

impl DivergenceGuard {
    /// A guard that has seen nothing yet.
    pub(crate) fn new(policy: OnDivergence) -> Self {
        DivergenceGuard {
            policy,
            diverged_at: None,
        }
    }

    /// Checks the loss of an update at `step`; a non-finite one names the first non-finite
    /// of `variables` too, if there is one.
    pub(crate) fn check_loss(
        &mut self,
        step: u64,
        loss: f64,
        variables: impl FnOnce() -> Result<BTreeMap<String, HostTensor>>,
    ) -> Result<()> {
        if loss.is_finite() || self.diverged_at.is_some() {
            return Ok(());
        }
        let what = match first_non_finite(&variables()?) {
            Some(path) => format!("the loss is {loss} and variable '{path}' is not finite"),
            None => format!("the loss is {loss}"),
        };
        self.raise(step, what)
    }

    /// Checks every one of `variables` at `step` (before a checkpoint is written, and at the
    /// end).
    pub(crate) fn check_weights(
        &mut self,
        step: u64,
        variables: impl FnOnce() -> Result<BTreeMap<String, HostTensor>>,
    ) -> Result<()> {
        if self.diverged_at.is_some() {
            return Ok(());
        }
        match first_non_finite(&variables()?) {
            Some(path) => self.raise(step, format!("variable '{path}' is not finite")),
            None => Ok(()),
        }
    }

    fn raise(&mut self, step: u64, what: String) -> Result<()> {
        match self.policy {
            OnDivergence::Stop => Err(CoreError::Diverged { step, what }),
            OnDivergence::Warn => {
                self.diverged_at = Some(step);
                Ok(())
            }
        }
    }
}
