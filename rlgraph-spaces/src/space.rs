//! `Space`: a primitive box or a container of spaces, and what every space can answer.

use std::collections::BTreeMap;

use crate::boxes::{element_count, BoolBox, FloatBounds, FloatBox, IntBox, TextBox};
use crate::dtype::Dtype;
use crate::error::{display_key, Result, SpaceError};
use crate::flat_key::{self, Nest, Nested};
use crate::ranks::Ranks;

/// The most elements one item of a space may have (2^28: 1 GiB of float32); parsing refuses larger.
pub const MAX_ITEM_ELEMENTS: usize = 1 << 28;

/// A description of data: one of the four primitive boxes, or a `Dict` or `Tuple` of spaces.
#[derive(Clone, Debug, PartialEq)]
pub enum Space {
    /// Booleans.
    Bool(BoolBox),
    /// Integers, usually categories.
    Int(IntBox),
    /// Floats.
    Float(FloatBox),
    /// Strings.
    Text(TextBox),
    /// Named sub-spaces, kept sorted by key.
    Dict(DictSpace),
    /// Ordered sub-spaces.
    Tuple(TupleSpace),
}

/// Named sub-spaces, sorted by key. Keys are non-empty, contain no `/` and are not `_T<n>_`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DictSpace {
    entries: BTreeMap<String, Space>,
}

/// Ordered sub-spaces.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TupleSpace {
    items: Vec<Space>,
}

impl DictSpace {
    /// A Dict of the given entries; fails on a key that would break flat keys.
    pub fn new<K: Into<String>>(entries: impl IntoIterator<Item = (K, Space)>) -> Result<Self> {
        let mut map = BTreeMap::new();
        for (k, v) in entries {
            let k = k.into();
            flat_key::check_dict_key("", &k)?;
            map.insert(k, v);
        }
        Ok(DictSpace { entries: map })
    }

    /// The entries, sorted by key.
    pub fn entries(&self) -> &BTreeMap<String, Space> {
        &self.entries
    }

    /// The sub-space under `key`.
    pub fn get(&self, key: &str) -> Option<&Space> {
        self.entries.get(key)
    }
}

impl TupleSpace {
    /// A Tuple of the given sub-spaces.
    pub fn new(items: impl Into<Vec<Space>>) -> Self {
        TupleSpace { items: items.into() }
    }

    /// The sub-spaces in order.
    pub fn items(&self) -> &[Space] {
        &self.items
    }
}

impl From<BoolBox> for Space {
    fn from(b: BoolBox) -> Self {
        Space::Bool(b)
    }
}
impl From<IntBox> for Space {
    fn from(b: IntBox) -> Self {
        Space::Int(b)
    }
}
impl From<FloatBox> for Space {
    fn from(b: FloatBox) -> Self {
        Space::Float(b)
    }
}
impl From<TextBox> for Space {
    fn from(b: TextBox) -> Self {
        Space::Text(b)
    }
}
impl From<DictSpace> for Space {
    fn from(d: DictSpace) -> Self {
        Space::Dict(d)
    }
}
impl From<TupleSpace> for Space {
    fn from(t: TupleSpace) -> Self {
        Space::Tuple(t)
    }
}

impl flat_key::Nest for Space {
    fn children(&self) -> Option<Vec<(String, &Space)>> {
        match self {
            Space::Dict(d) => Some(flat_key::dict_children(&d.entries)),
            Space::Tuple(t) => Some(flat_key::tuple_children(&t.items)),
            _ => None,
        }
    }

    fn child(&self, segment: &str) -> Option<&Space> {
        match self {
            Space::Dict(d) => d.entries.get(segment),
            Space::Tuple(t) => t.items.get(flat_key::parse_tuple_segment(segment)?),
            _ => None,
        }
    }
}

impl Space {
    /// A Dict space; fails on a key that would break flat keys.
    pub fn dict<K: Into<String>>(entries: impl IntoIterator<Item = (K, Space)>) -> Result<Space> {
        Ok(Space::Dict(DictSpace::new(entries)?))
    }

    /// A Tuple space.
    pub fn tuple(items: impl Into<Vec<Space>>) -> Space {
        Space::Tuple(TupleSpace::new(items))
    }

    /// Whether this is a `Dict` or `Tuple`.
    pub fn is_container(&self) -> bool {
        matches!(self, Space::Dict(_) | Space::Tuple(_))
    }

