//! The component view of a meta graph: one node per component (or per collapsed scope),
//! nested scopes as clusters, and one edge per pair of components where data flows into an
//! API method, labelled with the methods. The call-level picture (`MetaGraph::to_dot`) has a
//! node per API-call instance and is unreadable for a whole agent; this one is meant for
//! people.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use petgraph::visit::EdgeRef;
use serde_json::{json, Value as Json};

use crate::error::{CoreError, Result};
use crate::meta_graph::{MetaGraph, NodeKind};
use crate::spaces::Space;

/// What to draw: all of it, or a focus.
#[derive(Clone, Debug, Default)]
pub struct ViewOptions {
    /// Only what this root API method reaches.
    pub method: Option<String>,
    /// Merge components more than this many levels below the drawn root into their ancestor
    /// at that level (0: the drawn root alone).
    pub depth: Option<usize>,
    /// Draw only this component and what lies under it (a scope path).
    pub scope: Option<String>,
}

/// One box on the picture: a component, or a scope with its sub-tree merged into it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewNode {
    /// The API methods called on it (or on what was merged into it).
    pub methods: BTreeSet<String>,
    /// The paths of the variables it holds (with what was merged into it).
    pub variable_paths: Vec<String>,
    /// Their elements, summed.
    pub variable_elements: usize,
    /// The devices its calls run on.
    pub devices: BTreeSet<String>,
    /// What kind of component it is (`dense`, `dueling-policy`; empty when unknown).
    pub kind: String,
    /// Components merged into it by `depth` (0: none).
    pub merged: usize,
    /// What each API method takes and returns, by method (`sub/path.method` for a method of
    /// a component merged into this box).
    pub signatures: BTreeMap<String, Signature>,
    /// With a profile: the backend time of its plan steps (and of what was merged into it),
    /// in nanoseconds, and that time's share of the whole graph's.
    pub timing: Option<(f64, f64)>,
}

/// The spaces one API method was called with and returned, one entry per distinct call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Signature {
    /// Its arguments, as `param: space` lists.
    pub inputs: BTreeSet<String>,
    /// Its results, as space lists.
    pub outputs: BTreeSet<String>,
}

