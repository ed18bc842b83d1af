//! Execution plans: each root API method compiled to a flat, topologically ordered list of
//! kernel calls with pre-resolved operand slots and variable indices. The component tree is
//! contracted away: API entries and exits become slot aliases, so running a method is a
//! loop over kernels with no lookups by name and no recursion.

use std::collections::BTreeMap;
use std::sync::Arc;

use petgraph::graph::NodeIndex;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::flat_key::Nest;
use rlgraph_spaces::Space;

use crate::backend::{Backend, Device};
use crate::builder::BuiltGraph;
use crate::convert::value_to_tree;
use crate::error::{CoreError, Result};
use crate::graph_fn::{call_leaf_kernel, ContainerMode, Kernel, KernelCtx, KernelMeta, LeafKernel};
use crate::meta_graph::NodeKind;
use crate::tree::Tree;
use crate::variables::VariableStore;

/// The results of one API method call: one tree per output, held inline for up to two, so
/// a call allocates no list of its own.
pub type Outputs<T> = smallvec::SmallVec<[Tree<T>; 2]>;

/// An input to [`GraphExecutor::execute_tensors`](crate::GraphExecutor::execute_tensors): a
/// tree given by value, or borrowed, which is cloned only where the plan must keep it (a
/// straight plan, like a network's forward pass, only reads it).
pub trait TreeInput<T> {
    /// The tree, borrowed.
    fn as_tree(&self) -> &Tree<T>;
    /// The tree, owned.
    fn into_tree(self) -> Tree<T>;
}

impl<T> TreeInput<T> for Tree<T> {
    fn as_tree(&self) -> &Tree<T> {
        self
    }
    fn into_tree(self) -> Tree<T> {
        self
    }
}

impl<T: Clone> TreeInput<T> for &Tree<T> {
    fn as_tree(&self) -> &Tree<T> {
        self
    }
    fn into_tree(self) -> Tree<T> {
        self.clone()
    }
}

/// One kernel call of a plan.
pub(crate) struct Step<B: Backend> {
    pub(crate) kernel: Kernel<B>,
    /// The same kernel on single tensors, where the graph function has one and no operand
    /// crosses devices: the plan then calls it on the operands where they lie.
    pub(crate) leaf_kernel: Option<LeafKernel<B>>,
    pub(crate) mode: ContainerMode,
    pub(crate) inputs: Vec<usize>,
    /// Whether this step is the last reader of each input slot, so it can move the value out.
    pub(crate) last_use: Vec<bool>,
    /// The input slots this step reads last, emptied after it (the fast path's `last_use`).
    pub(crate) release: Vec<usize>,
    pub(crate) outputs: Vec<usize>,
    /// Inputs produced on another device, moved before the call.
    pub(crate) transfers: Vec<(usize, Device)>,
    /// The graph function's name, for errors.
    pub(crate) name: Arc<str>,
    /// The component, its variables, the device and the input spaces, which the kernel sees.
    pub(crate) meta: KernelMeta,
    /// Leaf kernels fused behind this one (see `fuse_chains`): each runs on the single result
    /// of the kernel before, and the last one's result goes to `outputs`.
    pub(crate) chain: Vec<Link<B>>,
}

/// A leaf kernel fused behind a step: it reads the previous kernel's result directly.
pub(crate) struct Link<B: Backend> {
    kernel: LeafKernel<B>,
    pub(crate) name: Arc<str>,
    pub(crate) meta: KernelMeta,
}

/// Buffers a plan runs in, kept by the executor between calls: operand slots and the
/// argument list of the current kernel.
pub(crate) struct Scratch<B: Backend> {
    slots: Vec<Option<Tree<B::Tensor>>>,
    args: Vec<Tree<B::Tensor>>,
    outs: Vec<B::Tensor>,
}

// Out of line and cold: the plan's loop stays small, leaving the instruction cache to kernels.
impl<B: Backend> Scratch<B> {
    /// Empties every buffer (after a failed call, so that no value outlives it).
    #[cold]
    #[inline(never)]
    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.args.clear();
        self.outs.clear();
    }

    /// Makes room for a plan with `n` slots.
    #[cold]
    #[inline(never)]
    fn resize(&mut self, n: usize) {
        self.slots.clear();
        self.slots.resize(n, None);
    }
}

