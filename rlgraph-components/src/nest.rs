//! Joining per-leaf outputs (one per action of a container action space) back into the
//! container's structure, as RLgraph's `flatten_ops` / `split_ops` graph functions do.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, CoreError, GraphFn, Tree};

/// `leaves` (in flat-key order) nested like `structure`; each leaf of `structure` takes one
/// whole item (a tensor, or a tuple of distribution parameters). `None` when there are
/// fewer items than leaves.
fn nest_like<T: Clone>(structure: &Space, leaves: &mut impl Iterator<Item = Tree<T>>) -> Option<Tree<T>> {
    Some(match structure {
        Space::Dict(d) => Tree::Dict(
            d.entries()
                .iter()
                .map(|(k, s)| Some((k.clone(), nest_like(s, leaves)?)))
                .collect::<Option<_>>()?,
        ),
        Space::Tuple(t) => Tree::Tuple(t.items().iter().map(|s| nest_like(s, leaves)).collect::<Option<_>>()?),
        _ => leaves.next()?,
    })
}

/// The spaces `items` (in flat-key order) nested like `structure`.
fn nest_spaces(structure: &Space, items: &mut impl Iterator<Item = Space>) -> Option<Space> {
    Some(match structure {
        Space::Dict(d) => Space::dict(
            d.entries()
                .iter()
                .map(|(k, s)| Some((k.clone(), nest_spaces(s, items)?)))
                .collect::<Option<Vec<_>>>()?,
        )
        .ok()?,
        Space::Tuple(t) => Space::tuple(
            t.items()
                .iter()
                .map(|s| nest_spaces(s, items))
                .collect::<Option<Vec<_>>>()?,
        ),
        _ => items.next()?,
    })
}

/// The graph function `name` that takes one input per leaf of `structure` (in flat-key
/// order) and returns them as one container nested like `structure`. For a primitive
/// `structure` it passes its one input through.
pub fn join_like<B: Backend>(name: &str, structure: &Space) -> GraphFn<B> {
    let (join, infer, leaves) = (structure.clone(), structure.clone(), structure.flatten().len());
    let short = move |got: usize| CoreError::Component {
        component: "join".into(),
        method: None,
        reason: format!("{got} inputs for a structure of {leaves} leaves"),
    };
    GraphFn::new(name, move |_, xs| {
        let mut items = xs.iter().cloned();
        Ok(vec![nest_like(&join, &mut items).ok_or_else(|| short(xs.len()))?])
    })
    .infer(move |_, spaces| {
        let mut items = spaces.iter().cloned();
        Ok(vec![nest_spaces(&infer, &mut items).ok_or_else(|| short(spaces.len()))?])
    })
}
