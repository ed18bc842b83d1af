//! Action masks in Gymnasium's convention: a Dict observation carries, under a key (by default
//! `action_mask`), one element per discrete action, non-zero where the action is valid. Here:
//! splitting the mask off the observation, checking it, and masking Q-values or logits with it.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, DType, GraphFn, Result, Tree};

/// The key Gymnasium's environments put their masks under.
pub const DEFAULT_MASK_KEY: &str = "action_mask";

/// What a masked-out Q-value or logit becomes: far below any value a network gives, so no
/// valid action loses to it and a softmax gives it probability 0 exactly; finite, so that a
/// terminal next state with no valid action still bootstraps `0 * max = 0`, not NaN.
pub const MASKED_VALUE: f64 = -1e9;

/// The actions one mask row allows: the indices of its non-zero elements.
pub fn valid_actions(mask_row: &[f64]) -> Vec<usize> {
    mask_row
        .iter()
        .enumerate()
        .filter(|(_, &m)| m != 0.0)
        .map(|(a, _)| a)
        .collect()
}

/// Whether states of `space` carry an action mask under `key`: a Dict with that key.
pub fn has_mask(space: &Space, key: &str) -> bool {
    matches!(space, Space::Dict(d) if d.get(key).is_some())
}

/// The observation part of a masked `space` (a Dict holding the mask under `key`): the one
/// other entry itself, or a Dict of the others.
pub fn observation_space(space: &Space, key: &str) -> Result<Space> {
    let Space::Dict(d) = space else {
        return Err(not_masked(space, key));
    };
    let rest: Vec<(&String, &Space)> = d.entries().iter().filter(|(k, _)| *k != key).collect();
    match rest.as_slice() {
        [] => Err(CoreError::Config {
            at: format!("states/{key}"),
            reason: "the states hold only the action mask; the network needs an observation beside it".into(),
        }),
        [(_, only)] => Ok((*only).clone()),
        more => Ok(Space::dict(more.iter().map(|(k, s)| (k.to_string(), (*s).clone())))?),
    }
}

/// Checks that the mask under `key` of `space` has one element per action of `action_space`
/// (a single bounded IntBox) and is numbers or booleans; the error names both.
pub fn check_mask(space: &Space, key: &str, action_space: &Space) -> Result<()> {
    let at = format!("states/{key}");
    let Space::Dict(d) = space else {
        return Err(not_masked(space, key));
    };
    let mask = d.get(key).ok_or_else(|| not_masked(space, key))?;
    let n = match action_space.with_batch_rank(false) {
        Space::Int(_) if action_space.shape().is_some_and(<[usize]>::is_empty) => action_space.num_categories(),
        _ => None,
    }
    .ok_or_else(|| CoreError::Config {
        at: at.clone(),
        reason: format!(
            "action masks need one discrete action (a bounded IntBox of shape []), not {}",
            action_space.describe()
        ),
    })?;
    let numeric = matches!(mask, Space::Int(_) | Space::Bool(_) | Space::Float(_));
    let shape = mask.shape().unwrap_or(&[]);
    if !numeric || shape != [n as usize] {
        return Err(CoreError::Config {
            at,
            reason: format!(
                "expected a mask of {n} elements (IntBox, BoolBox or FloatBox of shape [{n}]), one per action, got {}",
                mask.describe()
            ),
        });
    }
    Ok(())
}

fn not_masked(space: &Space, key: &str) -> CoreError {
    CoreError::Config {
        at: format!("states/{key}"),
        reason: format!(
            "expected a Dict of states with an action mask under {key:?}, got {}",
            space.describe()
        ),
    }
}

/// The graph function `name`: masked states (a Dict) to their observation part (see
/// [`observation_space`]).
pub fn observation_fn<B: Backend>(name: &str, key: &str) -> GraphFn<B> {
    let (k, infer_key) = (key.to_string(), key.to_string());
    GraphFn::new(name, move |ctx, xs| {
        let Some(Tree::Dict(d)) = xs.first() else {
            return Err(kernel_error(ctx.component(), &k, "the states are not a Dict"));
        };
        let mut rest: Vec<(&String, &Tree<B::Tensor>)> = d.iter().filter(|(key, _)| **key != k).collect();
        Ok(vec![match rest.len() {
            1 => rest.remove(0).1.clone(),
            _ => Tree::Dict(rest.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        }])
    })
    .infer(move |_, s| Ok(vec![observation_space(&s[0], &infer_key)?]))
}

/// The graph function `name`: masked states (a Dict) to their mask as booleans (a `U8`
/// tensor of 1s where the action is valid, 0s elsewhere). With `require_valid` (where an agent must act) a state whose mask allows no
/// action is an error naming it.
pub fn mask_fn<B: Backend>(name: &str, key: &str, require_valid: bool) -> GraphFn<B> {
    let (k, infer_key) = (key.to_string(), key.to_string());
    GraphFn::new(name, move |ctx, xs| {
        let mask = match xs.first() {
            Some(Tree::Dict(d)) => d.get(&k).and_then(Tree::as_leaf),
            _ => None,
        }
        .ok_or_else(|| kernel_error(ctx.component(), &k, "the states have no mask there"))?;
        let zero = B::scalar(0.0, DType::F32, B::device(mask))?;
        let valid = B::gt(&B::cast(mask, DType::F32)?, &zero)?;
        if require_valid {
            let host = B::to_host(&valid)?.data.to_f64();
            let width = B::shape(&valid).last().copied().unwrap_or(1).max(1);
            if let Some(i) = host.chunks(width).position(|row| row.iter().all(|&v| v == 0.0)) {
                return Err(kernel_error(
                    ctx.component(),
                    &k,
                    &format!("state {i} of the batch allows no action (its mask is all zeros)"),
                ));
            }
        }
        Ok(vec![Tree::Leaf(valid)])
    })
    .infer(move |_, s| {
        let Space::Dict(d) = &s[0] else {
            return Err(not_masked(&s[0], &infer_key));
        };
        let mask = d.get(&infer_key).ok_or_else(|| not_masked(&s[0], &infer_key))?;
        let shape = mask.shape().unwrap_or(&[]).to_vec();
        let valid = rlgraph_core::spaces::BoolBox::new(shape);
        Ok(vec![Space::from(valid).with_ranks(mask.ranks().unwrap_or_default())])
    })
}

/// The graph function `name`: `(values [batch, n], mask [batch, n])` to the values where the
/// mask is non-zero and [`MASKED_VALUE`] elsewhere. Gradients reach only the valid entries.
pub fn apply_mask_fn<B: Backend>(name: &str) -> GraphFn<B> {
    GraphFn::tensors(name, |_, xs| {
        let (values, mask) = (xs[0], xs[1]);
        let masked = B::scalar(MASKED_VALUE, B::dtype(values), B::device(values))?;
        Ok([B::where_cond(mask, values, &masked)?])
    })
    .infer_same()
}

fn kernel_error(component: &str, key: &str, reason: &str) -> CoreError {
    CoreError::Component {
        component: component.into(),
        method: Some(format!("action mask {key:?}")),
        reason: reason.into(),
    }
}