impl<B: Backend> Default for Scratch<B> {
    fn default() -> Self {
        Scratch {
            slots: vec![],
            args: vec![],
            outs: vec![],
        }
    }
}

/// A compiled root API method.
pub struct Plan<B: Backend> {
    /// The root component and the method, for errors.
    pub(crate) root: String,
    pub(crate) method: String,
    /// The method again, shared by the profiler's step events.
    pub(crate) method_name: Arc<str>,
    pub(crate) steps: Vec<Step<B>>,
    pub(crate) num_slots: usize,
    pub(crate) input_slots: Vec<usize>,
    pub(crate) input_params: Vec<String>,
    pub(crate) input_spaces: Vec<Space>,
    pub(crate) output_slots: Vec<usize>,
    /// Whether each output is cloned out of its slot: a value returned twice is cloned for
    /// all but its last place, and moved there.
    pub(crate) output_clone: Vec<bool>,
    pub(crate) output_spaces: Vec<Space>,
    pub(crate) consts: Vec<(usize, Tree<B::Tensor>)>,
    /// Slots still holding a value after the steps and outputs (constants, unread results),
    /// emptied at the end of each call so that no call sees another's values.
    pub(crate) leftover_slots: Vec<usize>,
    /// Whether the method is one input through one (fused) leaf-kernel step to one output,
    /// as a network's forward pass is: then a single-tensor input never touches a slot.
    pub(crate) straight: bool,
}

impl<B: Backend> Plan<B> {
    /// How many kernel calls one execution makes.
    pub fn len(&self) -> usize {
        self.steps.iter().map(|step| 1 + step.chain.len()).sum()
    }

    /// How many steps the plan loop takes per execution: kernel calls less those fused into
    /// the step before (see `fuse_chains`).
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Whether the method computes nothing (it only passes inputs through).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The method's parameters and their spaces.
    pub fn inputs(&self) -> impl Iterator<Item = (&str, &Space)> {
        self.input_params.iter().map(String::as_str).zip(&self.input_spaces)
    }

    /// The spaces of the method's results.
    pub fn output_spaces(&self) -> &[Space] {
        &self.output_spaces
    }

    /// The values that cross devices on each call: the kernel (`component/graph_fn`), its
    /// operand index, and the device the operand is moved to. For checking a device map.
    pub fn transfers(&self) -> Vec<(String, usize, Device)> {
        self.steps
            .iter()
            .flat_map(|step| {
                step.transfers
                    .iter()
                    .map(move |(i, device)| (format!("{}/{}", step.meta.component, step.name), *i, *device))
            })
            .collect()
    }

