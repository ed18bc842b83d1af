//! The `Agent` trait workers drive and the transitions they observe.

use std::collections::BTreeMap;
use std::path::Path;

use rlgraph_core::spaces::Value;
use rlgraph_core::{ErasedExecutor, HostState, HostTensor, MetaGraph, Result};

use crate::agent_spec::config;
use crate::update_spec::UpdateSpec;

/// One environment step as an agent observes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The observation the action was taken from.
    pub state: Value,
    /// The action.
    pub action: Value,
    /// The reward.
    pub reward: f64,
    /// The episode reached a terminal state (no bootstrap past it).
    pub terminated: bool,
    /// The episode was cut by a time limit (bootstrap past it is valid, the episode ends).
    pub truncated: bool,
    /// The observation after the action (the episode's last one when it ended).
    pub next_state: Value,
}

/// Runs a graph's `reset` API method (its preprocessors' state), where it has one.
pub(crate) fn reset_graph(graph: &mut dyn ErasedExecutor) -> Result<()> {
    if graph.api_methods().iter().any(|m| m == "reset") {
        graph.execute("reset", &[])?;
    }
    Ok(())
}

/// What a worker needs from an agent, and what the `rlgraph` command uses of one.
pub trait Agent {
    /// One action per state (states from one environment copy each). `time_percentage`
    /// (0 to 1, the share of the run done) drives time-dependent parameters such as epsilon.
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>>;
    /// Records a transition of environment copy `env_id`.
    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()>;
    /// Acting copies `copies` begin new episodes at their next step, among the exploring
    /// copies (`explore`: training) or the greedy ones (evaluation): a recurrent policy zeroes
    /// their memory. An exploring copy whose observed transition ended its episode starts anew
    /// by itself. Memoryless agents have nothing to do.
    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        let _ = (explore, copies);
        Ok(())
    }
    /// One update; `None` when the agent holds too little experience yet.
    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>>;
    /// When to update.
    fn update_spec(&self) -> &UpdateSpec;
    /// Saves everything a resumed run needs (variables, memories, counters, RNGs) and the
    /// `extra` host states beside them, in one file (a worker adds its own this way).
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()>;
    /// Restores a checkpoint written by `save_checkpoint_with`, and the `extra` host states
    /// saved with it; every part is checked before any changes, so on error nothing changes.
    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()>;
    /// Saves everything a resumed run needs (variables, memories, counters, RNGs).
    fn save_checkpoint(&self, path: &Path) -> Result<()> {
        self.save_checkpoint_with(path, &[])
    }
    /// Restores a checkpoint written by `save_checkpoint`; on error nothing changes.
    fn restore_checkpoint(&mut self, path: &Path) -> Result<()> {
        self.restore_checkpoint_with(path, &mut [])
    }
    /// The agent's graph, backend erased (`None` for agents without one, such as the random
    /// agent).
    fn graph(&self) -> Option<&dyn ErasedExecutor>;
    /// The agent's graph, to call its API methods directly (`rlgraph call`).
    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor>;

    /// Every variable by scope path (none without a graph).
    fn get_weights(&self) -> Result<BTreeMap<String, HostTensor>> {
        self.graph().map_or(Ok(BTreeMap::new()), |g| g.variables())
    }
    /// Overwrites variables by scope path; all are checked before any is written.
    fn set_weights(&mut self, weights: &BTreeMap<String, HostTensor>) -> Result<()> {
        match (self.graph(), weights.keys().next()) {
            (Some(g), _) => g.set_variables(weights)?,
            (None, None) => return Ok(()),
            (None, Some(k)) => {
                return Err(config(
                    &format!("set_weights.{k}"),
                    "this agent has no variables".into(),
                ))
            }
        }
        self.weights_changed()
    }
    /// Called after the graph's variables changed outside an update (`set_weights`,
    /// `import_model`): an agent whose actor holds its own copy of the policy refreshes it.
    fn weights_changed(&mut self) -> Result<()> {
        Ok(())
    }
    /// The agent's meta graph, if it has one.
    fn meta_graph(&self) -> Option<&MetaGraph> {
        self.graph().map(|g| g.meta_graph())
    }
    /// Writes the model (every variable) to a safetensors file.
    fn export_model(&self, path: &Path) -> Result<()> {
        self.graph()
            .ok_or_else(|| config("export_model", "this agent has no model".into()))?
            .save(path)
    }
    /// Reads a model written by `export_model`; on error nothing changes.
    fn import_model(&mut self, path: &Path) -> Result<()> {
        self.graph_mut()
            .ok_or_else(|| config("import_model", "this agent has no model".into()))?
            .restore(path)?;
        self.weights_changed()
    }
    /// One update from an external batch of records instead of the agent's own experience
    /// (a Dict with the keys of the agent's update, such as `states`, `actions`, `rewards`,
    /// `terminals`, `next_states`); returns the loss.
    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        let _ = (batch, time_percentage);
        Err(config(
            "update_from_batch",
            "this agent learns from its own experience only".into(),
        ))
    }
    /// Clears what is pending between episodes: preprocessor state (frame stacks, running
    /// statistics) and per-environment buffers. Learned weights and memories stay.
    fn reset(&mut self) -> Result<()> {
        self.graph_mut().map_or(Ok(()), reset_graph)
    }
}

