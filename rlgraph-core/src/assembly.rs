//! Assembly: API-method bodies run once on symbolic operands, recording the meta graph.

use rlgraph_spaces::{BoolBox, Dtype, FloatBox, IntBox, Space, Value};

use crate::backend::Backend;
use crate::component::{ApiCtx, Args, Component};
use crate::error::{CoreError, Result};
pub use crate::meta_graph::Op;
use crate::meta_graph::{MetaGraph, NodeKind};

impl Args {
    /// The operand of parameter `i`; an error naming the parameter if it was left out.
    pub fn get(&self, i: usize) -> Result<Op> {
        self.ops
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| CoreError::BadArguments {
                component: self.component.clone(),
                method: self.method.clone(),
                reason: format!(
                    "parameter {} was not given",
                    self.names.get(i).cloned().unwrap_or_else(|| format!("#{i}"))
                ),
            })
    }

    /// The operand of parameter `i`, if given.
    pub fn opt(&self, i: usize) -> Option<Op> {
        self.ops.get(i).copied().flatten()
    }

    /// The operands of all given parameters, in order.
    pub fn present(&self) -> Vec<Op> {
        self.ops.iter().flatten().copied().collect()
    }

    /// How many parameters the method has.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the method has no parameters.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// An argument by position or by name.
type Arg<'s> = (Option<&'s str>, Op);

impl<B: Backend> ApiCtx<'_, B> {
    /// Calls API method `method` of sub-component `sub` with positional arguments.
    pub fn call(&mut self, sub: &str, method: &str, args: &[Op]) -> Result<Vec<Op>> {
        let args: Vec<Arg> = args.iter().map(|op| (None, *op)).collect();
        self.call_sub(sub, method, &args)
    }

    /// Calls API method `method` of sub-component `sub` with named arguments.
    pub fn call_kw(&mut self, sub: &str, method: &str, args: &[(&str, Op)]) -> Result<Vec<Op>> {
        let args: Vec<Arg> = args.iter().map(|(n, op)| (Some(*n), *op)).collect();
        self.call_sub(sub, method, &args)
    }

    /// Calls one of this component's own API methods.
    pub fn call_own(&mut self, method: &str, args: &[Op]) -> Result<Vec<Op>> {
        let args: Vec<Arg> = args.iter().map(|op| (None, *op)).collect();
        invoke(
            self.graph,
            self.component,
            self.path,
            method,
            &args,
            self.root_method,
            self.stack,
        )
    }

    fn call_sub(&mut self, sub: &str, method: &str, args: &[Arg]) -> Result<Vec<Op>> {
        let comp = self.component.sub(sub, self.path)?;
        let path = format!("{}/{sub}", self.path);
        invoke(self.graph, comp, &path, method, args, self.root_method, self.stack)
    }

    /// Calls this component's graph function `name`.
    pub fn graph_fn(&mut self, name: &str, args: &[Op]) -> Result<Vec<Op>> {
        let f = self.component.find_graph_fn(name, self.path)?;
        let node = self.graph.add(
            NodeKind::GraphFn { name: name.into() },
            self.path,
            self.root_method,
            args.to_vec(),
            f.outputs,
        );
        Ok((0..f.outputs).map(|output| Op { node, output }).collect())
    }

    /// Calls graph function `name` and returns its single output.
    pub fn graph_fn1(&mut self, name: &str, args: &[Op]) -> Result<Op> {
        self.graph_fn(name, args)?
            .into_iter()
            .next()
            .ok_or_else(|| CoreError::Component {
                component: self.path.into(),
                method: Some(name.into()),
                reason: "graph function declares no outputs".into(),
            })
    }

    /// A constant operand.
    pub fn constant(&mut self, value: Value) -> Op {
        let node = self
            .graph
            .add(NodeKind::Const { value }, self.path, self.root_method, vec![], 1);
        Op { node, output: 0 }
    }

    /// This component's scope path.
    pub fn path(&self) -> &str {
        self.path
    }
}