    /// Compiles root API method `method` of a built graph.
    pub(crate) fn compile(built: &BuiltGraph<B>, method: &str) -> Result<Self> {
        let meta = &built.meta;
        let io = meta.methods.get(method).ok_or_else(|| CoreError::UnknownApiMethod {
            component: built.root.name.clone(),
            method: method.into(),
            known: meta.methods.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
        // Only the nodes the outputs depend on.
        let mut needed = vec![false; meta.graph.node_count()];
        let mut stack: Vec<NodeIndex> = io.outputs.clone();
        stack.extend(&io.inputs);
        // Graph functions without outputs exist for their side effects (variable updates).
        stack.extend(meta.graph.node_indices().filter(|n| {
            let node = &meta.graph[*n];
            node.root_method == method && node.spaces.is_empty() && matches!(node.kind, NodeKind::GraphFn { .. })
        }));
        while let Some(n) = stack.pop() {
            if !std::mem::replace(&mut needed[n.index()], true) {
                stack.extend(meta.graph[n].inputs.iter().map(|op| op.node));
            }
        }
        let mut slot_of: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut plan = Plan {
            root: built.root.name.clone(),
            method: method.into(),
            method_name: Arc::from(method),
            steps: vec![],
            num_slots: 0,
            input_slots: vec![],
            input_params: io.params.clone(),
            input_spaces: vec![],
            output_slots: vec![],
            output_clone: vec![],
            output_spaces: vec![],
            consts: vec![],
            leftover_slots: vec![],
            straight: false,
        };
        // Where each slot's value lives: API entries and exits only alias slots, so a
        // kernel's operand must be compared with the device of the kernel that made it.
        let mut slot_device: Vec<Device> = vec![];
        let fresh = |plan: &mut Plan<B>, slot_device: &mut Vec<Device>, device: Device| {
            plan.num_slots += 1;
            slot_device.push(device);
            plan.num_slots - 1
        };
        let root_device = built.comps.get(&built.root.name).map(|c| c.device).unwrap_or_default();
        // Node indices are creation order, which is topological: operands exist before use.
        for n in meta.graph.node_indices().filter(|n| needed[n.index()]) {
            let node = &meta.graph[n];
            let in_slots: Vec<usize> = node
                .inputs
                .iter()
                .map(|op| {
                    slot_of
                        .get(&(op.node.index(), op.output))
                        .copied()
                        .ok_or_else(|| CoreError::Component {
                            component: node.component.clone(),
                            method: Some(method.into()),
                            reason: "an operand comes from outside the method's graph (plan bug)".into(),
                        })
                })
                .collect::<Result<_>>()?;
            match &node.kind {
                NodeKind::Input { .. } => {
                    // Host values are uploaded to the root's device (`GraphExecutor::execute`).
                    let s = fresh(&mut plan, &mut slot_device, root_device);
                    slot_of.insert((n.index(), 0), s);
                }
                NodeKind::Const { value } => {
                    let s = fresh(&mut plan, &mut slot_device, node.device);
                    plan.consts.push((s, value_to_tree::<B>(value, node.device)?));
                    slot_of.insert((n.index(), 0), s);
                }
                NodeKind::ApiEnter { .. } | NodeKind::ApiExit { .. } | NodeKind::Output { .. } => {
                    for (i, s) in in_slots.iter().enumerate() {
                        slot_of.insert((n.index(), i), *s);
                    }
                }
                NodeKind::GraphFn { name } => {
                    let comp = built.component(&node.component)?;
                    let f = comp.find_graph_fn(name, &node.component)?;
                    let state = &built.comps[&node.component];
                    let transfers: Vec<(usize, Device)> = in_slots
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| slot_device[**s] != node.device)
                        .map(|(i, _)| (i, node.device))
                        .collect();
                    let outputs: Vec<usize> = (0..node.spaces.len())
                        .map(|_| fresh(&mut plan, &mut slot_device, node.device))
                        .collect();
                    for (i, s) in outputs.iter().enumerate() {
                        slot_of.insert((n.index(), i), *s);
                    }
                    plan.steps.push(Step {
                        kernel: f.kernel.clone(),
                        leaf_kernel: f.leaf_kernel.clone().filter(|_| transfers.is_empty()),
                        mode: f.mode,
                        last_use: vec![false; in_slots.len()],
                        release: vec![],
                        inputs: in_slots,
                        outputs,
                        transfers,
                        chain: vec![],
                        name: name.as_str().into(),
                        meta: KernelMeta {
                            component: node.component.as_str().into(),
                            vars: state
                                .decls
                                .iter()
                                .map(|d| d.name.as_str().into())
                                .zip(state.var_ids.iter().copied())
                                .collect(),
                            device: node.device,
                            in_spaces: node
                                .inputs
                                .iter()
                                .map(|op| meta.space(*op).cloned().unwrap_or_else(|| Space::tuple(vec![])))
                                .collect(),
                        },
                    });
                }
                NodeKind::Variables => {
                    let prefix = format!("{}/", node.component);
                    let vars: Vec<(String, usize)> = built
                        .vars
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.path.starts_with(&prefix))
                        .map(|(i, v)| (v.path.replace('/', "."), i))
                        .collect();
                    let kernel: Kernel<B> = Arc::new(move |ctx: &mut KernelCtx<'_, B>, _: &[Tree<B::Tensor>]| {
                        let store = ctx.store();
                        Ok(vec![Tree::Dict(
                            vars.iter()
                                .map(|(k, i)| (k.clone(), Tree::Leaf(B::var_tensor(store.var(*i)).clone())))
                                .collect(),
                        )])
                    });
                    let s = fresh(&mut plan, &mut slot_device, node.device);
                    slot_of.insert((n.index(), 0), s);
                    plan.steps.push(Step {
                        kernel,
                        leaf_kernel: None,
                        mode: ContainerMode::AsIs,
                        inputs: vec![],
                        last_use: vec![],
                        release: vec![],
                        outputs: vec![s],
                        transfers: vec![],
                        chain: vec![],
                        name: "variables".into(),
                        meta: KernelMeta {
                            component: node.component.as_str().into(),
                            vars: Box::new([]),
                            device: node.device,
                            in_spaces: Arc::new([]),
                        },
                    });
                }
            }
        }
        for n in &io.inputs {
            plan.input_slots.push(slot_of[&(n.index(), 0)]);
            plan.input_spaces
                .push(meta.graph[*n].spaces[0].clone().unwrap_or_else(|| Space::tuple(vec![])));
        }
        for n in &io.outputs {
            plan.output_slots.push(slot_of[&(n.index(), 0)]);
            plan.output_spaces
                .push(meta.graph[*n].spaces[0].clone().unwrap_or_else(|| Space::tuple(vec![])));
        }
        // Walking backwards, the first time a slot is seen is its last use; outputs and
        // constants are read after the steps (or refilled per call), so they are never moved.
        let mut later: std::collections::BTreeSet<usize> = plan.output_slots.iter().copied().collect();
        later.extend(plan.consts.iter().map(|(s, _)| *s));
        for step in plan.steps.iter_mut().rev() {
            for i in 0..step.inputs.len() {
                let s = step.inputs[i];
                let again_in_step = step.inputs[i + 1..].contains(&s);
                step.last_use[i] = !again_in_step && later.insert(s);
            }
            step.release = step
                .inputs
                .iter()
                .zip(&step.last_use)
                .filter(|(_, last)| **last)
                .map(|(s, _)| *s)
                .collect();
        }
        plan.output_clone = (0..plan.output_slots.len())
            .map(|i| plan.output_slots[i + 1..].contains(&plan.output_slots[i]))
            .collect();
        let mut taken: std::collections::BTreeSet<usize> = plan.output_slots.iter().copied().collect();
        for step in &plan.steps {
            taken.extend(&step.release);
        }
        let written = plan
            .input_slots
            .iter()
            .chain(plan.consts.iter().map(|(s, _)| s))
            .chain(plan.steps.iter().flat_map(|step| &step.outputs));
        plan.leftover_slots = written.filter(|s| !taken.contains(s)).copied().collect();
        plan.leftover_slots.sort_unstable();
        plan.leftover_slots.dedup();
        plan.fuse_chains();
        plan.straight = match plan.steps.as_slice() {
            [step] => {
                step.leaf_kernel.is_some()
                    && plan.consts.is_empty()
                    && plan.input_slots.len() == 1
                    && step.inputs == plan.input_slots
                    && plan.output_slots.len() == 1
                    && step.outputs == plan.output_slots
            }
            _ => false,
        };
        Ok(plan)
    }

    /// Fuses each step into the one before when it is a leaf kernel whose only operand is the
    /// previous leaf kernel's only result, read by nothing else: a layer stack then runs as one
    /// step, its values passed from kernel to kernel without going through slots.
    fn fuse_chains(&mut self) {
        let steps = std::mem::take(&mut self.steps);
        let mut fused: Vec<Step<B>> = Vec::with_capacity(steps.len());
        for step in steps {
            let head = match fused.last_mut() {
                Some(head) if fuses_behind(head, &step) => head,
                _ => {
                    fused.push(step);
                    continue;
                }
            };
            let Step {
                leaf_kernel,
                name,
                meta,
                outputs,
                ..
            } = step;
            if let Some(kernel) = leaf_kernel {
                head.chain.push(Link { kernel, name, meta });
                head.outputs = outputs;
            }
        }
        self.steps = fused;
    }

    /// Runs the plan on `inputs`, using `scratch` for operands (kept between calls, so a call
    /// allocates nothing of its own beyond its results).
    pub(crate) fn run(
        &self,
        inputs: impl IntoIterator<Item = impl TreeInput<B::Tensor>>,
        store: &VariableStore<B>,
        rng: &mut ChaCha8Rng,
        scratch: &mut Scratch<B>,
    ) -> Result<Outputs<B::Tensor>> {
        // Every slot is empty between calls (see the end), so only a new size needs work.
        if scratch.slots.len() != self.num_slots {
            scratch.resize(self.num_slots);
        }
        let Scratch { slots, args, outs } = scratch;
        match self.run_steps(inputs, store, rng, slots, args, outs) {
            Ok(outputs) => Ok(outputs),
            Err(e) => {
                scratch.clear();
                Err(e)
            }
        }
    }

    fn run_steps(
        &self,
        inputs: impl IntoIterator<Item = impl TreeInput<B::Tensor>>,
        store: &VariableStore<B>,
        rng: &mut ChaCha8Rng,
        slots: &mut [Option<Tree<B::Tensor>>],
        args: &mut Vec<Tree<B::Tensor>>,
        outs: &mut Vec<B::Tensor>,
    ) -> Result<Outputs<B::Tensor>> {
        let mut inputs = inputs.into_iter();
        let mut first = None;
        if self.straight {
            match (inputs.next(), inputs.next()) {
                (Some(input), None) if input.as_tree().as_leaf().is_some() => {
                    let y = self.run_straight(input, store, rng, outs)?;
                    return Ok(smallvec::smallvec![Tree::Leaf(y)]);
                }
                // A container, or a wrong count: the general path handles (or reports) it.
                (a, b) => first = Some([a, b]),
            }
        }
        for (s, t) in &self.consts {
            slots[*s] = Some(t.clone());
        }
        let mut given = 0;
        for t in first.into_iter().flatten().flatten().chain(inputs) {
            if let Some(&s) = self.input_slots.get(given) {
                slots[s] = Some(t.into_tree());
            }
            given += 1;
        }
        if given != self.input_slots.len() {
            return Err(self.wrong_input_count(given));
        }
        for step in &self.steps {
            let _profiled = self.profile_step(step);
            let mut ctx = KernelCtx::new(&step.meta, store, rng);
            // The fast path: a leaf kernel whose operands are single tensors (and on its
            // device: see `compile`) reads them where they lie; nothing is moved, cloned or wrapped.
            outs.clear();
            let fast = match &step.leaf_kernel {
                Some(kernel) => {
                    let leaf = |i: usize| slots.get(step.inputs[i])?.as_ref()?.as_leaf();
                    call_leaf_kernel(kernel, &mut ctx, step.inputs.len(), leaf, outs)
                }
                None => Ok(false),
            };
            let done = match fast {
                Ok(true) if outs.len() == step.outputs.len() => {
                    for &s in &step.release {
                        slots[s] = None;
                    }
                    if step.chain.is_empty() {
                        while let Some(o) = outs.pop() {
                            slots[step.outputs[outs.len()]] = Some(Tree::Leaf(o));
                        }
                        Ok(())
                    } else {
                        finish_chain(step, outs.pop(), store, rng, slots, outs)
                    }
                }
                Ok(true) => Err(step.wrong_output_count(outs.len())),
                Ok(false) => general_step(step, &mut ctx, slots, args).and_then(|()| {
                    if step.chain.is_empty() {
                        return Ok(());
                    }
                    let x = slots[step.outputs[0]].take().and_then(Tree::into_leaf);
                    finish_chain(step, x, store, rng, slots, outs)
                }),
                Err(e) => Err(e),
            };
            if let Err(e) = done {
                return Err(step.located(e));
            }
        }
        let mut outputs = Outputs::new();
        for (&s, &clone) in self.output_slots.iter().zip(&self.output_clone) {
            let value = if clone { slots[s].clone() } else { slots[s].take() };
            outputs.push(value.ok_or_else(|| CoreError::Component {
                component: self.root.clone(),
                method: Some(self.method.clone()),
                reason: "an output was never computed (plan bug)".into(),
            })?);
        }
        for &s in &self.leftover_slots {
            slots[s] = None;
        }
        Ok(outputs)
    }

    /// Runs a straight plan (see `straight`) on its single-tensor input.
    fn run_straight(
        &self,
        input: impl TreeInput<B::Tensor>,
        store: &VariableStore<B>,
        rng: &mut ChaCha8Rng,
        outs: &mut Vec<B::Tensor>,
    ) -> Result<B::Tensor> {
        let (step, kernel) = match self.steps.first() {
            Some(
                step @ Step {
                    leaf_kernel: Some(kernel),
                    ..
                },
            ) => (step, kernel),
            _ => return Err(self.not_straight()),
        };
        let Some(x) = input.as_tree().as_leaf() else {
            return Err(self.not_straight());
        };
        let profiled = self.profile_step(step);
        let y = call_on_one(kernel, &mut KernelCtx::new(&step.meta, store, rng), &step.name, x, outs)?;
        drop(profiled);
        drop(input);
        run_chain(&step.chain, y, store, rng, outs)
    }

    /// The profiler's capture of one step (nothing when profiling is off): backend time on
    /// the host; on a GPU, a bracket synchronized on both ends, so the kernels' time is in it.
    #[inline]
    fn profile_step(&self, step: &Step<B>) -> StepCapture<B> {
        if !crate::profiler::enabled(crate::profiler::Level::Full) {
            return StepCapture::off();
        }
        let device = step.meta.device;
        let gpu = device != Device::Cpu && B::sync(device).is_ok();
        let scope = crate::profiler::capture_step(&step.meta.component, &step.name, &self.method_name);
        StepCapture {
            _scope: scope,
            gpu: gpu.then_some(device),
            backend: std::marker::PhantomData,
        }
    }

    #[cold]
    fn not_straight(&self) -> CoreError {
        CoreError::Component {
            component: self.root.clone(),
            method: Some(self.method.clone()),
            reason: "the plan is not straight (plan bug)".into(),
        }
    }

    #[cold]
    fn wrong_input_count(&self, given: usize) -> CoreError {
        CoreError::BadArguments {
            component: self.root.clone(),
            method: self.method.clone(),
            reason: format!(
                "{given} inputs given, the method takes {} ({})",
                self.input_slots.len(),
                self.input_params.join(", ")
            ),
        }
    }
}