impl<A: Agent + ?Sized> Agent for Box<A> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        (**self).get_actions(states, explore, time_percentage)
    }
    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        (**self).observe(env_id, transition)
    }
    fn begin_episodes(&mut self, explore: bool, copies: &[usize]) -> Result<()> {
        (**self).begin_episodes(explore, copies)
    }
    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        (**self).update(time_percentage)
    }
    fn update_spec(&self) -> &UpdateSpec {
        (**self).update_spec()
    }
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        (**self).save_checkpoint_with(path, extra)
    }
    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        (**self).restore_checkpoint_with(path, extra)
    }
    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        (**self).graph()
    }
    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        (**self).graph_mut()
    }
    fn update_from_batch(&mut self, batch: &Value, time_percentage: f64) -> Result<f64> {
        (**self).update_from_batch(batch, time_percentage)
    }
    fn reset(&mut self) -> Result<()> {
        (**self).reset()
    }
    // Forwarded so that an agent's own versions (which refresh its actor) run through a box.
    fn get_weights(&self) -> Result<BTreeMap<String, HostTensor>> {
        (**self).get_weights()
    }
    fn set_weights(&mut self, weights: &BTreeMap<String, HostTensor>) -> Result<()> {
        (**self).set_weights(weights)
    }
    fn weights_changed(&mut self) -> Result<()> {
        (**self).weights_changed()
    }
    fn import_model(&mut self, path: &Path) -> Result<()> {
        (**self).import_model(path)
    }
    fn export_model(&self, path: &Path) -> Result<()> {
        (**self).export_model(path)
    }
}

/// What the unit tests of the adders step through: scalar float states, two actions.
#[cfg(test)]
pub(crate) mod test_steps {
    use super::Transition;
    use rlgraph_core::spaces::{FloatBox, IntBox, Space, Value};

    /// Step `k`: state `k`, reward 1, next state `k + 1`, no episode end.
    pub fn step(k: usize) -> Transition {
        Transition {
            state: Value::f32(k as f32),
            action: Value::i32(0),
            reward: 1.0,
            terminated: false,
            truncated: false,
            next_state: Value::f32(k as f32 + 1.0),
        }
    }

    /// The spaces of [`step`]'s states and actions.
    pub fn spaces() -> (Space, Space) {
        let floats = Space::from(FloatBox::new(Vec::<usize>::new()));
        (floats, Space::from(IntBox::new(2).unwrap()))
    }
}
