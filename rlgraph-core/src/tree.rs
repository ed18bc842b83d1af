//! `Tree`: nested data (Dict / Tuple / leaf) as it flows between graph functions.

use std::collections::BTreeMap;

use rlgraph_spaces::flat_key::{self, Nest};

/// A leaf, or a Dict or Tuple of trees: the shape of container data at execution time.
#[derive(Clone, Debug, PartialEq)]
pub enum Tree<T> {
    /// One item (a tensor, a space, ...).
    Leaf(T),
    /// Named sub-trees, sorted by key.
    Dict(BTreeMap<String, Tree<T>>),
    /// Ordered sub-trees.
    Tuple(Vec<Tree<T>>),
}

impl<T> flat_key::Nest for Tree<T> {
    fn children(&self) -> Option<Vec<(String, &Tree<T>)>> {
        match self {
            Tree::Leaf(_) => None,
            Tree::Dict(d) => Some(flat_key::dict_children(d)),
            Tree::Tuple(v) => Some(flat_key::tuple_children(v)),
        }
    }

    fn child(&self, segment: &str) -> Option<&Tree<T>> {
        match self {
            Tree::Leaf(_) => None,
            Tree::Dict(d) => d.get(segment),
            Tree::Tuple(v) => v.get(flat_key::parse_tuple_segment(segment)?),
        }
    }
}

impl<T> Tree<T> {
    /// The leaf, if this is one.
    pub fn as_leaf(&self) -> Option<&T> {
        match self {
            Tree::Leaf(t) => Some(t),
            _ => None,
        }
    }

    /// The first leaf in flat-key order (the tree itself if it is a leaf), found without
    /// building the flat list; `None` for an empty container.
    pub fn first_leaf(&self) -> Option<&T> {
        match self {
            Tree::Leaf(t) => Some(t),
            Tree::Dict(d) => d.values().find_map(Tree::first_leaf),
            Tree::Tuple(v) => v.iter().find_map(Tree::first_leaf),
        }
    }

    /// The leaf, if this is one.
    pub fn into_leaf(self) -> Option<T> {
        match self {
            Tree::Leaf(t) => Some(t),
            _ => None,
        }
    }

    /// The leaves with their flat keys (`""` for a lone leaf), in RLgraph's order.
    pub fn flatten(&self) -> Vec<(String, &T)> {
        self.leaves()
            .into_iter()
            .filter_map(|(k, node)| node.as_leaf().map(|t| (k, t)))
            .collect()
    }

    /// The same nesting with every leaf mapped.
    pub fn map<U>(&self, f: &mut impl FnMut(&T) -> U) -> Tree<U> {
        match self {
            Tree::Leaf(t) => Tree::Leaf(f(t)),
            Tree::Dict(d) => Tree::Dict(d.iter().map(|(k, v)| (k.clone(), v.map(f))).collect()),
            Tree::Tuple(v) => Tree::Tuple(v.iter().map(|v| v.map(f)).collect()),
        }
    }

    /// The same nesting with every leaf mapped by a fallible function.
    pub fn try_map<U, E>(&self, f: &mut impl FnMut(&str, &T) -> Result<U, E>) -> Result<Tree<U>, E> {
        self.try_map_at("", f)
    }

    fn try_map_at<U, E>(&self, key: &str, f: &mut impl FnMut(&str, &T) -> Result<U, E>) -> Result<Tree<U>, E> {
        Ok(match self {
            Tree::Leaf(t) => Tree::Leaf(f(key, t)?),
            Tree::Dict(d) => Tree::Dict(
                d.iter()
                    .map(|(k, v)| Ok((k.clone(), v.try_map_at(&flat_key::join(key, k), f)?)))
                    .collect::<Result<_, E>>()?,
            ),
            Tree::Tuple(v) => Tree::Tuple(
                v.iter()
                    .enumerate()
                    .map(|(i, v)| v.try_map_at(&flat_key::join(key, &flat_key::tuple_segment(i)), f))
                    .collect::<Result<_, E>>()?,
            ),
        })
    }

    /// Whether this is a Dict or Tuple.
    pub fn is_container(&self) -> bool {
        !matches!(self, Tree::Leaf(_))
    }
}

impl<T> Tree<T> {
    /// Rebuilds nesting from (flat key, leaf) pairs; a single pair with key `""` is a leaf.
    pub fn from_flat(pairs: Vec<(String, T)>) -> crate::error::Result<Tree<T>> {
        fn convert<T>(n: flat_key::Nested<T>) -> Tree<T> {
            match n {
                flat_key::Nested::Leaf(t) => Tree::Leaf(t),
                flat_key::Nested::Dict(d) => Tree::Dict(d.into_iter().map(|(k, v)| (k, convert(v))).collect()),
                flat_key::Nested::Tuple(v) => Tree::Tuple(v.into_iter().map(convert).collect()),
            }
        }
        Ok(convert(flat_key::unflatten(pairs)?))
    }
}
