//! The build: assembly of every root API method, then breadth-first propagation of input
//! spaces through the meta graph, input-completeness, variable declaration and output-space
//! inference, with errors that name the place.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use petgraph::graph::NodeIndex;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::flat_key::Nest;
use rlgraph_spaces::{BoolBox, Dtype, FloatBox, IntBox, Ranks, Space};

use crate::assembly::{invoke, space_of_value, Op};
use crate::backend::{Backend, DType, Device};
use crate::component::{Component, InputSpaces};
use crate::convert::zeros_tree;
use crate::device_map::DeviceMap;
use crate::error::{CoreError, Result};
use crate::graph_fn::{ContainerMode, GraphFn, InferCtx, KernelCtx, KernelMeta};
use crate::meta_graph::{MetaGraph, MethodIo, NodeKind};
use crate::tree::Tree;
use crate::variables::{VarDecl, VarInfo, VariableStore, MAX_VARIABLE_ELEMENTS};

/// How to build.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Where components go.
    pub device_map: DeviceMap,
    /// On a build error, attach a DOT rendering of the meta graph around the failure.
    pub dot_on_error: bool,
}

/// What the build cost and what it made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildReport {
    /// Time to assemble the meta graph (running every root API method once).
    pub assembly: Duration,
    /// Time to propagate spaces, declare variables and infer output spaces.
    pub build: Duration,
    /// Components in the tree.
    pub components: usize,
    /// API methods declared across all components.
    pub api_methods: usize,
    /// Graph-function calls in the meta graph.
    pub graph_fns: usize,
    /// Variables declared.
    pub variables: usize,
}

/// Per-component state the build learns.
#[derive(Clone, Debug)]
pub(crate) struct CompState {
    pub(crate) inputs: InputSpaces,
    pub(crate) needed: BTreeSet<(String, String)>,
    pub(crate) complete: bool,
    pub(crate) decls: Vec<VarDecl>,
    pub(crate) var_ids: Vec<usize>,
    pub(crate) device: Device,
    pub(crate) trainable: bool,
}

/// A built component graph: the meta graph with every space known, and the variables to create.
pub struct BuiltGraph<B: Backend> {
    pub(crate) root: Component<B>,
    pub(crate) meta: MetaGraph,
    pub(crate) comps: BTreeMap<String, CompState>,
    pub(crate) vars: Vec<VarInfo>,
    pub(crate) report: BuildReport,
}

impl<B: Backend> BuiltGraph<B> {
    /// The annotated meta graph.
    pub fn meta_graph(&self) -> &MetaGraph {
        &self.meta
    }

    /// What the build cost and made.
    pub fn report(&self) -> &BuildReport {
        &self.report
    }

    /// The variables the executor will create.
    pub fn variables(&self) -> &[VarInfo] {
        &self.vars
    }

    /// The root component.
    pub fn root(&self) -> &Component<B> {
        &self.root
    }

    /// The input spaces the build learned for the component at `path`.
    pub fn input_spaces(&self, path: &str) -> Option<&InputSpaces> {
        self.comps.get(path).map(|c| &c.inputs)
    }

    pub(crate) fn component(&self, path: &str) -> Result<&Component<B>> {
        let mut segments = path.split('/');
        let first = segments.next().unwrap_or_default();
        if first != self.root.name {
            return Err(CoreError::UnknownComponent {
                component: "(root)".into(),
                name: path.into(),
                known: self.root.name.clone(),
            });
        }
        let mut comp = &self.root;
        let mut at = first.to_string();
        for s in segments {
            comp = comp.sub(s, &at)?;
            at = format!("{at}/{s}");
        }
        Ok(comp)
    }
}

