//! `WeightSnapshot`: the policy's variables as a learner publishes them, with a version, so an
//! actor anywhere (another thread, process or machine) knows which policy it acts with.

use std::collections::BTreeMap;

use rlgraph_core::{Backend, GraphExecutor, HostTensor, Result};

/// The policy's variables at one publication of a learner.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightSnapshot {
    /// Publications before this one: the first snapshot is version 1, and each later one is
    /// one more.
    pub version: u64,
    /// The policy's variables by scope path (targets and optimizer slots are never in it).
    pub weights: BTreeMap<String, HostTensor>,
}

/// Publishes snapshots of the trainable variables under one scope of a graph.
#[derive(Clone, Debug)]
pub(crate) struct Publisher {
    /// The scope path prefix of the policy's variables (`"dqn-agent/policy/"`).
    scope: String,
}

impl Publisher {
    /// A publisher of the trainable variables whose paths start with `scope`.
    pub fn new(scope: impl Into<String>) -> Self {
        Publisher { scope: scope.into() }
    }

    /// The next snapshot of `exec`'s policy variables; `version` counts the publications
    /// (it lives in the learner's checkpointed counters).
    pub fn publish<B: Backend>(&self, exec: &GraphExecutor<B>, version: &mut u64) -> Result<WeightSnapshot> {
        let weights = self.weights(exec)?;
        Ok(WeightSnapshot {
            version: Self::bump(version),
            weights,
        })
    }

    /// The version of a publication made in place (an actor in the same process takes the
    /// weights straight from the learner's graph).
    pub fn bump(version: &mut u64) -> u64 {
        *version += 1;
        *version
    }

    fn weights<B: Backend>(&self, exec: &GraphExecutor<B>) -> Result<BTreeMap<String, HostTensor>> {
        exec.variable_infos()
            .iter()
            .filter(|info| info.decl.trainable && info.path.starts_with(&self.scope))
            .map(|info| Ok((info.path.clone(), exec.get_variable(&info.path)?)))
            .collect()
    }
}