/// A plan step's open profiler scope; on a GPU it waits for the step's kernels (recorded as
/// GPU time) before the scope closes.
struct StepCapture<B: Backend> {
    // Held for its drop, which records the step.
    _scope: crate::profiler::Scope<'static>,
    gpu: Option<Device>,
    backend: std::marker::PhantomData<B>,
}

impl<B: Backend> StepCapture<B> {
    fn off() -> Self {
        StepCapture {
            _scope: crate::profiler::Scope::off(),
            gpu: None,
            backend: std::marker::PhantomData,
        }
    }
}

impl<B: Backend> Drop for StepCapture<B> {
    fn drop(&mut self) {
        // The wait for the step's kernels is GPU time; the step's scope (a field, dropped
        // after this) closes around it.
        if let Some(device) = self.gpu {
            let _gpu = crate::profiler::capture(crate::profiler::Category::Gpu, "kernels");
            // A failed sync only blurs this one measurement; the step's result stands.
            let _ = B::sync(device);
        }
    }
}

/// Whether `next` can run fused behind `head` (see `Plan::fuse_chains`). Both must be leaf
/// kernels that only ever see and make single tensors, so the value passed along is always a
/// leaf: outside split mode, or in split mode over inputs the build found primitive.
fn fuses_behind<B: Backend>(head: &Step<B>, next: &Step<B>) -> bool {
    let leafy = |s: &Step<B>| {
        s.leaf_kernel.is_some()
            && s.outputs.len() == 1
            && (s.mode != ContainerMode::Split || s.meta.in_spaces.iter().all(|sp| !sp.is_container()))
    };
    leafy(head) && leafy(next) && next.inputs == head.outputs && next.last_use == [true]
}

