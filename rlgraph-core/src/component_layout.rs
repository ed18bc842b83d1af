//! Where the boxes of a component view go on a page: nested scopes as rectangles holding
//! their children, each scope's items laid out left to right in layers along the data
//! flow, as Graphviz's `dot` would with `rankdir=LR`.
//!
//! Written by hand because the page must open with no Graphviz installed, and no well-kept
//! Rust layout crate lays out nested clusters (`layout-rs` ignores them). Positions never
//! change when the page collapses a scope, so a reader's mental map survives a click.

use std::collections::{BTreeMap, BTreeSet};

use crate::component_view::ComponentView;

/// A rectangle in page pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// Whether `other` lies wholly inside this rectangle.
    pub fn contains(&self, other: &Rect) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.x + other.w <= self.x + self.w
            && other.y + other.h <= self.y + self.h
    }

    /// Whether the two rectangles share any area.
    pub fn overlaps(&self, other: &Rect) -> bool {
        self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y < other.y + other.h
            && other.y < self.y + self.h
    }

    fn shifted(self, dx: f64, dy: f64) -> Rect {
        Rect {
            x: self.x + dx,
            y: self.y + dy,
            ..self
        }
    }
}

/// The page positions of a view's boxes and of the scopes that hold other boxes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Each box, by scope path.
    pub boxes: BTreeMap<String, Rect>,
    /// Each scope with boxes under it, by scope path: its rectangle holds its own box and
    /// every box under it.
    pub clusters: BTreeMap<String, Rect>,
    /// The page's width.
    pub width: f64,
    /// The page's height.
    pub height: f64,
}

/// Pixels per character of the page's 12px sans-serif labels (a generous average, so that
/// labels fit).
pub const CHAR_WIDTH: f64 = 7.2;
/// Pixels per label line.
pub const LINE_HEIGHT: f64 = 15.0;
/// Height of a scope's title bar.
pub const HEADER: f64 = 22.0;
const PAD: f64 = 10.0;
const LAYER_GAP: f64 = 48.0;
const ROW_GAP: f64 = 14.0;

/// The size of a box that shows `lines`.
pub fn box_size(lines: &[String]) -> (f64, f64) {
    let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    (
        chars as f64 * CHAR_WIDTH + 2.0 * PAD,
        lines.len() as f64 * LINE_HEIGHT + PAD,
    )
}

/// One laid-out sub-tree, positioned relative to its own top-left corner.
struct Placed {
    w: f64,
    h: f64,
    boxes: Vec<(String, Rect)>,
    clusters: Vec<(String, Rect)>,
}

impl Placed {
    fn shift_into(self, dx: f64, dy: f64, boxes: &mut Vec<(String, Rect)>, clusters: &mut Vec<(String, Rect)>) {
        boxes.extend(self.boxes.into_iter().map(|(p, r)| (p, r.shifted(dx, dy))));
        clusters.extend(self.clusters.into_iter().map(|(p, r)| (p, r.shifted(dx, dy))));
    }
}

struct Tree<'a> {
    view: &'a ComponentView,
    children: BTreeMap<&'a str, Vec<&'a str>>,
    lines: &'a dyn Fn(&str) -> Vec<String>,
}

impl<'a> Tree<'a> {
    /// The boxes of the view whose nearest drawn ancestor is `parent` (`None`: the tops).
    fn build(view: &'a ComponentView, lines: &'a dyn Fn(&str) -> Vec<String>) -> Self {
        let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for path in view.nodes.keys() {
            let mut up = path.as_str();
            let parent = loop {
                match up.rsplit_once('/') {
                    Some((p, _)) if view.nodes.contains_key(p) => break p,
                    Some((p, _)) => up = p,
                    None => break "",
                }
            };
            children.entry(parent).or_default().push(path);
        }
        Tree { view, children, lines }
    }

    fn kids(&self, path: &str) -> &[&'a str] {
        self.children.get(path).map_or(&[], Vec::as_slice)
    }