/// The space a constant has: unbounded, of its dtype and shape.
pub(crate) fn space_of_value(value: &Value) -> Space {
    match value {
        Value::Dict(d) => {
            Space::dict(d.iter().map(|(k, v)| (k.clone(), space_of_value(v)))).unwrap_or_else(|_| Space::tuple(vec![]))
        }
        Value::Tuple(t) => Space::tuple(t.iter().map(space_of_value).collect::<Vec<_>>()),
        leaf => {
            let shape = leaf.shape().unwrap_or(&[]).to_vec();
            match leaf.dtype() {
                Some(Dtype::Bool) => BoolBox::new(shape).into(),
                Some(d @ (Dtype::Int32 | Dtype::Int64 | Dtype::Uint8)) => IntBox::unbounded()
                    .with_shape(shape)
                    .with_dtype(d)
                    .map(Space::from)
                    .unwrap_or_else(|_| IntBox::unbounded().into()),
                Some(Dtype::Float64) => FloatBox::new(shape)
                    .with_dtype(Dtype::Float64)
                    .map(Space::from)
                    .unwrap_or_else(|_| FloatBox::new([]).into()),
                _ => FloatBox::new(shape).into(),
            }
        }
    }
}

/// Records one call of API method `method` of `comp` (at `path`): an entry node, the body, an exit node.
pub(crate) fn invoke<B: Backend>(
    graph: &mut MetaGraph,
    comp: &Component<B>,
    path: &str,
    method: &str,
    args: &[Arg],
    root_method: &str,
    stack: &mut Vec<String>,
) -> Result<Vec<Op>> {
    if method == "variables" && comp.method(method, path).is_err() {
        let node = graph.add(NodeKind::Variables, path, root_method, vec![], 1);
        return Ok(vec![Op { node, output: 0 }]);
    }
    let m = comp.method(method, path)?;
    let key = format!("{path}.{method}");
    if let Some(start) = stack.iter().position(|s| *s == key) {
        let mut cycle: Vec<String> = stack[start..].to_vec();
        cycle.push(key);
        return Err(CoreError::Cycle {
            path: cycle.join(" -> "),
        });
    }
    let bad = |reason: String| CoreError::BadArguments {
        component: path.into(),
        method: method.into(),
        reason,
    };
    // Match arguments to parameters: positional first, then by name.
    let mut slots: Vec<Option<Op>> = vec![None; m.params.len()];
    for (i, (name, op)) in args.iter().enumerate() {
        let at = match name {
            None if i < m.params.len() => i,
            None => {
                return Err(bad(format!(
                    "{} arguments given, the method takes {}",
                    args.len(),
                    m.params.len()
                )))
            }
            Some(n) => m.params.iter().position(|p| p.name == *n).ok_or_else(|| {
                bad(format!(
                    "no parameter '{n}' (parameters: {})",
                    m.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })?,
        };
        if slots[at].replace(*op).is_some() {
            return Err(bad(format!("parameter '{}' given twice", m.params[at].name)));
        }
    }
    let mut params = vec![];
    let mut inputs = vec![];
    for (i, p) in m.params.iter().enumerate() {
        if slots[i].is_none() {
            if let Some(d) = &p.default {
                let node = graph.add(NodeKind::Const { value: d.clone() }, path, root_method, vec![], 1);
                slots[i] = Some(Op { node, output: 0 });
            } else if !p.optional {
                return Err(bad(format!("required parameter '{}' was not given", p.name)));
            }
        }
        if let Some(op) = slots[i] {
            params.push(p.name.clone());
            inputs.push(op);
        }
    }
    let n_in = inputs.len();
    let enter = graph.add(
        NodeKind::ApiEnter {
            method: method.into(),
            params,
        },
        path,
        root_method,
        inputs,
        n_in,
    );
    let mut next = 0;
    let ops: Vec<Option<Op>> = slots
        .iter()
        .map(|s| {
            s.map(|_| {
                next += 1;
                Op {
                    node: enter,
                    output: next - 1,
                }
            })
        })
        .collect();
    let args = Args {
        ops,
        names: m.params.iter().map(|p| p.name.clone()).collect(),
        component: path.into(),
        method: method.into(),
    };
    stack.push(key);
    let results = {
        let mut ctx = ApiCtx {
            graph,
            component: comp,
            path,
            root_method,
            stack,
        };
        (m.body)(&mut ctx, &args)
    };
    stack.pop();
    let results = results?;
    let n_out = results.len();
    let exit = graph.add(
        NodeKind::ApiExit { method: method.into() },
        path,
        root_method,
        results,
        n_out,
    );
    Ok((0..n_out).map(|output| Op { node: exit, output }).collect())
}
