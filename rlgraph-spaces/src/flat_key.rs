//! RLgraph's flat-key spelling: `/a/b` for Dict entries, `/_T0_` for Tuple entries.

use crate::error::{Result, SpaceError};

/// The separator between the segments of a flat key.
pub const SEPARATOR: char = '/';

/// The segment that names Tuple entry `i`: `_T{i}_`.
pub fn tuple_segment(i: usize) -> String {
    format!("_T{i}_")
}

/// The Tuple index a segment names, if it is one (`_T3_` gives 3).
pub fn parse_tuple_segment(segment: &str) -> Option<usize> {
    let digits = segment.strip_prefix("_T")?.strip_suffix('_')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The flat key of a child: `parent + "/" + segment`.
pub fn join(parent: &str, segment: &str) -> String {
    format!("{parent}{SEPARATOR}{segment}")
}

/// The segments of a flat key (`/a/_T0_` gives `["a", "_T0_"]`; the root key `""` gives none).
pub fn segments(key: &str) -> Vec<&str> {
    key.split(SEPARATOR).filter(|s| !s.is_empty()).collect()
}

/// A nested structure (Dict, Tuple or leaf) whose leaves can be listed by flat key.
pub trait Nest {
    /// The children with their key segments (a Dict key, or `_T<n>_`); `None` for a leaf.
    fn children(&self) -> Option<Vec<(String, &Self)>>;

    /// The child at key segment `segment` (a Dict key, or `_T<n>_` of a Tuple), if there is one.
    fn child(&self, segment: &str) -> Option<&Self>;

    /// The leaf at flat key `key` (a lone leaf is at `""`), found by walking the key's segments
    /// without listing the leaves; `None` when `key` names no leaf.
    fn leaf_at(&self, key: &str) -> Option<&Self> {
        let node = key
            .split(SEPARATOR)
            .filter(|s| !s.is_empty())
            .try_fold(self, |node, segment| node.child(segment))?;
        node.children().is_none().then_some(node)
    }

    /// The leaves with their flat keys in RLgraph's order (a lone leaf has the key `""`).
    fn leaves(&self) -> Vec<(String, &Self)> {
        fn walk<'a, N: Nest + ?Sized>(node: &'a N, key: String, out: &mut Vec<(String, &'a N)>) {
            match node.children() {
                None => out.push((key, node)),
                Some(children) => children
                    .into_iter()
                    .for_each(|(seg, child)| walk(child, join(&key, &seg), out)),
            }
        }
        let mut out = Vec::new();
        walk(self, String::new(), &mut out);
        out
    }
}

/// Key segments for the entries of a Dict (its keys) or a Tuple (`_T<n>_`).
pub fn dict_children<'a, V>(entries: impl IntoIterator<Item = (&'a String, &'a V)>) -> Vec<(String, &'a V)> {
    entries.into_iter().map(|(k, v)| (k.clone(), v)).collect()
}

/// Key segments for the entries of a Tuple (`_T<n>_`).
pub fn tuple_children<V>(items: &[V]) -> Vec<(String, &V)> {
    items.iter().enumerate().map(|(i, v)| (tuple_segment(i), v)).collect()
}

/// Checks that a Dict key can be part of a flat key without ambiguity.
pub(crate) fn check_dict_key(at: &str, key: &str) -> Result<()> {
    let reason = if key.is_empty() {
        "keys must not be empty"
    } else if key.contains(SEPARATOR) {
        "keys must not contain '/', the flat-key separator"
    } else if parse_tuple_segment(key).is_some() {
        "keys of the form _T<n>_ are reserved for Tuple entries in flat keys"
    } else {
        return Ok(());
    };
    Err(SpaceError::InvalidKey {
        at: crate::error::display_key(at),
        key: key.to_string(),
        reason: reason.into(),
    })
}

/// One node of the tree that unflattening builds from flat keys.
#[derive(Debug, PartialEq)]
pub enum Nested<T> {
    /// A leaf.
    Leaf(T),
    /// Dict entries.
    Dict(std::collections::BTreeMap<String, Nested<T>>),
    /// Tuple entries.
    Tuple(Vec<Nested<T>>),
}