/// A list of inferred spaces as text (`?` where the build inferred none).
fn spaces_text<'a>(names: impl Iterator<Item = Option<&'a str>>, spaces: &[Option<Space>]) -> String {
    names
        .zip(spaces)
        .map(|(name, space)| {
            let space = space.as_ref().map_or_else(|| "?".to_string(), ToString::to_string);
            match name {
                Some(n) => format!("{n}: {space}"),
                None => space,
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The component-level picture of a meta graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComponentView {
    /// The boxes, by scope path.
    pub nodes: BTreeMap<String, ViewNode>,
    /// Data flowing from the first component into API methods of the second: the methods.
    pub edges: BTreeMap<(String, String), BTreeSet<String>>,
    /// The scope everything drawn lies under.
    pub root: String,
}

/// A colour from pale yellow (0) through orange (0.5) to red (1), as `#rrggbb`.
pub fn heat(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let stops = [(0xff, 0xff, 0xcc), (0xfd, 0x8d, 0x3c), (0xbd, 0x00, 0x26)];
    let (a, b, u) = if t <= 0.5 {
        (stops[0], stops[1], t * 2.0)
    } else {
        (stops[1], stops[2], t * 2.0 - 1.0)
    };
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * u).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The scope path one level up (`None` at the root).
fn parent(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(p, _)| p)
}

fn under(path: &str, scope: &str) -> bool {
    path == scope || path.strip_prefix(scope).is_some_and(|rest| rest.starts_with('/'))
}

impl ComponentView {
    /// The view of `meta`; `variables` gives each variable's path and shape (from the
    /// executor), so boxes can show what they hold.
    pub fn new(meta: &MetaGraph, variables: &BTreeMap<String, Vec<usize>>, options: &ViewOptions) -> Result<Self> {
        let graph = meta.graph();
        // Which meta-graph nodes to draw: all, or those one root method's assembly recorded.
        let mut kept = vec![options.method.is_none(); graph.node_count()];
        if let Some(m) = &options.method {
            for n in meta.method_nodes(m)? {
                kept[n.index()] = true;
            }
        }
        let in_method = |n: petgraph::graph::NodeIndex| kept[n.index()];
        let root = match &options.scope {
            Some(s) => s.trim_end_matches('/').to_string(),
            None => graph
                .node_indices()
                .map(|n| graph[n].component.as_str())
                .min_by_key(|c| c.matches('/').count())
                .unwrap_or_default()
                .to_string(),
        };
        // Where a component is drawn: itself, or its ancestor at the depth limit.
        let depth0 = root.matches('/').count();
        let place = |path: &str| -> Option<String> {
            if !under(path, &root) {
                return None;
            }
            let mut p = path;
            while let Some(limit) = options.depth {
                if p.matches('/').count() <= depth0 + limit {
                    break;
                }
                p = parent(p)?;
            }
            Some(p.to_string())
        };
        let mut view = ComponentView {
            root: root.clone(),
            ..ComponentView::default()
        };
        let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for n in graph.node_indices().filter(|&n| in_method(n)) {
            let node = &graph[n];
            let Some(at) = place(&node.component) else { continue };
            members.entry(at.clone()).or_default().insert(node.component.clone());
            let inner = node
                .component
                .strip_prefix(at.as_str())
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string();
            let key = |method: &str| match inner.as_str() {
                "" => method.to_string(),
                sub => format!("{sub}.{method}"),
            };
            let entry = view.nodes.entry(at).or_default();
            entry.devices.insert(node.device.to_string());
            match &node.kind {
                NodeKind::ApiEnter { method, params } => {
                    entry.methods.insert(method.clone());
                    let names = params.iter().map(|p| Some(p.as_str()));
                    let text = spaces_text(names, &node.spaces);
                    entry.signatures.entry(key(method)).or_default().inputs.insert(text);
                }
                NodeKind::ApiExit { method } => {
                    let text = spaces_text(std::iter::repeat(None), &node.spaces);
                    entry.signatures.entry(key(method)).or_default().outputs.insert(text);
                }
                _ => {}
            }
        }
        if view.nodes.is_empty() {
            return Err(CoreError::Config {
                at: format!("--scope {root}"),
                reason: "no component of the graph lies under this scope".into(),
            });
        }
        for (path, shape) in variables {
            let Some(at) = parent(path).and_then(place) else {
                continue;
            };
            // With a method focus, a box the method never reaches shows no variables.
            if let Some(node) = view.nodes.get_mut(&at) {
                node.variable_paths.push(path.clone());
                node.variable_elements += shape.iter().product::<usize>();
            }
        }
        for (at, inside) in members {
            if let Some(node) = view.nodes.get_mut(&at) {
                node.kind = meta.kinds().get(&at).cloned().unwrap_or_default();
                node.merged = inside.iter().filter(|c| **c != at).count();
            }
        }
        for e in graph.edge_references() {
            let (u, v) = (&graph[e.source()], &graph[e.target()]);
            let NodeKind::ApiEnter { method, .. } = &v.kind else {
                continue;
            };
            if !(in_method(e.source()) && in_method(e.target())) {
                continue;
            }
            if let (Some(from), Some(to)) = (place(&u.component), place(&v.component)) {
                if from != to {
                    view.edges.entry((from, to)).or_default().insert(method.clone());
                }
            }
        }
        Ok(view)
    }

    /// Puts a profile's timings on the boxes: `backend_ns` gives each component's plan-step
    /// time by scope path (as `rlgraph train --profile` records it); a box gets the time of
    /// every component drawn as it, and its share of all of it. Components the view does
    /// not draw are left out of the shares.
    pub fn set_timings(&mut self, backend_ns: &BTreeMap<String, f64>) {
        let mut by_box: BTreeMap<String, f64> = BTreeMap::new();
        for (path, ns) in backend_ns {
            let mut p = path.as_str();
            let at = loop {
                if self.nodes.contains_key(p) {
                    break Some(p);
                }
                match parent(p) {
                    Some(up) => p = up,
                    None => break None,
                }
            };
            if let Some(at) = at {
                *by_box.entry(at.to_string()).or_default() += ns;
            }
        }
        let total: f64 = by_box.values().sum();
        for (path, node) in &mut self.nodes {
            node.timing = (total > 0.0).then(|| {
                let ns = by_box.get(path).copied().unwrap_or(0.0);
                (ns, ns / total)
            });
        }
    }

    /// A box's fill: light blue without a profile; with one, from pale to red as its time
    /// nears the hottest box's.
    pub fn fill(&self, path: &str) -> String {
        let hottest = self
            .nodes
            .values()
            .filter_map(|n| n.timing)
            .map(|t| t.1)
            .fold(0.0, f64::max);
        match self.nodes.get(path).and_then(|n| n.timing) {
            Some((_, share)) if hottest > 0.0 => heat(share / hottest),
            _ => "#add8e6".to_string(),
        }
    }

    /// The boxes reachable from the drawn root along the edges.
    pub fn reachable(&self) -> BTreeSet<String> {
        let mut seen = BTreeSet::from([self.root.clone()]);
        let mut frontier = vec![self.root.clone()];
        while let Some(n) = frontier.pop() {
            for ((from, to), _) in self.edges.range((n.clone(), String::new())..) {
                if *from != n {
                    break;
                }
                if seen.insert(to.clone()) {
                    frontier.push(to.clone());
                }
            }
        }
        seen
    }

    /// The lines of a box's label: its name (with its kind and how many components were
    /// merged into it), what its variables hold, and its devices. The DOT and HTML pictures share them.
    pub fn label_lines(&self, path: &str) -> Vec<String> {
        let Some(node) = self.nodes.get(path) else {
            return vec![];
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let mut notes = vec![];
        if !node.kind.is_empty() && node.kind != name {
            notes.push(node.kind.clone());
        }
        if node.merged > 0 {
            notes.push(format!("+{} inside", node.merged));
        }
        let mut lines = vec![if notes.is_empty() {
            name.to_string()
        } else {
            format!("{name} ({})", notes.join(", "))
        }];
        if !node.variable_paths.is_empty() {
            lines.push(format!(
                "{} variables, {} elements",
                node.variable_paths.len(),
                node.variable_elements
            ));
        }
        lines.push(node.devices.iter().cloned().collect::<Vec<_>>().join(", "));
        if let Some((ns, share)) = node.timing {
            lines.push(format!("{:.1}% of backend time ({:.1} ms)", 100.0 * share, ns / 1e6));
        }
        lines
    }

    /// The picture in Graphviz DOT: a component with components drawn under it is a cluster
    /// holding its own box; edges carry the methods data flows into.
    pub fn to_dot(&self) -> String {
        let id: BTreeMap<&str, usize> = self.nodes.keys().enumerate().map(|(i, p)| (p.as_str(), i)).collect();
        let has_children: BTreeSet<&str> = self.nodes.keys().filter_map(|p| parent(p)).collect();
        let mut out =
            String::from("digraph components {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=lightblue, fontname=\"sans\"];\n");
        // Sorted by segments, a scope comes right before its sub-tree (plain string order would
        // put `a/b-c` between `a/b` and `a/b/d`): open a cluster for each scope with children,
        // close it before the first path outside it.
        let mut order: Vec<(&String, &ViewNode)> = self.nodes.iter().collect();
        order.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
        let mut open: Vec<&str> = vec![];
        for (path, _) in order {
            while open.last().is_some_and(|o| !under(path, o)) {
                open.pop();
                out.push_str(&"  ".repeat(open.len() + 1));
                out.push_str("}\n");
            }
            let indent = "  ".repeat(open.len() + 1);
            if has_children.contains(path.as_str()) {
                let _ = writeln!(out, "{indent}subgraph cluster_{} {{", id[path.as_str()]);
                let _ = writeln!(out, "{indent}  label=\"{path}\"; style=rounded;");
                open.push(path);
            }
            let indent = "  ".repeat(open.len() + 1);
            let _ = writeln!(
                out,
                "{indent}c{} [label=\"{}\", fillcolor=\"{}\"];",
                id[path.as_str()],
                self.label_lines(path).join("\\n").replace('"', "'"),
                self.fill(path)
            );
        }
        while open.pop().is_some() {
            out.push_str(&"  ".repeat(open.len() + 1));
            out.push_str("}\n");
        }
        for ((from, to), methods) in &self.edges {
            let _ = writeln!(
                out,
                "  c{} -> c{} [label=\"{}\"];",
                id[from.as_str()],
                id[to.as_str()],
                methods.iter().cloned().collect::<Vec<_>>().join("\\n")
            );
        }
        out.push_str("}\n");
        out
    }

    /// The picture as JSON: every box with its methods, variable paths and devices, every
    /// edge.
    pub fn to_json(&self) -> Json {
        let nodes: Vec<Json> = self
            .nodes
            .iter()
            .map(|(path, n)| {
                json!({
                    "path": path,
                    "methods": n.methods,
                    "variables": n.variable_paths,
                    "variable_elements": n.variable_elements,
                    "devices": n.devices,
                    "kind": n.kind,
                    "backend_ms": n.timing.map(|t| t.0 / 1e6),
                    "backend_share": n.timing.map(|t| t.1),
                    "merged": n.merged,
                    "signatures": n.signatures.iter().map(|(m, s)| (m.clone(), json!({"inputs": s.inputs, "outputs": s.outputs}))).collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect();
        let edges: Vec<Json> = self
            .edges
            .iter()
            .map(|((from, to), methods)| json!({"from": from, "to": to, "methods": methods}))
            .collect();
        json!({"root": self.root, "nodes": nodes, "edges": edges})
    }
}