    /// Lays out `path`: a box alone, or a cluster of its own box and its children's sub-trees.
    fn place(&self, path: &str) -> Placed {
        let (w, h) = box_size(&(self.lines)(path));
        let own = Placed {
            w,
            h,
            boxes: vec![(path.to_string(), Rect { x: 0.0, y: 0.0, w, h })],
            clusters: vec![],
        };
        let kids = self.kids(path);
        if kids.is_empty() {
            return own;
        }
        // Items: the scope's own box (index 0), then each child's sub-tree.
        let mut items: Vec<Placed> = vec![own];
        items.extend(kids.iter().map(|k| self.place(k)));
        let item_of = |p: &str| -> Option<usize> {
            if p == path {
                return Some(0);
            }
            kids.iter()
                .position(|k| p == *k || p.strip_prefix(k).is_some_and(|r| r.starts_with('/')))
                .map(|i| i + 1)
        };
        let mut succ: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); items.len()];
        for (from, to) in self.view.edges.keys() {
            if let (Some(a), Some(b)) = (item_of(from), item_of(to)) {
                if a != b {
                    succ[a].insert(b);
                }
            }
        }
        let layer = layers(&succ);
        let columns = layer.iter().max().map_or(1, |m| m + 1);
        // Within a column, items follow the mean row of what feeds them (barycentres), so
        // edges cross less; ties keep the path order.
        let mut rows: Vec<Vec<usize>> = vec![vec![]; columns];
        let mut row_of = vec![0.0; items.len()];
        for (c, row) in rows.iter_mut().enumerate() {
            let mut members: Vec<(f64, usize)> = (0..items.len())
                .filter(|&i| layer[i] == c)
                .map(|i| {
                    let feeders: Vec<f64> = (0..items.len())
                        .filter(|&j| succ[j].contains(&i) && layer[j] < c)
                        .map(|j| row_of[j])
                        .collect();
                    let key = if feeders.is_empty() {
                        i as f64
                    } else {
                        feeders.iter().sum::<f64>() / feeders.len() as f64
                    };
                    (key, i)
                })
                .collect();
            members.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (r, &(_, i)) in members.iter().enumerate() {
                row_of[i] = r as f64;
            }
            *row = members.into_iter().map(|(_, i)| i).collect();
        }
        let widths: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().map(|&i| items[i].w).fold(0.0, f64::max))
            .collect();
        let heights: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().map(|&i| items[i].h).sum::<f64>() + ROW_GAP * r.len().saturating_sub(1) as f64)
            .collect();
        let inner_h = heights.iter().copied().fold(0.0, f64::max);
        let mut boxes = vec![];
        let mut clusters = vec![];
        let mut slots: Vec<Option<Placed>> = items.into_iter().map(Some).collect();
        let mut x = PAD;
        for (c, row) in rows.iter().enumerate() {
            // Centre each column vertically, as dot centres its ranks.
            let mut y = HEADER + (inner_h - heights[c]) / 2.0;
            for &i in row {
                if let Some(item) = slots[i].take() {
                    let h = item.h;
                    item.shift_into(x, y, &mut boxes, &mut clusters);
                    y += h + ROW_GAP;
                }
            }
            x += widths[c] + LAYER_GAP;
        }
        let w = (x - LAYER_GAP + PAD).max((path.chars().count() as f64) * CHAR_WIDTH + 2.0 * PAD);
        let h = HEADER + inner_h + PAD;
        clusters.push((path.to_string(), Rect { x: 0.0, y: 0.0, w, h }));
        Placed { w, h, boxes, clusters }
    }
}

/// The column of each item: the longest path reaching it, edges that close a cycle ignored
/// (found by depth-first search in index order, so the result is deterministic).
fn layers(succ: &[BTreeSet<usize>]) -> Vec<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let n = succ.len();
    let mut mark = vec![Mark::New; n];
    let mut order = Vec::with_capacity(n);
    let mut back: BTreeSet<(usize, usize)> = BTreeSet::new();
    for start in 0..n {
        if mark[start] != Mark::New {
            continue;
        }
        // Iterative DFS: (node, its successors still to visit).
        let mut stack = vec![(start, succ[start].iter().copied().collect::<Vec<_>>())];
        mark[start] = Mark::Open;
        while let Some((node, todo)) = stack.last_mut() {
            let node = *node;
            match todo.pop() {
                Some(next) => match mark[next] {
                    Mark::New => {
                        mark[next] = Mark::Open;
                        stack.push((next, succ[next].iter().copied().collect()));
                    }
                    Mark::Open => {
                        back.insert((node, next));
                    }
                    Mark::Done => {}
                },
                None => {
                    mark[node] = Mark::Done;
                    order.push(node);
                    stack.pop();
                }
            }
        }
    }
    let mut layer = vec![0; n];
    for &node in order.iter().rev() {
        for &next in &succ[node] {
            if !back.contains(&(node, next)) {
                layer[next] = layer[next].max(layer[node] + 1);
            }
        }
    }
    layer
}

impl Layout {
    /// Lays out `view`, sizing each box for the label lines `lines` gives its path.
    pub fn new(view: &ComponentView, lines: &dyn Fn(&str) -> Vec<String>) -> Layout {
        let tree = Tree::build(view, lines);
        let mut boxes = vec![];
        let mut clusters = vec![];
        let (mut y, mut width) = (PAD, 0.0f64);
        for top in tree.kids("") {
            let placed = tree.place(top);
            let (w, h) = (placed.w, placed.h);
            placed.shift_into(PAD, y, &mut boxes, &mut clusters);
            y += h + ROW_GAP;
            width = width.max(w + 2.0 * PAD);
        }
        Layout {
            boxes: boxes.into_iter().collect(),
            clusters: clusters.into_iter().collect(),
            width,
            height: y - ROW_GAP + PAD,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::layers;
    use std::collections::BTreeSet;

    fn graph(n: usize, edges: &[(usize, usize)]) -> Vec<BTreeSet<usize>> {
        let mut succ = vec![BTreeSet::new(); n];
        for &(a, b) in edges {
            succ[a].insert(b);
        }
        succ
    }

    #[test]
    fn layers_follow_the_longest_path() {
        assert_eq!(layers(&graph(3, &[(0, 1), (1, 2)])), [0, 1, 2]);
        assert_eq!(layers(&graph(4, &[(0, 1), (0, 2), (1, 3), (2, 3)])), [0, 1, 1, 2]);
        // 0 -> 3 directly and through 1 and 2: the long way decides.
        assert_eq!(layers(&graph(4, &[(0, 3), (0, 1), (1, 2), (2, 3)])), [0, 1, 2, 3]);
        assert_eq!(layers(&graph(2, &[])), [0, 0]);
    }

    #[test]
    fn a_cycle_is_cut_where_the_search_from_the_first_item_closes_it() {
        // From 0 the search reaches 1, whose edge back to 0 closes the cycle and is ignored.
        assert_eq!(layers(&graph(2, &[(0, 1), (1, 0)])), [0, 1]);
        assert_eq!(layers(&graph(3, &[(0, 1), (1, 2), (2, 0)])), [0, 1, 2]);
    }
}
