//! What an algorithm's acting graph is made of, as plain data: the stateless preprocessing,
//! the network, the head that turns its output into actions and the action mask's key. An
//! exporter (ONNX) rebuilds the acting graph from it, so it asks the algorithm rather than
//! reading each algorithm's config itself.

use serde_json::Value as Json;

use crate::recurrence::Recurrence;

/// What turns the network's output into actions.
#[derive(Clone, Debug, PartialEq)]
pub enum ActingHead {
    /// Q-values, one per action, the greedy action their arg-max; with the units of a dueling
    /// state-value stream where the head is dueling.
    QValues {
        /// Units of the dueling state-value stream (`None`: a plain Q head).
        dueling: Option<usize>,
    },
    /// A policy's distribution parameters (a Categorical's logits, a Normal's mean).
    Policy,
}

/// What an algorithm's acting graph is made of, read from its config.
#[derive(Clone, Debug, PartialEq)]
pub struct ActingPlan {
    /// The preprocessing inside the graph, as the config lists it.
    pub preprocessing: Vec<Json>,
    /// The policy network's layers, as the config lists them.
    pub network: Vec<Json>,
    /// The head after the network.
    pub head: ActingHead,
    /// An action adapter the config sets (the exporter refuses one).
    pub action_adapter: Option<Json>,
    /// The key of the action mask in the states, where they carry one.
    pub mask_key: String,
    /// The network split around its LSTM, for a recurrent policy.
    pub recurrence: Option<Recurrence>,
}
