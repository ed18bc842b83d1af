//! State that lives on the host beside the graph (replay memories, for example), so that one
//! checkpoint file holds everything an agent needs to continue where it stopped.

use std::collections::BTreeMap;

use crate::backend::HostTensor;
use crate::error::{CoreError, Result};

/// A snapshot of host state: named tensors for the bulk, JSON for the small rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SavedState {
    /// Bulk data (stored records, priorities) by name.
    pub tensors: BTreeMap<String, HostTensor>,
    /// Counters and settings (write index, size, maximum priority).
    pub meta: serde_json::Value,
}

/// Host state that takes part in `GraphExecutor::save_with` and `restore_with`.
///
/// Restoring is two-phase so that a bad file changes nothing: every participant's
/// `check_state` runs before any `load_state`.
pub trait HostState {
    /// A snapshot of the current state.
    fn save_state(&self) -> Result<SavedState>;
    /// Says why `state` cannot be loaded into this object, if it cannot; changes nothing.
    fn check_state(&self, state: &SavedState) -> Result<()>;
    /// Replaces the current state with `state`, which `check_state` accepted.
    fn load_state(&mut self, state: SavedState) -> Result<()>;
}

/// The first phase of a two-phase restore: each target's saved state (found by `saved`,
/// from its name) checked by the target; nothing changes. A target the checkpoint lacks is
/// `missing(name)`. Pass the result to [`load_checked`].
pub fn check_each(
    targets: &[(&str, &mut dyn HostState)],
    mut saved: impl FnMut(&str) -> Option<SavedState>,
    missing: impl Fn(String) -> CoreError,
) -> Result<Vec<SavedState>> {
    targets
        .iter()
        .map(|(name, target)| {
            let state =
                saved(name).ok_or_else(|| missing(format!("no host state named {name:?} in the checkpoint")))?;
            target.check_state(&state)?;
            Ok(state)
        })
        .collect()
}

/// The second phase: loads the states [`check_each`] accepted, in the same order.
pub fn load_checked(targets: &mut [(&str, &mut dyn HostState)], states: Vec<SavedState>) -> Result<()> {
    targets
        .iter_mut()
        .zip(states)
        .try_for_each(|((_, target), state)| target.load_state(state))
}