/// Builds `root` from the spaces of its API methods' parameters (keyed by parameter name).
pub fn build<B: Backend>(
    root: Component<B>,
    input_spaces: &BTreeMap<String, Space>,
    options: &BuildOptions,
) -> Result<BuiltGraph<B>> {
    let mut meta = MetaGraph::default();
    let t0 = Instant::now();
    let walk = root.walk();
    for (path, comp) in &walk {
        comp.check_names(path)?;
        if !comp.kind.is_empty() {
            meta.kinds.insert(path.clone(), comp.kind.clone());
        }
    }
    // Phase 2: assembly. Each root API method runs once on symbolic inputs.
    let root_path = root.name.clone();
    for m in &root.api {
        // A method that opted out of input-completeness is only built as an entry point when
        // its inputs are known; otherwise it exists for internal calls only.
        let unknown = m
            .params
            .iter()
            .any(|p| p.default.is_none() && !p.optional && !input_spaces.contains_key(&p.name));
        if m.incomplete_ok && unknown {
            continue;
        }
        let mut io = MethodIo::default();
        let mut args: Vec<(Option<&str>, Op)> = vec![];
        for p in &m.params {
            if !input_spaces.contains_key(&p.name) && (p.default.is_some() || p.optional) {
                continue; // left to the method's default or None
            }
            let node = meta.add(
                NodeKind::Input { param: p.name.clone() },
                &root_path,
                &m.name,
                vec![],
                1,
            );
            io.params.push(p.name.clone());
            io.inputs.push(node);
            args.push((Some(p.name.as_str()), Op { node, output: 0 }));
        }
        let results = invoke(&mut meta, &root, &root_path, &m.name, &args, &m.name, &mut vec![])?;
        for (index, op) in results.into_iter().enumerate() {
            io.outputs
                .push(meta.add(NodeKind::Output { index }, &root_path, &m.name, vec![op], 1));
        }
        meta.methods.insert(m.name.clone(), io);
    }
    let assembly = t0.elapsed();

    // Phase 3: build.
    let t1 = Instant::now();
    let mut comps: BTreeMap<String, CompState> = BTreeMap::new();
    let mut inherited: BTreeMap<String, Option<Device>> = BTreeMap::new();
    for (path, comp) in &walk {
        let parent = path.rsplit_once('/').map(|(p, _)| p.to_string());
        let own = comp
            .device
            .or_else(|| parent.and_then(|p| inherited.get(&p).copied().flatten()));
        inherited.insert(path.clone(), own);
        comps.insert(
            path.clone(),
            CompState {
                inputs: InputSpaces::new(path.clone()),
                needed: BTreeSet::new(),
                complete: false,
                decls: vec![],
                var_ids: vec![],
                device: options.device_map.resolve(path, own),
                trainable: comp.trainable,
            },
        );
    }
    let lookup: BTreeMap<&str, &Component<B>> = walk.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    for n in meta.graph.node_indices() {
        let node = &meta.graph[n];
        if let NodeKind::ApiEnter { method, params } = &node.kind {
            let comp = lookup[node.component.as_str()];
            if !comp.method(method, &node.component).is_ok_and(|m| m.incomplete_ok) {
                if let Some(state) = comps.get_mut(&node.component) {
                    state.needed.extend(params.iter().map(|p| (method.clone(), p.clone())));
                }
            }
        }
        let device = comps.get(&node.component).map(|c| c.device).unwrap_or_default();
        meta.graph[n].device = device;
    }
    if let Err(e) = propagate(&mut meta, &mut comps, &lookup, input_spaces) {
        return Err(diagnose(e, &meta, options));
    }
    // Variables, in scope order.
    let mut vars = vec![];
    for (path, state) in comps.iter_mut() {
        for d in &state.decls {
            state.var_ids.push(vars.len());
            vars.push(VarInfo {
                path: format!("{path}/{}", d.name),
                decl: d.clone(),
                device: state.device,
            });
        }
    }
    let report = BuildReport {
        assembly,
        build: t1.elapsed(),
        components: walk.len(),
        api_methods: walk.iter().map(|(_, c)| c.api.len()).sum(),
        graph_fns: meta
            .graph
            .node_weights()
            .filter(|n| matches!(n.kind, NodeKind::GraphFn { .. }))
            .count(),
        variables: vars.len(),
    };
    Ok(BuiltGraph {
        root,
        meta,
        comps,
        vars,
        report,
    })
}

