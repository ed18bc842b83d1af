//! Reshape: flatten an item to one dimension, or give it a new shape; leading batch and time
//! dimensions are kept.

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{Backend, Component, CoreError, DType, GraphFn, Param};

/// A reshape layer named `name`: `call(inputs)` gives each item `new_shape`, or flattens it
/// when `new_shape` is `None`. The element count must stay the same.
pub fn reshape<B: Backend>(name: &str, new_shape: Option<Vec<usize>>) -> Component<B> {
    reshape_with_categories(name, new_shape, None)
}

/// Like [`reshape`], first turning IntBox categories into one-hot floats (RLgraph's
/// `flatten_categories`): each int becomes `categories` floats, so the item grows by that factor.
pub fn reshape_with_categories<B: Backend>(
    name: &str,
    new_shape: Option<Vec<usize>>,
    categories: Option<usize>,
) -> Component<B> {
    let how = match categories {
        Some(c) => FlattenCategories::Exactly(c),
        None => FlattenCategories::Off,
    };
    reshape_flattening(name, new_shape, how)
}

/// The most floats one item may have after one-hot flattening (64 MiB of f32).
const MAX_ONE_HOT_ITEM: usize = 1 << 24;

/// RLgraph's `flatten_categories`: whether IntBox inputs become one-hot floats first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlattenCategories {
    /// Ints stay ints (`false`).
    Off,
    /// An IntBox input with a known number of categories is one-hot by that number; other
    /// inputs are left alone (`true`, RLgraph's default).
    FromSpace,
    /// Ints become one-hot over exactly this many categories; the input must be an IntBox with
    /// at most that many (an integer).
    Exactly(usize),
}

impl FlattenCategories {
    /// The number of one-hot categories for an input of space `s`, if any.
    fn for_space(self, s: &Space) -> Option<usize> {
        match (self, s) {
            (FlattenCategories::Exactly(c), _) => Some(c),
            (FlattenCategories::FromSpace, Space::Int(_)) => s.num_categories().map(|n| n as usize),
            _ => None,
        }
    }
}

/// A reshape that treats IntBox categories `how` RLgraph's `flatten_categories` says (see
/// [`reshape_with_categories`]); it also has `reset()`, which does nothing, so that a
/// preprocessor stack resets every member alike.
pub fn reshape_flattening<B: Backend>(
    name: &str,
    new_shape: Option<Vec<usize>>,
    how: FlattenCategories,
) -> Component<B> {
    let exact = match how {
        FlattenCategories::Exactly(c) => Some(c),
        _ => None,
    };
    let target = new_shape.clone();
    let kernel_target = new_shape.clone();
    Component::new(name)
        .with_kind("reshape")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .api("reset", vec![], |_, _| Ok(vec![]))
        .check_inputs(move |sp| {
            let s = sp.get("inputs")?;
            let categories = how.for_space(s);
            let elements: usize = s.shape().map(|d| d.iter().product()).unwrap_or(0);
            // One-hot items grow by the category count: refuse what no memory holds.
            let n = elements
                .checked_mul(categories.unwrap_or(1))
                .filter(|n| *n <= MAX_ONE_HOT_ITEM)
                .ok_or_else(|| {
                    sp.mismatch(
                        "inputs",
                        format!(
                            "at most {MAX_ONE_HOT_ITEM} floats per one-hot item (flatten_categories: {} categories x {elements} elements)",
                            categories.unwrap_or(1)
                        ),
                    )
                })?;
            if let Some(c) = exact {
                if !matches!(s, Space::Int(_)) || s.num_categories().is_some_and(|k| k > c as u64) {
                    return Err(sp.mismatch(
                        "inputs",
                        format!("an IntBox with at most {c} categories (flatten_categories)"),
                    ));
                }
            }
            match (&new_shape, s.is_container()) {
                (_, true) => Err(sp.mismatch("inputs", "a primitive space (reshape does not take containers)")),
                (Some(t), _) if t.iter().product::<usize>() != n => Err(sp.mismatch(
                    "inputs",
                    format!(
                        "{} elements per item to fit new shape {t:?}",
                        t.iter().product::<usize>()
                    ),
                )),
                _ => Ok(()),
            }
        })
        .graph_fn(
            GraphFn::tensors("apply", move |ctx, xs| {
                // Leading (batch, time) dimensions are those beyond the item's own rank.
                let core_rank = ctx.input_space(0).and_then(Space::rank).unwrap_or(0);
                let categories = ctx.input_space(0).and_then(|s| how.for_space(s));
                let shape = B::shape(xs[0]);
                let lead = shape.len().saturating_sub(core_rank);
                let mut out = shape[..lead].to_vec();
                let x = match categories {
                    Some(c) => B::one_hot(&B::cast(xs[0], DType::I64)?, c, DType::F32)?,
                    None => xs[0].clone(),
                };
                match &kernel_target {
                    Some(t) => out.extend_from_slice(t),
                    None => out.push(shape[lead..].iter().product::<usize>() * categories.unwrap_or(1)),
                }
                Ok(vec![B::reshape(&x, &out)?])
            })
            .infer(move |ctx, spaces| {
                let s = &spaces[0];
                let categories = how.for_space(s);
                let core = s.shape().unwrap_or(&[]);
                let per_item = core.iter().product::<usize>() * categories.unwrap_or(1);
                let shape = target.clone().unwrap_or_else(|| vec![per_item]);
                let out: Space = match s {
                    // One-hot categories are floats.
                    Space::Int(_) if categories.is_some() => FloatBox::new(shape).into(),
                    Space::Int(b) => b.clone().with_shape(shape).into(),
                    Space::Float(_) => FloatBox::new(shape).into(),
                    other => {
                        return Err(CoreError::Component {
                            component: ctx.component().into(),
                            method: Some("apply".into()),
                            reason: format!("cannot reshape {}", other.describe()),
                        })
                    }
                };
                Ok(vec![out.with_ranks(s.ranks().unwrap_or_default())])
            }),
        )
}
