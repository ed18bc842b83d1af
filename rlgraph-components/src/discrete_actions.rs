//! Discrete actions for value-based agents: an IntBox action space, or a Dict or Tuple of
//! IntBoxes (RLgraph's container actions, one Q head per action), and the greedy choice
//! from Q-values of any of them.

use rlgraph_core::spaces::{IntBox, Space};
use rlgraph_core::{Backend, ContainerMode, CoreError, GraphFn, Result};

/// One discrete action of an action space: where it sits, its shape and its categories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscreteAction {
    /// Its flat key without the leading `/` (`""` for a primitive action space).
    pub key: String,
    /// The action's own shape (no batch rank); `[]` for one choice per step.
    pub shape: Vec<usize>,
    /// The choices per element.
    pub categories: usize,
}

impl DiscreteAction {
    /// The Q-values (or logits) one batch item needs: one per category per element.
    pub fn units(&self) -> usize {
        self.shape.iter().product::<usize>() * self.categories
    }
}

/// The discrete actions of `action_space` in flat-key order; `who` (such as "DQN") names the
/// user in the error for a leaf that is not a bounded IntBox.
pub fn discrete_actions(action_space: &Space, who: &str) -> Result<Vec<DiscreteAction>> {
    action_space
        .flatten()
        .into_iter()
        .map(|(key, leaf)| match (leaf, leaf.num_categories()) {
            (Space::Int(_), Some(n)) if n > 0 => Ok(DiscreteAction {
                key: key.trim_start_matches('/').to_string(),
                shape: leaf.shape().unwrap_or(&[]).to_vec(),
                categories: n as usize,
            }),
            _ => Err(CoreError::Config {
                at: format!("action_space{key}"),
                reason: format!(
                    "{who} needs bounded IntBox actions (or a Dict or Tuple of them), got {}",
                    leaf.describe()
                ),
            }),
        })
        .collect()
}

/// The graph function `name` that picks, per action element, the category with the largest
/// value of the last axis: Q-values (or logits) `[batch, ..shape, categories]` to actions
/// `[batch, ..shape]`. Container Q-values give container actions of the same structure.
pub fn greedy_fn<B: Backend>(name: &str) -> GraphFn<B> {
    GraphFn::tensors(name, |_, xs| {
        let last = B::shape(xs[0]).len().saturating_sub(1);
        Ok([B::argmax(xs[0], last, false)?])
    })
    .mode(ContainerMode::Split)
    .infer(|ctx, s| {
        let shape = s[0].shape().unwrap_or(&[]);
        let (categories, action_shape) = shape.split_last().ok_or_else(|| CoreError::Component {
            component: ctx.component().into(),
            method: Some("greedy".into()),
            reason: format!("Q-values need a last axis of categories, got {}", s[0].describe()),
        })?;
        let ints = IntBox::new(*categories as i64)?.with_shape(action_shape.to_vec());
        Ok(vec![Space::from(ints).with_ranks(s[0].ranks().unwrap_or_default())])
    })
}