/// Runs the leaf kernels fused behind a step on its result `x`, each on the one before's.
fn run_chain<B: Backend>(
    chain: &[Link<B>],
    mut x: B::Tensor,
    store: &VariableStore<B>,
    rng: &mut ChaCha8Rng,
    outs: &mut Vec<B::Tensor>,
) -> Result<B::Tensor> {
    let Some(first) = chain.first() else {
        return Ok(x);
    };
    let mut ctx = KernelCtx::new(&first.meta, store, rng);
    for link in chain {
        ctx.meta = &link.meta;
        x = call_on_one(&link.kernel, &mut ctx, &link.name, &x, outs)?;
    }
    Ok(x)
}

/// Calls leaf kernel `name` (of `ctx`'s component) on the single tensor `x` for its single
/// result, which fused and straight kernels make.
// Always inlined: out of line, each call would hand a large `Result` back through memory.
#[inline(always)]
fn call_on_one<B: Backend>(
    kernel: &LeafKernel<B>,
    ctx: &mut KernelCtx<'_, B>,
    name: &str,
    x: &B::Tensor,
    outs: &mut Vec<B::Tensor>,
) -> Result<B::Tensor> {
    outs.clear();
    if let Err(e) = kernel(ctx, &[x], outs) {
        return Err(located(ctx.meta, name, e));
    }
    match outs.pop() {
        Some(y) if outs.is_empty() => Ok(y),
        y => Err(wrong_output_count(
            ctx.meta,
            name,
            outs.len() + usize::from(y.is_some()),
            1,
        )),
    }
}

