//! The meta graph: a backend-free record of API-method and graph-function calls, on
//! `petgraph`, printable as DOT (scopes as clusters, devices as colours) and as JSON.

use std::collections::BTreeMap;
use std::fmt::Write;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use rlgraph_spaces::{Space, Value};
use serde_json::{json, Value as Json};

use crate::backend::Device;
use crate::error::{CoreError, Result};

/// A symbolic operand: output `output` of meta-graph node `node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub(crate) node: NodeIndex,
    pub(crate) output: usize,
}

/// What a meta-graph node stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A parameter of a root API method.
    Input {
        /// The parameter name.
        param: String,
    },
    /// A constant (a parameter's default value).
    Const {
        /// The value.
        value: Value,
    },
    /// Entry into an API method: its outputs are its arguments.
    ApiEnter {
        /// The API method.
        method: String,
        /// The parameter each input feeds.
        params: Vec<String>,
    },
    /// Exit from an API method: its outputs are the method's results.
    ApiExit {
        /// The API method.
        method: String,
    },
    /// A graph-function call.
    GraphFn {
        /// The graph function.
        name: String,
    },
    /// The built-in `variables` API method: the component's variables by path.
    Variables,
    /// A result of a root API method.
    Output {
        /// The result's position.
        index: usize,
    },
}

/// One node of the meta graph.
#[derive(Clone, Debug)]
pub struct MetaNode {
    /// What it stands for.
    pub kind: NodeKind,
    /// The scope path of the component it belongs to.
    pub component: String,
    /// The root API method whose assembly recorded it.
    pub root_method: String,
    /// Its operands, in order.
    pub inputs: Vec<Op>,
    /// The spaces of its outputs, once the build has inferred them.
    pub spaces: Vec<Option<Space>>,
    /// The device it runs on, once the build has assigned it.
    pub device: Device,
}

/// An edge: output `from_output` of the source feeds input `to_input` of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaEdge {
    /// The output of the source node.
    pub from_output: usize,
    /// The input of the target node.
    pub to_input: usize,
}

/// The inputs and outputs of one root API method in the meta graph.
#[derive(Clone, Debug, Default)]
pub struct MethodIo {
    /// The parameter names, in order.
    pub params: Vec<String>,
    /// The `Input` node of each parameter.
    pub inputs: Vec<NodeIndex>,
    /// The `Output` node of each result.
    pub outputs: Vec<NodeIndex>,
}

/// The backend-free graph of calls that assembly records and the build annotates.
#[derive(Clone, Debug, Default)]
pub struct MetaGraph {
    pub(crate) graph: DiGraph<MetaNode, MetaEdge>,
    pub(crate) methods: BTreeMap<String, MethodIo>,
    pub(crate) kinds: BTreeMap<String, String>,
}

impl MetaGraph {
    pub(crate) fn add(
        &mut self,
        kind: NodeKind,
        component: &str,
        root_method: &str,
        inputs: Vec<Op>,
        outputs: usize,
    ) -> NodeIndex {
        let node = self.graph.add_node(MetaNode {
            kind,
            component: component.into(),
            root_method: root_method.into(),
            inputs: inputs.clone(),
            spaces: vec![None; outputs],
            device: Device::Cpu,
        });
        for (i, op) in inputs.iter().enumerate() {
            self.graph.add_edge(
                op.node,
                node,
                MetaEdge {
                    from_output: op.output,
                    to_input: i,
                },
            );
        }
        node
    }

    /// The underlying petgraph graph.
    pub fn graph(&self) -> &DiGraph<MetaNode, MetaEdge> {
        &self.graph
    }

    /// The root API methods and their inputs and outputs.
    pub fn methods(&self) -> &BTreeMap<String, MethodIo> {
        &self.methods
    }

    /// What kind each component is, by scope path, where its builder said
    /// ([`Component::with_kind`](crate::Component::with_kind)).
    pub fn kinds(&self) -> &BTreeMap<String, String> {
        &self.kinds
    }