/// Attaches a DOT picture of the failure's surroundings, when asked to.
fn diagnose(e: CoreError, meta: &MetaGraph, options: &BuildOptions) -> CoreError {
    if !options.dot_on_error {
        return e;
    }
    let stuck = meta
        .graph
        .node_indices()
        .find(|n| meta.graph[*n].spaces.iter().any(Option::is_none));
    match stuck {
        Some(n) => CoreError::Diagnosed {
            error: Box::new(e),
            dot: meta.to_dot(Some(&meta.neighbourhood(n, 3))),
        },
        None => e,
    }
}

fn propagate<B: Backend>(
    meta: &mut MetaGraph,
    comps: &mut BTreeMap<String, CompState>,
    lookup: &BTreeMap<&str, &Component<B>>,
    input_spaces: &BTreeMap<String, Space>,
) -> Result<()> {
    let order: Vec<NodeIndex> = meta.graph.node_indices().collect();
    let mut done = vec![false; order.len()];
    for &n in &order {
        match &meta.graph[n].kind {
            NodeKind::Input { param } => {
                if let Some(s) = input_spaces.get(param) {
                    meta.graph[n].spaces[0] = Some(s.clone());
                    done[n.index()] = true;
                }
            }
            NodeKind::Const { value } => {
                meta.graph[n].spaces[0] = Some(space_of_value(value));
                done[n.index()] = true;
            }
            _ => {}
        }
    }
    // Breadth-first rounds: a node resolves once its operands have spaces (and, for a graph
    // function, once its component is input-complete); repeat until nothing changes.
    loop {
        let mut progress = false;
        for &n in &order {
            if done[n.index()] {
                continue;
            }
            let node = &meta.graph[n];
            let ins: Option<Vec<Space>> = node.inputs.iter().map(|op| meta.space(*op).cloned()).collect();
            let Some(ins) = ins else { continue };
            let path = node.component.clone();
            let outs = match node.kind.clone() {
                NodeKind::Input { .. } | NodeKind::Const { .. } => continue,
                NodeKind::ApiEnter { method, params } => {
                    let state = comps.get_mut(&path).ok_or_else(|| CoreError::UnknownComponent {
                        component: "(root)".into(),
                        name: path.clone(),
                        known: String::new(),
                    })?;
                    for (p, s) in params.iter().zip(&ins) {
                        match state.inputs.try_get(p) {
                            Some(existing) if !compatible(existing, s) => {
                                return Err(CoreError::SpaceMismatch {
                                    component: path.clone(),
                                    method: method.clone(),
                                    param: p.clone(),
                                    expected: existing.describe(),
                                    actual: s.describe(),
                                });
                            }
                            Some(_) => {}
                            None => state.inputs.insert(p, s.clone(), &method),
                        }
                    }
                    try_complete(&path, comps, lookup)?;
                    Some(ins)
                }
                NodeKind::ApiExit { .. } | NodeKind::Output { .. } => Some(ins),
                NodeKind::GraphFn { name } => {
                    let state = &comps[&path];
                    if !state.complete {
                        None
                    } else {
                        let f = lookup[path.as_str()].find_graph_fn(&name, &path)?;
                        Some(infer_graph_fn(f, &path, state, &ins).map_err(|e| in_graph_fn(e, &path, &name))?)
                    }
                }
                NodeKind::Variables => {
                    let prefix = format!("{path}/");
                    let scope: Vec<(&String, &CompState)> = comps
                        .iter()
                        .filter(|(p, _)| **p == path || p.starts_with(&prefix))
                        .collect();
                    if scope.iter().all(|(p, s)| s.complete || owns_no_variables(p, s, lookup)) {
                        let entries = scope.iter().flat_map(|(p, s)| {
                            s.decls
                                .iter()
                                .map(move |d| (format!("{p}/{}", d.name).replace('/', "."), var_space(d)))
                        });
                        Some(vec![Space::dict(entries)?])
                    } else {
                        None
                    }
                }
            };
            if let Some(outs) = outs {
                let node = &mut meta.graph[n];
                if outs.len() != node.spaces.len() {
                    return Err(CoreError::Component {
                        component: path,
                        method: None,
                        reason: format!("declared {} outputs but produced {}", node.spaces.len(), outs.len()),
                    });
                }
                node.spaces = outs.into_iter().map(Some).collect();
                done[n.index()] = true;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    if done.iter().all(|d| *d) {
        return Ok(());
    }
    // Something never resolved. A `variables()` call waits on components that are never called
    // with inputs: that is the root cause, so name it first.
    for &n in order.iter().filter(|n| !done[n.index()]) {
        if matches!(meta.graph[n].kind, NodeKind::Variables) {
            let scope = &meta.graph[n].component;
            let prefix = format!("{scope}/");
            if let Some((path, _)) = comps.iter().find(|(p, s)| {
                (*p == scope || p.starts_with(&prefix))
                    && !s.complete
                    && s.needed.is_empty()
                    && !owns_no_variables(p, s, lookup)
            }) {
                return Err(CoreError::InputIncomplete {
                    component: path.clone(),
                    missing: format!("all of its inputs: no root API method calls it with inputs, so its variables (asked for by {scope}.variables()) are never created"),
                });
            }
        }
    }
    // Otherwise name the input-incomplete component and what it lacks.
    for (path, state) in comps.iter() {
        if state.complete || state.needed.is_empty() {
            continue;
        }
        let missing: Vec<String> = state
            .needed
            .iter()
            .filter(|(_, p)| state.inputs.try_get(p).is_none())
            .map(|(m, p)| format!("{m}({p})"))
            .collect();
        if !missing.is_empty() {
            return Err(CoreError::InputIncomplete {
                component: path.clone(),
                missing: missing.join(", "),
            });
        }
    }
    let root_inputs: Vec<String> = order
        .iter()
        .filter(|n| !done[n.index()])
        .filter_map(|n| match &meta.graph[*n].kind {
            NodeKind::Input { param } => Some(format!("{}({param})", meta.graph[*n].root_method)),
            _ => None,
        })
        .collect();
    let root = order
        .first()
        .map(|n| meta.graph[*n].component.clone())
        .unwrap_or_default();
    Err(CoreError::InputIncomplete {
        component: root,
        missing: if root_inputs.is_empty() {
            "some operands (see the DOT rendering)".into()
        } else {
            root_inputs.join(", ")
        },
    })
}

/// Whether a space arriving at a parameter fits the one already recorded there: the same
/// structure, kinds, dtypes, shapes, ranks and int categories. Float bounds may differ (a
/// sampled action is unbounded where the action space is bounded).
fn compatible(a: &Space, b: &Space) -> bool {
    fn unbounded(s: &Space) -> Space {
        s.map(|_, leaf| match leaf {
            Space::Float(_) => FloatBox::new(leaf.shape().unwrap_or(&[]).to_vec())
                .with_dtype(leaf.dtype().unwrap_or(Dtype::Float32))
                .map(|x| Space::from(x).with_ranks(leaf.ranks().unwrap_or_default()))
                .unwrap_or_else(|_| leaf.clone()),
            other => other.clone(),
        })
    }
    a == b || unbounded(a) == unbounded(b)
}

fn in_graph_fn(e: CoreError, path: &str, name: &str) -> CoreError {
    match e {
        e @ (CoreError::SpaceMismatch { .. } | CoreError::Component { .. }) => e,
        other => CoreError::Component {
            component: path.into(),
            method: Some(name.into()),
            reason: other.to_string(),
        },
    }
}

fn var_space(d: &VarDecl) -> Space {
    let shape = d.shape.clone();
    match d.dtype {
        DType::F64 => FloatBox::new(shape)
            .with_dtype(Dtype::Float64)
            .map(Space::from)
            .unwrap_or_else(|_| FloatBox::new([]).into()),
        DType::I64 => IntBox::unbounded()
            .with_shape(shape)
            .with_dtype(Dtype::Int64)
            .map(Space::from)
            .unwrap_or_else(|_| IntBox::unbounded().into()),
        DType::U8 => IntBox::unbounded()
            .with_shape(shape)
            .with_dtype(Dtype::Uint8)
            .map(Space::from)
            .unwrap_or_else(|_| IntBox::unbounded().into()),
        DType::F32 => FloatBox::new(shape).into(),
    }
}

/// Whether a component can be left out of a `variables()` Dict without waiting for it: it
/// is never called with inputs and declares no variables, so completing it would add nothing
/// (a policy's distribution when only its Q-values are used, for example).
fn owns_no_variables<B: Backend>(path: &str, state: &CompState, lookup: &BTreeMap<&str, &Component<B>>) -> bool {
    state.needed.is_empty() && lookup.get(path).is_some_and(|c| c.variables.is_none())
}

/// Refuses a variable too large for any machine this runs on, before anything is allocated.
fn check_size(path: &str, d: &VarDecl) -> Result<()> {
    let elements = d.shape.iter().try_fold(1usize, |n, x| n.checked_mul(*x));
    match elements {
        Some(n) if n <= MAX_VARIABLE_ELEMENTS => Ok(()),
        _ => Err(CoreError::Variable {
            path: format!("{path}/{}", d.name),
            reason: format!(
                "shape {:?} has {} elements; a variable holds at most {MAX_VARIABLE_ELEMENTS} (4 GiB of float32): make the layer smaller",
                d.shape,
                d.shape.iter().fold(1u128, |n, x| n.saturating_mul(*x as u128))
            ),
        }),
    }
}

fn try_complete<B: Backend>(
    path: &str,
    comps: &mut BTreeMap<String, CompState>,
    lookup: &BTreeMap<&str, &Component<B>>,
) -> Result<()> {
    let Some(state) = comps.get_mut(path) else {
        return Ok(());
    };
    if state.complete || state.needed.iter().any(|(_, p)| state.inputs.try_get(p).is_none()) {
        return Ok(());
    }
    let comp = lookup[path];
    if let Some(check) = &comp.check {
        check(&state.inputs)?;
    }
    if let Some(vars) = &comp.variables {
        let mut decls = vars(&state.inputs)?;
        let mut names = BTreeSet::new();
        for d in decls.iter_mut() {
            if !names.insert(d.name.clone()) {
                return Err(CoreError::Duplicate {
                    component: path.into(),
                    what: "variable",
                    name: d.name.clone(),
                });
            }
            d.trainable &= state.trainable;
            check_size(path, d)?;
        }
        state.decls = decls;
    }
    state.complete = true;
    Ok(())
}

/// Output spaces of one graph-function call, split per flat key where the function asks.
fn infer_graph_fn<B: Backend>(f: &GraphFn<B>, path: &str, state: &CompState, ins: &[Space]) -> Result<Vec<Space>> {
    let template = ins.iter().find(|s| s.is_container());
    match (f.mode, template) {
        (ContainerMode::Split, Some(template)) => {
            let keys: Vec<String> = template.flatten().into_iter().map(|(k, _)| k).collect();
            let mut per_output: Vec<Vec<(String, Space)>> = vec![vec![]; f.outputs];
            for key in &keys {
                let leaves: Vec<Space> = ins
                    .iter()
                    .map(|s| leaf_at(s, key, path, &f.name))
                    .collect::<Result<_>>()?;
                let outs = infer_one(f, path, state, &leaves, key)?;
                for (i, o) in outs.into_iter().enumerate() {
                    if let Some(list) = per_output.get_mut(i) {
                        list.push((key.clone(), o));
                    }
                }
            }
            per_output
                .into_iter()
                .map(|pairs| Ok(Space::unflatten(pairs)?))
                .collect()
        }
        _ => infer_one(f, path, state, ins, ""),
    }
}

/// The leaf of `space` at flat key `key`; a non-container space is its own leaf for every key.
pub(crate) fn leaf_at(space: &Space, key: &str, path: &str, name: &str) -> Result<Space> {
    if !space.is_container() {
        return Ok(space.clone());
    }
    space.leaf_at(key).cloned().ok_or_else(|| CoreError::Component {
        component: path.into(),
        method: Some(name.into()),
        reason: format!("split inputs do not share flat key {key}; container inputs of a split graph function must have the same structure"),
    })
}

fn infer_one<B: Backend>(
    f: &GraphFn<B>,
    path: &str,
    state: &CompState,
    ins: &[Space],
    key: &str,
) -> Result<Vec<Space>> {
    if let Some(infer) = &f.infer {
        return infer(
            &InferCtx {
                component: path,
                vars: &state.decls,
                flat_key: key,
            },
            ins,
        );
    }
    // Fallback: run the kernel on zeros of batch (and time) size 1, on the CPU.
    let ranks = ins
        .iter()
        .flat_map(|s| s.flatten().into_iter().filter_map(|(_, l)| l.ranks()))
        .next()
        .unwrap_or_default();
    let inputs: Vec<Tree<B::Tensor>> = ins
        .iter()
        .map(|s| zeros_tree::<B>(s, Device::Cpu))
        .collect::<Result<_>>()?;
    let infos: Vec<VarInfo> = state
        .decls
        .iter()
        .map(|d| VarInfo {
            path: d.name.clone(),
            decl: d.clone(),
            device: Device::Cpu,
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let store = VariableStore::<B>::create(infos, &mut rng)?;
    let meta = KernelMeta {
        component: path.into(),
        vars: state
            .decls
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.as_str().into(), i))
            .collect(),
        device: Device::Cpu,
        in_spaces: ins.into(),
    };
    let mut ctx = KernelCtx {
        meta: &meta,
        store: &store,
        rng: &mut rng,
        flat_key: key,
    };
    let outs = (f.kernel)(&mut ctx, &inputs)?;
    outs.iter()
        .map(|t| t.try_map(&mut |_, x: &B::Tensor| Ok::<_, CoreError>(space_of_tensor::<B>(x, ranks))))
        .map(|t| t.and_then(tree_space))
        .collect()
}

/// The space of a dummy-run output: leading ranks as the inputs had them, dtype as the tensor's.
fn space_of_tensor<B: Backend>(t: &B::Tensor, ranks: Ranks) -> Space {
    let shape = B::shape(t);
    let extra = ranks.count().min(shape.len());
    let core = shape[extra..].to_vec();
    let ranks = if extra == ranks.count() { ranks } else { Ranks::NONE };
    let space: Space = match B::dtype(t) {
        DType::F32 => FloatBox::new(core).into(),
        DType::F64 => FloatBox::new(core)
            .with_dtype(Dtype::Float64)
            .map(Space::from)
            .unwrap_or_else(|_| FloatBox::new([]).into()),
        DType::I64 => IntBox::unbounded().with_shape(core).into(),
        DType::U8 => BoolBox::new(core).into(),
    };
    space.with_ranks(ranks)
}

fn tree_space(t: Tree<Space>) -> Result<Space> {
    Ok(match t {
        Tree::Leaf(s) => s,
        Tree::Dict(d) => Space::dict(
            d.into_iter()
                .map(|(k, v)| Ok((k, tree_space(v)?)))
                .collect::<Result<Vec<_>>>()?,
        )?,
        Tree::Tuple(v) => Space::tuple(v.into_iter().map(tree_space).collect::<Result<Vec<_>>>()?),
    })
}