/// `e` with the place of kernel `name` of `meta.component`, unless it names one already.
#[cold]
fn located(meta: &KernelMeta, name: &str, e: CoreError) -> CoreError {
    match e {
        e @ (CoreError::Component { .. } | CoreError::Variable { .. } | CoreError::SpaceMismatch { .. }) => e,
        other => CoreError::Component {
            component: meta.component.to_string(),
            method: Some(name.into()),
            reason: other.to_string(),
        },
    }
}

/// A kernel returned another number of results than it declares.
#[cold]
fn wrong_output_count(meta: &KernelMeta, name: &str, returned: usize, declared: usize) -> CoreError {
    CoreError::Component {
        component: meta.component.to_string(),
        method: Some(name.into()),
        reason: format!("the graph function returned {returned} outputs; it declares {declared}"),
    }
}

impl<B: Backend> Step<B> {
    /// `e` with this step's place, unless it names one already.
    fn located(&self, e: CoreError) -> CoreError {
        located(&self.meta, &self.name, e)
    }

    /// The step's kernel returned `returned` results, not the number it declares.
    fn wrong_output_count(&self, returned: usize) -> CoreError {
        let declared = if self.chain.is_empty() { self.outputs.len() } else { 1 };
        wrong_output_count(&self.meta, &self.name, returned, declared)
    }
}

