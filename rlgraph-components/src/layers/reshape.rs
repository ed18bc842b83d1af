//! Reshape: flatten an item to one dimension, or give it a new shape; leading batch and time
//! dimensions are kept. Dict and Tuple inputs are reshaped leaf by leaf, as RLgraph's `ReShape`
//! does, with categories and new shapes given per flat key where a single value will not do.

use std::collections::BTreeMap;
use std::sync::Arc;

use rlgraph_core::spaces::{BoolBox, FloatBox, Space};
use rlgraph_core::{Backend, Component, ContainerMode, CoreError, DType, GraphFn, InputSpaces, Param};

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
    let target = match new_shape {
        Some(shape) => NewShape::Shape(shape),
        None => NewShape::Flatten,
    };
    reshape_flattening(name, target, how)
}

/// The most floats one item may have after one-hot flattening (64 MiB of f32).
const MAX_ONE_HOT_ITEM: usize = 1 << 24;

/// RLgraph's `flatten_categories`: whether IntBox inputs become one-hot floats first. As in
/// RLgraph, a count of 0 or 1 means no one-hot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlattenCategories {
    /// Ints stay ints (`false`).
    Off,
    /// An IntBox input with a known number of categories is one-hot by that number; other
    /// inputs are left alone (`true`, RLgraph's default).
    FromSpace,
    /// Ints become one-hot over exactly this many categories; the input must be an IntBox with
    /// at most that many (an integer).
    Exactly(usize),
    /// Per leaf of a Dict or Tuple input, by flat key without its leading `/` (`"a/b"`,
    /// `"_T0_"`): that leaf as [`FlattenCategories::Exactly`]; a leaf not named stays as it is.
    PerKey(BTreeMap<String, usize>),
}

impl FlattenCategories {
    /// The one-hot depth for the leaf at flat key `key` with space `s`, if it is one-hot.
    fn for_leaf(&self, key: &str, s: &Space) -> Option<usize> {
        let categories = match (self, s) {
            (FlattenCategories::Exactly(c), _) => Some(*c),
            (FlattenCategories::FromSpace, Space::Int(_)) => s.num_categories().map(|n| n as usize),
            (FlattenCategories::PerKey(per_key), _) => per_key.get(unrooted(key)).copied(),
            _ => None,
        };
        // RLgraph one-hots only for more than one category.
        categories.filter(|c| *c > 1)
    }
}

/// The item shape a reshape gives: RLgraph's `flatten` or `new_shape`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewShape {
    /// Every leaf becomes one dimension (`flatten: true`).
    Flatten,
    /// Every leaf gets this shape (`new_shape: [..]`).
    Shape(Vec<usize>),
    /// Per leaf, by flat key without its leading `/` (`new_shape: {"a": [..]}`); a leaf not
    /// named keeps its shape (with a last axis of categories when it is one-hot).
    PerKey(BTreeMap<String, Vec<usize>>),
}

impl NewShape {
    /// Appends the item shape that the leaf at `key` (item shape `core`, one-hot by
    /// `categories`) gets to `out`, which holds its leading dimensions.
    fn extend_item_shape(&self, key: &str, core: &[usize], categories: Option<usize>, out: &mut Vec<usize>) {
        match self {
            NewShape::Flatten => out.push(core.iter().product::<usize>() * categories.unwrap_or(1)),
            NewShape::Shape(shape) => out.extend_from_slice(shape),
            NewShape::PerKey(per_key) => match per_key.get(unrooted(key)) {
                Some(shape) => out.extend_from_slice(shape),
                None => {
                    out.extend_from_slice(core);
                    out.extend(categories);
                }
            },
        }
    }
}

/// A flat key as RLgraph's per-key specs name it: without its leading `/`.
fn unrooted(key: &str) -> &str {
    key.strip_prefix('/').unwrap_or(key)
}

/// What one reshape does, shared by its check, inference and kernel.
struct Reshaping {
    target: NewShape,
    how: FlattenCategories,
}

impl Reshaping {
    /// Refuses per-key names that are not leaves of `s`, then checks every leaf.
    fn check(&self, sp: &InputSpaces, s: &Space) -> rlgraph_core::Result<()> {
        let leaves = s.flatten();
        let named = |key: &String| leaves.iter().any(|(k, _)| unrooted(k) == key);
        let mut per_key: Vec<(&str, &String)> = vec![];
        if let FlattenCategories::PerKey(c) = &self.how {
            per_key.extend(c.keys().map(|k| ("flatten_categories", k)));
        }
        if let NewShape::PerKey(n) = &self.target {
            per_key.extend(n.keys().map(|k| ("new_shape", k)));
        }
        if let Some((spec, key)) = per_key.into_iter().find(|(_, k)| !named(k)) {
            let known: Vec<&str> = leaves.iter().map(|(k, _)| unrooted(k)).collect();
            return Err(sp.mismatch(
                "inputs",
                format!(
                    "a leaf at flat key {key:?} for {spec}.{key} (the input's leaves: {})",
                    known.join(", ")
                ),
            ));
        }
        leaves.iter().try_for_each(|(key, leaf)| self.check_leaf(sp, key, leaf))
    }

