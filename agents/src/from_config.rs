//! `build_agent`: any agent from its RLgraph config, chosen by the config's `type`.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Result};
use serde_json::Value as Json;

use crate::agent::Agent;
use crate::algorithm_registry::{self, Picked};
use crate::frame_storage::WorkerLayout;
use crate::normalizer::NormalizeSpec;
use crate::worker_preprocessing::PreprocessedAgent;

/// Builds the agent `spec` describes (its `type`: a shipped algorithm, see
/// [`crate::agent_types`], or one registered with [`crate::register_algorithm`]) for the given
/// spaces, with every random choice drawn from `seed`. A `preprocessing_spec` that keeps
/// state (`sequence`, `moving_standardize`) runs per environment copy on the acting side
/// ([`PreprocessedAgent`]), and the agent learns from preprocessed states: bytes, where the
/// observation is bytes and its preprocessing allows ([`WorkerLayout`]).
pub fn build_agent<B: Backend>(
    spec: &Json,
    state_space: &Space,
    action_space: &Space,
    seed: u64,
) -> Result<Box<dyn Agent + Send>> {
    // An environment's float bounds describe typical observations rather than promise them
    // (Gymnasium's LunarLander-v3 reports heights above its 2.5), and one value beyond them
    // must not end a run.
    let state_space = &without_float_bounds(state_space);
    let Picked { build, wrapped } = algorithm_registry::pick::<B>(spec)?;
    if !wrapped {
        return build(spec, state_space, action_space, seed);
    }
    // The normalizer runs around the agent, so the algorithms' parsers never see its key
    // (and the layouts that build roles without `build_agent` refuse it by name).
    let normalize = normalize_spec(spec)?;
    let spec = &without_key(spec, "normalize_spec");
    let layout = WorkerLayout::plan::<B>(spec, state_space, seed)?;
    if layout.is_none() && normalize.is_none() {
        return build(spec, state_space, action_space, seed);
    }
    let (specs, inner) = match layout {
        Some(layout) => (Some(layout.worker_specs), layout.inner_spec),
        None => (None, spec.clone()),
    };
    let normalize = normalize.as_ref().map(|(n, gamma)| (n, *gamma));
    let agent = PreprocessedAgent::<B>::with_normalizer(specs, normalize, state_space, seed, |preprocessed| {
        build(&inner, preprocessed, action_space, seed)
    })?;
    Ok(Box::new(agent))
}

/// Reads `spec` as [`build_agent`] reads it, without spaces or a backend: every key the
/// agent reads is checked (its path named on error), but nothing is built, so checks that
/// need the environment's spaces are left to `build_agent`.
pub fn check_config(spec: &Json) -> Result<()> {
    // As `build_agent`: the normalizer wraps every agent but the random one, which refuses it.
    let (wrapped, check) = algorithm_registry::checker(spec)?;
    if !wrapped {
        return check(spec);
    }
    normalize_spec(spec)?;
    check(&without_key(spec, "normalize_spec"))
}

/// The config's `normalize_spec`, with the discount its reward scaling uses (the config's
/// `discount`, 0.99 when absent, as SB3's `VecNormalize`).
fn normalize_spec(spec: &Json) -> Result<Option<(NormalizeSpec, f64)>> {
    let Some(n) = spec.get("normalize_spec") else {
        return Ok(None);
    };
    let parsed: NormalizeSpec = serde_json::from_value(n.clone())
        .map_err(|e| crate::agent_spec::config("config.normalize_spec", e.to_string()))?;
    let gamma = spec.get("discount").and_then(Json::as_f64).unwrap_or(0.99);
    Ok(Some((parsed, gamma)))
}

/// `spec` without `key` (a copy).
fn without_key(spec: &Json, key: &str) -> Json {
    let mut spec = spec.clone();
    if let Some(map) = spec.as_object_mut() {
        map.remove(key);
    }
    spec
}

/// `space` with its float bounds dropped: what an agent checks its states against, and a
/// plain Normal policy's actions. Dtypes, shapes, integer ranges and NaN are still checked.
pub fn without_float_bounds(space: &Space) -> Space {
    space.map(|_, leaf| match leaf {
        Space::Float(_) => {
            let ranks = leaf.ranks().unwrap_or_default();
            let dtype = leaf.dtype().unwrap_or(rlgraph_core::spaces::Dtype::Float32);
            let open = FloatBox::new(leaf.shape().unwrap_or(&[]).to_vec()).with_dtype(dtype);
            open.map_or_else(|_| leaf.clone(), |open| Space::from(open).with_ranks(ranks))
        }
        other => other.clone(),
    })
}