    /// The short name of this kind of space, as in messages (`FloatBox`, `Dict`, ...).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Space::Bool(_) => "BoolBox",
            Space::Int(_) => "IntBox",
            Space::Float(_) => "FloatBox",
            Space::Text(_) => "TextBox",
            Space::Dict(_) => "Dict",
            Space::Tuple(_) => "Tuple",
        }
    }

    /// The element type of a primitive space; `None` for containers.
    pub fn dtype(&self) -> Option<Dtype> {
        match self {
            Space::Bool(_) => Some(Dtype::Bool),
            Space::Int(b) => Some(b.dtype),
            Space::Float(b) => Some(b.dtype),
            Space::Text(_) => Some(Dtype::Text),
            Space::Dict(_) | Space::Tuple(_) => None,
        }
    }

    /// The shape of a primitive space without batch and time ranks; `None` for containers.
    pub fn shape(&self) -> Option<&[usize]> {
        self.leaf_parts().map(|(shape, _)| shape)
    }

    /// The extra ranks of a primitive space; `None` for containers.
    pub fn ranks(&self) -> Option<Ranks> {
        self.leaf_parts().map(|(_, ranks)| ranks)
    }

    fn leaf_parts(&self) -> Option<(&[usize], Ranks)> {
        match self {
            Space::Bool(b) => Some((&b.shape, b.ranks)),
            Space::Int(b) => Some((&b.shape, b.ranks)),
            Space::Float(b) => Some((&b.shape, b.ranks)),
            Space::Text(b) => Some((&b.shape, b.ranks)),
            Space::Dict(_) | Space::Tuple(_) => None,
        }
    }

    /// RLgraph's `get_shape`: the shape, optionally led by this space's batch and time ranks.
    ///
    /// An extra rank shows as `None` (unknown size) when asked for and present; ranks the space
    /// does not have are never added. `None` for containers.
    pub fn get_shape(&self, with_batch_rank: bool, with_time_rank: bool) -> Option<Vec<Option<usize>>> {
        let (shape, ranks) = self.leaf_parts()?;
        let shown = Ranks {
            batch: ranks.batch && with_batch_rank,
            time: ranks.time && with_time_rank,
            ..ranks
        };
        let mut out = shown.dims(None, None);
        out.extend(shape.iter().map(|&d| Some(d)));
        Some(out)
    }

    /// The rank of a primitive space, batch and time ranks not counted; `None` for containers.
    pub fn rank(&self) -> Option<usize> {
        self.shape().map(<[usize]>::len)
    }

    /// The number of elements of one item: the product of the shape, summed over a container's leaves.
    pub fn flat_dim(&self) -> usize {
        match self.shape() {
            Some(shape) => element_count(shape),
            None => self.flatten().iter().map(|(_, s)| s.flat_dim()).sum(),
        }
    }

    /// The number of categories of a bounded `IntBox`; `None` for anything else.
    pub fn num_categories(&self) -> Option<u64> {
        match self {
            Space::Int(b) => b.num_categories(),
            _ => None,
        }
    }

    /// The one-hot float space of a bounded `IntBox`: its shape plus `[num_categories]`, in `[0, 1]`.
    pub fn one_hot_space(&self) -> Result<Space> {
        let unsupported = || SpaceError::Unsupported {
            at: "(root)".into(),
            operation: "one_hot_space".into(),
            space: format!("{} (only a bounded IntBox has categories)", self.kind_name()),
        };
        let Space::Int(b) = self else { return Err(unsupported()) };
        let n = b.num_categories().ok_or_else(unsupported)?;
        let n = usize::try_from(n).map_err(|_| unsupported())?;
        let mut shape = b.shape.clone();
        shape.push(n);
        let mut f = FloatBox::bounded(shape, 0.0, 1.0)?;
        f.ranks = b.ranks;
        Ok(Space::Float(f))
    }

    /// Whether any leaf has a batch rank.
    pub fn has_batch_rank(&self) -> bool {
        self.flatten().iter().any(|(_, s)| s.ranks().is_some_and(|r| r.batch))
    }

    /// Whether any leaf has a time rank.
    pub fn has_time_rank(&self) -> bool {
        self.flatten().iter().any(|(_, s)| s.ranks().is_some_and(|r| r.time))
    }

    /// Whether any leaf is time-major.
    pub fn is_time_major(&self) -> bool {
        self.flatten()
            .iter()
            .any(|(_, s)| s.ranks().is_some_and(|r| r.time && r.time_major))
    }

    /// A copy whose leaves all have (or all lack) a batch rank.
    pub fn with_batch_rank(&self, batch: bool) -> Space {
        self.with_leaf_ranks(|r| Ranks { batch, ..r })
    }

    /// A copy whose leaves all have (or all lack) a time rank, time-major or not.
    pub fn with_time_rank(&self, time: bool, time_major: bool) -> Space {
        self.with_leaf_ranks(|r| Ranks {
            time,
            time_major: time && time_major,
            ..r
        })
    }

    /// A copy whose leaves all have exactly these ranks.
    pub fn with_ranks(&self, ranks: Ranks) -> Space {
        self.with_leaf_ranks(|_| ranks)
    }

    fn with_leaf_ranks(&self, f: impl Fn(Ranks) -> Ranks + Copy) -> Space {
        self.map(|_, leaf| {
            let mut leaf = leaf.clone();
            match &mut leaf {
                Space::Bool(b) => b.ranks = f(b.ranks),
                Space::Int(b) => b.ranks = f(b.ranks),
                Space::Float(b) => b.ranks = f(b.ranks),
                Space::Text(b) => b.ranks = f(b.ranks),
                Space::Dict(_) | Space::Tuple(_) => {}
            }
            leaf
        })
    }

    /// The primitive leaves with their flat keys, in order: Dict entries by sorted key, Tuple
    /// entries by index. A primitive space gives itself under the key `""`.
    pub fn flatten(&self) -> Vec<(String, &Space)> {
        self.leaves()
    }

    /// Rebuilds a nested space from (flat key, primitive space) pairs; the inverse of `flatten`
    /// for spaces without empty containers.
    pub fn unflatten(pairs: Vec<(String, Space)>) -> Result<Space> {
        fn build(n: Nested<Space>) -> Space {
            match n {
                Nested::Leaf(s) => s,
                Nested::Dict(m) => Space::Dict(DictSpace {
                    entries: m.into_iter().map(|(k, v)| (k, build(v))).collect(),
                }),
                Nested::Tuple(v) => Space::tuple(v.into_iter().map(build).collect::<Vec<_>>()),
            }
        }
        Ok(build(flat_key::unflatten(pairs)?))
    }

    /// The same nesting with every primitive leaf replaced by `f(flat_key, leaf)`.
    pub fn map(&self, mut f: impl FnMut(&str, &Space) -> Space) -> Space {
        self.map_at("", &mut f)
    }

    fn map_at(&self, key: &str, f: &mut impl FnMut(&str, &Space) -> Space) -> Space {
        match self {
            Space::Dict(d) => Space::Dict(DictSpace {
                entries: d
                    .entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.map_at(&flat_key::join(key, k), f)))
                    .collect(),
            }),
            Space::Tuple(t) => Space::tuple(
                t.items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v.map_at(&flat_key::join(key, &flat_key::tuple_segment(i)), f))
                    .collect::<Vec<_>>(),
            ),
            leaf => f(key, leaf),
        }
    }

    /// A short human description, as used in error messages (`FloatBox(float32, [4], batch)`).
    pub fn describe(&self) -> String {
        match self {
            Space::Dict(d) => {
                let inner: Vec<String> = d
                    .entries
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.describe()))
                    .collect();
                format!("Dict({})", inner.join(", "))
            }
            Space::Tuple(t) => {
                let inner: Vec<String> = t.items.iter().map(Space::describe).collect();
                format!("Tuple({})", inner.join(", "))
            }
            leaf => {
                let (shape, ranks) = leaf.leaf_parts().unwrap_or((&[], Ranks::NONE));
                let mut parts = vec![
                    leaf.dtype().map(|d| d.to_string()).unwrap_or_default(),
                    format!("{shape:?}"),
                ];
                match leaf {
                    Space::Int(b) => {
                        if let Some((l, h)) = b.bounds {
                            parts.push(format!("{l}..{h}"));
                        }
                    }
                    Space::Float(b) => match &b.bounds {
                        FloatBounds::Scalar { low, high } => parts.push(format!("[{low}, {high}]")),
                        FloatBounds::PerElement { .. } => parts.push("per-element bounds".into()),
                        FloatBounds::Unbounded => {}
                    },
                    _ => {}
                }
                if ranks.batch {
                    parts.push("batch".into());
                }
                if ranks.time {
                    parts.push(if ranks.time_major {
                        "time-major".into()
                    } else {
                        "time".into()
                    });
                }
                format!("{}({})", leaf.kind_name(), parts.join(", "))
            }
        }
    }
}

impl std::fmt::Display for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Prefixes the location of an error with the flat key of the space it happened in.
pub(crate) fn nest_error(parent: &str, e: SpaceError) -> SpaceError {
    let fix = |at: String| {
        if at == "(root)" {
            display_key(parent)
        } else {
            format!("{parent}{at}")
        }
    };
    match e {
        SpaceError::InvalidBounds { at, reason } => SpaceError::InvalidBounds { at: fix(at), reason },
        SpaceError::InvalidShape { at, reason } => SpaceError::InvalidShape { at: fix(at), reason },
        other => other,
    }
}