/// Runs the chain fused behind `step` on the head kernel's result `x` and stores the last
/// result; `x` is `None` when the head made no single tensor, which fusion rules out.
fn finish_chain<B: Backend>(
    step: &Step<B>,
    x: Option<B::Tensor>,
    store: &VariableStore<B>,
    rng: &mut ChaCha8Rng,
    slots: &mut [Option<Tree<B::Tensor>>],
    outs: &mut Vec<B::Tensor>,
) -> Result<()> {
    let x = x.ok_or_else(|| CoreError::Component {
        component: step.meta.component.to_string(),
        method: Some(step.name.to_string()),
        reason: "a fused kernel made no single tensor (plan bug)".into(),
    })?;
    slots[step.outputs[0]] = Some(Tree::Leaf(run_chain(&step.chain, x, store, rng, outs)?));
    Ok(())
}

/// Runs one step the general way: operands moved (or cloned) out of their slots, moved to the
/// step's device, passed as trees; results stored in the step's output slots.
// Out of line: the plan's loop stays small, so it leaves the instruction cache to the kernels.
#[inline(never)]
fn general_step<B: Backend>(
    step: &Step<B>,
    ctx: &mut KernelCtx<'_, B>,
    slots: &mut [Option<Tree<B::Tensor>>],
    args: &mut Vec<Tree<B::Tensor>>,
) -> Result<()> {
    args.clear();
    for (&s, &last) in step.inputs.iter().zip(&step.last_use) {
        let value = if last { slots[s].take() } else { slots[s].clone() };
        args.push(value.ok_or_else(|| CoreError::Component {
            component: step.meta.component.to_string(),
            method: Some(step.name.to_string()),
            reason: "an operand was never computed (plan bug)".into(),
        })?);
    }
    for (i, device) in &step.transfers {
        args[*i] = args[*i].try_map(&mut |_, t| B::to_device(t, *device))?;
    }
    let outs = run_kernel(step, ctx, args)?;
    if outs.len() != step.outputs.len() {
        return Err(step.wrong_output_count(outs.len()));
    }
    for (o, s) in outs.into_iter().zip(&step.outputs) {
        slots[*s] = Some(o);
    }
    args.clear();
    Ok(())
}