    /// The nodes the assembly of root API method `method` recorded; an unknown name is an
    /// error that lists the graph's methods.
    pub fn method_nodes(&self, method: &str) -> Result<Vec<NodeIndex>> {
        if !self.methods.contains_key(method) {
            return Err(CoreError::Config {
                at: format!("--method {method}"),
                reason: format!(
                    "no root API method of that name; the graph has {}",
                    self.methods.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        Ok(self
            .graph
            .node_indices()
            .filter(|&n| self.graph[n].root_method == method)
            .collect())
    }

    /// The space of an operand, once inferred.
    pub fn space(&self, op: Op) -> Option<&Space> {
        self.graph[op.node].spaces.get(op.output).and_then(Option::as_ref)
    }

    fn label(node: &MetaNode) -> String {
        match &node.kind {
            NodeKind::Input { param } => format!("input {param}"),
            NodeKind::Const { .. } => "const".into(),
            NodeKind::ApiEnter { method, .. } => format!("{method}()"),
            NodeKind::ApiExit { method } => format!("{method} ->"),
            NodeKind::GraphFn { name } => format!("graph_fn {name}"),
            NodeKind::Variables => "variables()".into(),
            NodeKind::Output { index } => format!("output {index}"),
        }
    }

    fn spaces_text(node: &MetaNode) -> Vec<String> {
        node.spaces
            .iter()
            .map(|s| s.as_ref().map(Space::describe).unwrap_or_else(|| "?".into()))
            .collect()
    }

    /// The graph in Graphviz DOT: each scope a cluster, each device a fill colour, each node
    /// labelled with its output spaces. `only` restricts it to some nodes.
    pub fn to_dot(&self, only: Option<&[NodeIndex]>) -> String {
        let keep = |n: NodeIndex| only.is_none_or(|o| o.contains(&n));
        let mut by_scope: BTreeMap<&str, Vec<NodeIndex>> = BTreeMap::new();
        for n in self.graph.node_indices().filter(|n| keep(*n)) {
            by_scope.entry(self.graph[n].component.as_str()).or_default().push(n);
        }
        let mut out = String::from(
            "digraph meta_graph {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"monospace\"];\n",
        );
        // Clusters nest by scope path: open each scope's cluster, close it before a non-descendant.
        let mut open: Vec<&str> = vec![];
        for (i, (scope, nodes)) in by_scope.iter().enumerate() {
            while open.last().is_some_and(|o| !scope.starts_with(&format!("{o}/"))) {
                open.pop();
                out.push_str("  }\n");
            }
            let _ = writeln!(out, "  subgraph cluster_{i} {{\n    label=\"{scope}\";");
            open.push(scope);
            for n in nodes {
                let node = &self.graph[*n];
                let colour = match node.device {
                    Device::Cpu => "lightblue".to_string(),
                    Device::Cuda(k) => ["orange", "palegreen", "pink", "khaki"][k % 4].to_string(),
                };
                let label =
                    format!("{}\\n{}", Self::label(node), Self::spaces_text(node).join("\\n")).replace('"', "'");
                let _ = writeln!(out, "    n{} [label=\"{label}\", fillcolor={colour}];", n.index());
            }
        }
        for _ in open {
            out.push_str("  }\n");
        }
        for e in self
            .graph
            .edge_references()
            .filter(|e| keep(e.source()) && keep(e.target()))
        {
            let _ = writeln!(
                out,
                "  n{} -> n{} [label=\"{}\"];",
                e.source().index(),
                e.target().index(),
                e.weight().to_input
            );
        }
        out.push_str("}\n");
        out
    }

    /// The graph as JSON: nodes with kind, scope, device and spaces; edges; root methods.
    pub fn to_json(&self) -> Json {
        let nodes: Vec<Json> = self
            .graph
            .node_indices()
            .map(|n| {
                let node = &self.graph[n];
                json!({
                    "id": n.index(),
                    "label": Self::label(node),
                    "component": node.component,
                    "root_method": node.root_method,
                    "device": node.device.to_string(),
                    "output_spaces": node.spaces.iter().map(|s| s.as_ref().map(Space::to_json)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let edges: Vec<Json> = self
            .graph
            .edge_references()
            .map(|e| json!({"from": e.source().index(), "from_output": e.weight().from_output, "to": e.target().index(), "to_input": e.weight().to_input}))
            .collect();
        let methods: serde_json::Map<String, Json> = self
            .methods
            .iter()
            .map(|(name, io)| {
                let spaces = |nodes: &[NodeIndex]| -> Vec<Json> {
                    nodes.iter().map(|n| self.graph[*n].spaces.first().cloned().flatten().map(|s| s.to_json()).unwrap_or(Json::Null)).collect()
                };
                (name.clone(), json!({"params": io.params, "input_spaces": spaces(&io.inputs), "output_spaces": spaces(&io.outputs)}))
            })
            .collect();
        json!({"nodes": nodes, "edges": edges, "methods": methods})
    }

    /// The nodes within `radius` edges of `center`, for a DOT picture around a build failure.
    pub fn neighbourhood(&self, center: NodeIndex, radius: usize) -> Vec<NodeIndex> {
        let mut seen = vec![center];
        let mut frontier = vec![center];
        for _ in 0..radius {
            let mut next = vec![];
            for n in frontier {
                for m in self.graph.neighbors_undirected(n) {
                    if !seen.contains(&m) {
                        seen.push(m);
                        next.push(m);
                    }
                }
            }
            frontier = next;
        }
        seen
    }
}