/// Rebuilds the nesting that a list of (flat key, leaf) pairs describes.
///
/// Children whose segments are all `_T<n>_` become a Tuple (indices must be `0..n`), all
/// others a Dict; mixing the two under one parent is an error. Empty containers leave no flat
/// key behind, so they cannot be rebuilt.
pub fn unflatten<T>(pairs: Vec<(String, T)>) -> Result<Nested<T>> {
    let items: Vec<(Vec<String>, T)> = pairs
        .into_iter()
        .map(|(k, v)| (segments(&k).into_iter().map(String::from).collect(), v))
        .collect();
    build("", items)
}

/// Leaves still to place, each with the key segments below the current node.
type Pending<T> = Vec<(Vec<String>, T)>;

fn build<T>(at: &str, mut items: Pending<T>) -> Result<Nested<T>> {
    let err = |reason: String| SpaceError::Unflatten {
        at: crate::error::display_key(at),
        reason,
    };
    if items.is_empty() {
        return Err(err("no flat keys given".into()));
    }
    if items.iter().any(|(segs, _)| segs.is_empty()) {
        if items.len() != 1 {
            return Err(err("a leaf key also has children or appears twice".into()));
        }
        let (_, leaf) = items.remove(0);
        return Ok(Nested::Leaf(leaf));
    }
    let mut groups: std::collections::BTreeMap<String, Pending<T>> = Default::default();
    for (mut segs, leaf) in items {
        let head = segs.remove(0);
        groups.entry(head).or_default().push((segs, leaf));
    }
    let tuple_count = groups.keys().filter(|k| parse_tuple_segment(k).is_some()).count();
    if tuple_count == 0 {
        let mut map = std::collections::BTreeMap::new();
        for (k, children) in groups {
            check_dict_key(at, &k)?;
            let child = build(&join(at, &k), children)?;
            map.insert(k, child);
        }
        return Ok(Nested::Dict(map));
    }
    if tuple_count != groups.len() {
        return Err(err(
            "Tuple entries (_T<n>_) and Dict keys are mixed under one parent".into()
        ));
    }
    let mut indexed: Vec<(usize, String, Pending<T>)> = groups
        .into_iter()
        .filter_map(|(k, children)| parse_tuple_segment(&k).map(|i| (i, k, children)))
        .collect();
    indexed.sort_by_key(|(i, _, _)| *i);
    let mut out = Vec::with_capacity(indexed.len());
    for (expected, (i, k, children)) in indexed.into_iter().enumerate() {
        if i != expected {
            return Err(err(format!(
                "Tuple entries must be _T0_.._T{{n-1}}_ without gaps; _T{expected}_ is missing"
            )));
        }
        out.push(build(&join(at, &k), children)?);
    }
    Ok(Nested::Tuple(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuple_segments_round_trip_and_reject_look_alikes() {
        assert_eq!(tuple_segment(12), "_T12_");
        assert_eq!(parse_tuple_segment("_T12_"), Some(12));
        for s in ["_T_", "T1_", "_T1", "_Tx_", "a"] {
            assert_eq!(parse_tuple_segment(s), None, "{s}");
        }
    }

    #[test]
    fn dict_keys_that_break_flat_keys_are_rejected() {
        assert!(check_dict_key("", "a").is_ok());
        for k in ["", "a/b", "_T0_"] {
            assert!(
                matches!(check_dict_key("", k), Err(SpaceError::InvalidKey { .. })),
                "{k:?}"
            );
        }
    }

    #[test]
    fn unflatten_rejects_gaps_and_mixtures() {
        let gap = vec![("/_T0_".to_string(), 1), ("/_T2_".to_string(), 2)];
        assert!(matches!(unflatten(gap), Err(SpaceError::Unflatten { .. })));
        let mixed = vec![("/_T0_".to_string(), 1), ("/a".to_string(), 2)];
        assert!(matches!(unflatten(mixed), Err(SpaceError::Unflatten { .. })));
        let twice = vec![("/a".to_string(), 1), ("/a".to_string(), 2)];
        assert!(matches!(unflatten(twice), Err(SpaceError::Unflatten { .. })));
    }
}