fn run_kernel<B: Backend>(
    step: &Step<B>,
    ctx: &mut KernelCtx<'_, B>,
    args: &[Tree<B::Tensor>],
) -> Result<Vec<Tree<B::Tensor>>> {
    let template = args.iter().find(|a| a.is_container());
    match (step.mode, template) {
        (ContainerMode::Split, Some(template)) => {
            let keys: Vec<String> = template.flatten().into_iter().map(|(k, _)| k).collect();
            let mut per_output: Vec<Vec<(String, B::Tensor)>> = vec![];
            for key in &keys {
                let leaves: Vec<Tree<B::Tensor>> = args
                    .iter()
                    .map(|a| match a {
                        Tree::Leaf(_) => Ok(a.clone()),
                        c => c.leaf_at(key).cloned().ok_or_else(|| CoreError::Component {
                            component: step.meta.component.to_string(),
                            method: Some(step.name.to_string()),
                            reason: format!("split inputs do not share flat key {key}"),
                        }),
                    })
                    .collect::<Result<_>>()?;
                let outs = (step.kernel)(&mut ctx.with_key(key), &leaves)?;
                per_output.resize_with(outs.len(), Vec::new);
                for (i, o) in outs.into_iter().enumerate() {
                    let leaf = o.into_leaf().ok_or_else(|| CoreError::Component {
                        component: step.meta.component.to_string(),
                        method: Some(step.name.to_string()),
                        reason: "a split graph function must return single tensors per flat key".into(),
                    })?;
                    per_output[i].push((key.clone(), leaf));
                }
            }
            per_output.into_iter().map(Tree::from_flat).collect()
        }
        (ContainerMode::Flatten, Some(_)) => {
            let flat: Vec<Tree<B::Tensor>> = args
                .iter()
                .map(|a| match a {
                    Tree::Leaf(_) => a.clone(),
                    c => Tree::Dict(
                        c.flatten()
                            .into_iter()
                            .map(|(k, t)| (k, Tree::Leaf(t.clone())))
                            .collect(),
                    ),
                })
                .collect();
            let outs = (step.kernel)(ctx, &flat)?;
            // Outputs that are flat Dicts (every key a flat key) are nested back.
            outs.into_iter()
                .map(|o| match o {
                    Tree::Dict(d) if !d.is_empty() && d.keys().all(|k| k.starts_with('/')) => {
                        let pairs: Option<Vec<(String, B::Tensor)>> =
                            d.into_iter().map(|(k, v)| v.into_leaf().map(|t| (k, t))).collect();
                        match pairs {
                            Some(p) => Tree::from_flat(p),
                            None => Err(CoreError::Component {
                                component: step.meta.component.to_string(),
                                method: Some(step.name.to_string()),
                                reason: "a flat output Dict must hold single tensors".into(),
                            }),
                        }
                    }
                    other => Ok(other),
                })
                .collect()
        }
        _ => (step.kernel)(ctx, args),
    }
}