    fn check_leaf(&self, sp: &InputSpaces, key: &str, leaf: &Space) -> rlgraph_core::Result<()> {
        let at = format!("inputs{key}");
        if !matches!(leaf, Space::Int(_) | Space::Float(_) | Space::Bool(_)) {
            return Err(sp.mismatch("inputs", format!("{at}: an IntBox, FloatBox or BoolBox")));
        }
        let categories = self.how.for_leaf(key, leaf);
        if let Some(c) = categories {
            let fits = matches!(leaf, Space::Int(_)) && leaf.num_categories().is_none_or(|k| k <= c as u64);
            if !fits {
                return Err(sp.mismatch(
                    "inputs",
                    format!("{at}: an IntBox with at most {c} categories (flatten_categories)"),
                ));
            }
        }
        let core = leaf.shape().unwrap_or(&[]);
        let elements: usize = core
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(*d))
            .unwrap_or(usize::MAX);
        // One-hot items grow by the category count: refuse what no memory holds.
        let n = elements
            .checked_mul(categories.unwrap_or(1))
            .filter(|n| *n <= MAX_ONE_HOT_ITEM || categories.is_none())
            .ok_or_else(|| {
                sp.mismatch(
                    "inputs",
                    format!(
                        "{at}: at most {MAX_ONE_HOT_ITEM} floats per one-hot item (flatten_categories: {} categories x {elements} elements)",
                        categories.unwrap_or(1)
                    ),
                )
            })?;
        let mut shape = vec![];
        self.target.extend_item_shape(key, core, categories, &mut shape);
        let fits = shape.iter().try_fold(1usize, |m, d| m.checked_mul(*d)) == Some(n);
        if !fits {
            return Err(sp.mismatch(
                "inputs",
                format!(
                    "{at}: {} elements per item to fit new shape {shape:?}",
                    shape.iter().fold(1u128, |m, d| m.saturating_mul(*d as u128))
                ),
            ));
        }
        Ok(())
    }
}

/// A reshape that treats IntBox categories `how` RLgraph's `flatten_categories` says (see
/// [`reshape_with_categories`]) and gives each item (of each leaf) the shape `target` says;
/// it also has `reset()`, which does nothing, so that a preprocessor stack resets every
/// member alike.
pub fn reshape_flattening<B: Backend>(name: &str, target: NewShape, how: FlattenCategories) -> Component<B> {
    let spec = Arc::new(Reshaping { target, how });
    let (check, infer) = (spec.clone(), spec.clone());
    Component::new(name)
        .with_kind("reshape")
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .api("reset", vec![], |_, _| Ok(vec![]))
        .check_inputs(move |sp| check.check(sp, sp.get("inputs")?))
        .graph_fn(
            GraphFn::tensors("apply", move |ctx, xs| {
                let key = ctx.flat_key();
                let leaf = ctx.input_leaf_space(0);
                // Leading (batch, time) dimensions are those beyond the item's own rank.
                let core_rank = leaf.and_then(Space::rank).unwrap_or(0);
                let categories = leaf.and_then(|s| spec.how.for_leaf(key, s));
                let shape = B::shape(xs[0]);
                let lead = shape.len().saturating_sub(core_rank);
                let mut out = shape[..lead].to_vec();
                let x = match categories {
                    Some(c) => B::one_hot(&B::cast(xs[0], DType::I64)?, c, DType::F32)?,
                    None => xs[0].clone(),
                };
                spec.target.extend_item_shape(key, &shape[lead..], categories, &mut out);
                Ok([B::reshape(&x, &out)?])
            })
            .mode(ContainerMode::Split)
            .infer(move |ctx, spaces| {
                let s = &spaces[0];
                let categories = infer.how.for_leaf(ctx.flat_key(), s);
                let mut shape = vec![];
                infer
                    .target
                    .extend_item_shape(ctx.flat_key(), s.shape().unwrap_or(&[]), categories, &mut shape);
                let out: Space = match s {
                    // One-hot categories are floats.
                    Space::Int(_) if categories.is_some() => FloatBox::new(shape).into(),
                    Space::Int(b) => b.clone().with_shape(shape).into(),
                    Space::Float(_) => FloatBox::new(shape).into(),
                    Space::Bool(_) => BoolBox::new(shape).into(),
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
