//! The compiled steps of one root API method as a Graphviz picture: what actually runs on a
//! call, after pruning, aliasing and fusion (the meta graph shows what was declared).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::backend::Backend;
use crate::plan::Plan;

impl<B: Backend> Plan<B> {
    /// The plan in DOT: a box per loop step (`component/graph_fn` on its device; a fused
    /// chain lists its kernels in order and is drawn bold), the inputs, constants and outputs,
    /// and an edge per slot from the step that fills it to each step that reads it; a value
    /// moved to another device is a red edge.
    pub fn to_dot(&self) -> String {
        let mut out = format!(
            "digraph plan {{\n  label=\"{}.{}: {} kernels in {} steps\";\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=lightblue, fontname=\"sans\"];\n",
            self.root,
            self.method,
            self.len(),
            self.steps()
        );
        // Who fills each slot.
        let mut source: BTreeMap<usize, String> = BTreeMap::new();
        for (i, (&slot, (param, space))) in self.input_slots.iter().zip(self.inputs()).enumerate() {
            let _ = writeln!(
                out,
                "  in{i} [label=\"input {param}\\n{}\", shape=ellipse, fillcolor=white];",
                space.describe().replace('"', "'")
            );
            source.insert(slot, format!("in{i}"));
        }
        for (i, (slot, _)) in self.consts.iter().enumerate() {
            let _ = writeln!(out, "  k{i} [label=\"const\", shape=ellipse, fillcolor=white];");
            source.insert(*slot, format!("k{i}"));
        }
        for (i, step) in self.steps.iter().enumerate() {
            let mut label = format!("{}/{}", step.meta.component, step.name);
            for link in &step.chain {
                let _ = write!(label, "\\n→ {}/{}", link.meta.component, link.name);
            }
            let _ = write!(label, "\\n{}", step.meta.device);
            let style = if step.chain.is_empty() {
                String::new()
            } else {
                ", penwidth=3".to_string()
            };
            let _ = writeln!(out, "  s{i} [label=\"{}\"{style}];", label.replace('"', "'"));
            for (k, slot) in step.inputs.iter().enumerate() {
                let from = source.get(slot).cloned().unwrap_or_else(|| "unknown".into());
                let moved = step.transfers.iter().find(|(at, _)| *at == k);
                let attrs = match moved {
                    Some((_, device)) => format!(" [color=red, label=\"to {device}\"]"),
                    None => String::new(),
                };
                let _ = writeln!(out, "  {from} -> s{i}{attrs};");
            }
            for slot in &step.outputs {
                source.insert(*slot, format!("s{i}"));
            }
        }
        for (i, slot) in self.output_slots.iter().enumerate() {
            let _ = writeln!(
                out,
                "  out{i} [label=\"output {i}\\n{}\", shape=ellipse, fillcolor=white];",
                self.output_spaces
                    .get(i)
                    .map(|s| s.describe())
                    .unwrap_or_default()
                    .replace('"', "'")
            );
            let from = source.get(slot).cloned().unwrap_or_else(|| "unknown".into());
            let _ = writeln!(out, "  {from} -> out{i};");
        }
        out.push_str("}\n");
        out
    }
}
