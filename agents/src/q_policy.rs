//! `q_policy`: a plain Q-network policy, a network and a linear action adapter with one
//! output per action, whose `get_q_values(nn_inputs)` returns the Q-values.
//!
//! DQN uses this rather than the distribution-based `policy`: it never samples from a
//! distribution, so its variables must not wait on one.

use rlgraph_components::{dense, neural_network, DenseSpec};
use rlgraph_core::{Backend, Component, Param};

/// A Q-network named `name` over `num_actions` actions.
pub fn q_policy<B: Backend>(name: &str, layers: Vec<Component<B>>, num_actions: usize) -> Component<B> {
    Component::new(name)
        .with_sub(neural_network("neural-network", layers))
        .with_sub(dense("action-adapter", DenseSpec::new(num_actions)))
        .api("get_q_values", vec![Param::new("nn_inputs")], |ctx, args| {
            let h = ctx.call("neural-network", "call", &[args.get(0)?])?;
            ctx.call("action-adapter", "call", &h)
        })
}
