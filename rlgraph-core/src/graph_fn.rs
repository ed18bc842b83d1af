//! Graph functions: the only place numbers are computed, written once against `Backend`.

use std::sync::Arc;

use compact_str::CompactString;

use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::flat_key::Nest;
use rlgraph_spaces::Space;

use crate::backend::{Backend, BackendCore, Device};
use crate::error::{CoreError, Result};
use crate::tree::Tree;
use crate::variables::{VarDecl, VariableStore};

/// A kernel: input trees of tensors in, output trees out.
pub type Kernel<B> = Arc<
    dyn Fn(&mut KernelCtx<'_, B>, &[Tree<<B as BackendCore>::Tensor>]) -> Result<Vec<Tree<<B as BackendCore>::Tensor>>>
        + Send
        + Sync,
>;

/// A kernel on single tensors (from [`GraphFn::tensors`]), appending its results to the
/// buffer given; plans call it directly when every operand is a leaf, which spares wrapping
/// operands and results in trees, and (for kernels returning arrays) any allocation.
pub type LeafKernel<B> = Arc<
    dyn Fn(&mut KernelCtx<'_, B>, &[&<B as BackendCore>::Tensor], &mut Vec<<B as BackendCore>::Tensor>) -> Result<()>
        + Send
        + Sync,
>;

/// Output-space inference: input spaces in, output spaces out.
pub type Infer = Arc<dyn Fn(&InferCtx<'_>, &[Space]) -> Result<Vec<Space>> + Send + Sync>;

/// How a graph function treats container (Dict / Tuple) inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContainerMode {
    /// Containers arrive as they are.
    #[default]
    AsIs,
    /// Containers arrive flattened: a one-level Dict keyed by flat key (RLgraph's `flatten_ops`).
    Flatten,
    /// The kernel runs once per flat key on the matching leaves (RLgraph's `split_ops`);
    /// non-container inputs go to every call, and outputs are nested back.
    Split,
}

/// A named kernel of a component, with its output count and (optionally) explicit output-space inference.
#[derive(Clone)]
pub struct GraphFn<B: Backend> {
    pub(crate) name: String,
    pub(crate) outputs: usize,
    pub(crate) mode: ContainerMode,
    pub(crate) kernel: Kernel<B>,
    pub(crate) leaf_kernel: Option<LeafKernel<B>>,
    pub(crate) infer: Option<Infer>,
}

impl<B: Backend> GraphFn<B> {
    /// A graph function with one output, whose output spaces are found by running the kernel
    /// on dummy inputs of batch size 1 unless `infer` says otherwise.
    pub fn new(
        name: impl Into<String>,
        kernel: impl Fn(&mut KernelCtx<'_, B>, &[Tree<B::Tensor>]) -> Result<Vec<Tree<B::Tensor>>> + Send + Sync + 'static,
    ) -> Self {
        GraphFn {
            name: name.into(),
            outputs: 1,
            mode: ContainerMode::AsIs,
            kernel: Arc::new(kernel),
            leaf_kernel: None,
            infer: None,
        }
    }

    /// A graph function on single tensors (every input and output a leaf). The kernel returns
    /// its results as any list: a `Vec`, or an array (`Ok([y])`), which costs no allocation.
    /// A kernel that calls no `B::` function gives Rust nothing to infer the backend from;
    /// name it then: `GraphFn::<B>::tensors("copy", |_, xs| Ok([xs[0].clone()]))`.
    pub fn tensors<O>(
        name: impl Into<String>,
        kernel: impl Fn(&mut KernelCtx<'_, B>, &[&B::Tensor]) -> Result<O> + Send + Sync + 'static,
    ) -> Self
    where
        O: IntoIterator<Item = B::Tensor>,
    {
        let name = name.into();
        let fn_name = name.clone();
        let leaf_kernel: LeafKernel<B> = Arc::new(move |ctx, xs, out| {
            out.extend(kernel(ctx, xs)?);
            Ok(())
        });
        let inner = leaf_kernel.clone();
        let mut f = Self::new(name, move |ctx, inputs| {
            let mut outputs = vec![];
            match call_leaf_kernel(&inner, ctx, inputs.len(), |i| inputs[i].as_leaf(), &mut outputs)? {
                true => Ok(outputs.into_iter().map(Tree::Leaf).collect()),
                false => Err(CoreError::Component {
                    component: ctx.component().into(),
                    method: Some(fn_name.clone()),
                    reason: format!(
                        "input {} is a container; this graph function takes single tensors (use split mode)",
                        inputs.iter().position(|t| t.as_leaf().is_none()).unwrap_or_default()
                    ),
                }),
            }
        });
        f.leaf_kernel = Some(leaf_kernel);
        f
    }

    /// The same function with `n` outputs.
    pub fn outputs(mut self, n: usize) -> Self {
        self.outputs = n;
        self
    }

    /// The same function with another container mode.
    pub fn mode(mut self, mode: ContainerMode) -> Self {
        self.mode = mode;
        self
    }

    /// The same function with explicit output-space inference.
    pub fn infer(mut self, f: impl Fn(&InferCtx<'_>, &[Space]) -> Result<Vec<Space>> + Send + Sync + 'static) -> Self {
        self.infer = Some(Arc::new(f));
        self
    }

    /// The same function whose outputs have the spaces of its first input (elementwise ops).
    pub fn infer_same(self) -> Self {
        let n = self.outputs;
        self.infer(move |_, spaces| Ok(vec![spaces.first().cloned().unwrap_or_else(|| Space::tuple(vec![])); n]))
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Where a kernel call runs: its component, the component's variables, the device and the
/// input spaces. Plans make one per kernel when they are compiled, so a call passes one pointer.
pub(crate) struct KernelMeta {
    pub(crate) component: Arc<str>,
    /// The component's variables: name and index in the store. Names are held inline (up to
    /// 24 bytes), so a lookup, which runs on every kernel call, reads one small table.
    pub(crate) vars: Box<[(CompactString, usize)]>,
    pub(crate) device: Device,
    pub(crate) in_spaces: Arc<[Space]>,
}

/// What a kernel can reach while it runs: its component's variables, the seeded RNG, the device.
pub struct KernelCtx<'a, B: Backend> {
    pub(crate) meta: &'a KernelMeta,
    pub(crate) store: &'a VariableStore<B>,
    pub(crate) rng: &'a mut ChaCha8Rng,
    pub(crate) flat_key: &'a str,
}

impl<'a, B: Backend> KernelCtx<'a, B> {
    /// The context of a kernel call outside split mode (no flat key).
    pub(crate) fn new(meta: &'a KernelMeta, store: &'a VariableStore<B>, rng: &'a mut ChaCha8Rng) -> Self {
        KernelCtx {
            meta,
            store,
            rng,
            flat_key: "",
        }
    }

    /// The space of input `i` as the build inferred it (batch and time sizes aside).
    pub fn input_space(&self, i: usize) -> Option<&'a Space> {
        self.meta.in_spaces.get(i)
    }

    /// The space of input `i` at the current flat key: in split mode the leaf this call sees,
    /// otherwise the whole input's space.
    pub fn input_leaf_space(&self, i: usize) -> Option<&'a Space> {
        let space = self.input_space(i)?;
        if self.flat_key.is_empty() || !space.is_container() {
            return Some(space);
        }
        space.leaf_at(self.flat_key)
    }

    /// The tensor of this component's variable `name`.
    pub fn var(&self, name: &str) -> Result<&'a B::Tensor> {
        Ok(B::var_tensor(self.var_handle(name)?))
    }

    /// The handle of this component's variable `name` (for gradients and updates).
    pub fn var_handle(&self, name: &str) -> Result<&'a B::Var> {
        let store: &'a VariableStore<B> = self.store;
        let meta: &'a KernelMeta = self.meta;
        match meta.vars.iter().find(|(n, _)| n.as_str() == name) {
            Some((_, id)) => Ok(store.var(*id)),
            None => Err(self.no_such_variable(name)),
        }
    }

    // Kept out of line so the lookup above, which runs on every kernel call, stays small.
    #[cold]
    #[inline(never)]
    fn no_such_variable(&self, name: &str) -> CoreError {
        CoreError::Variable {
            path: format!("{}/{name}", self.meta.component),
            reason: format!(
                "component declares no such variable (it has: {})",
                self.meta
                    .vars
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The store of all variables, for components that act on others' variables (optimizers, syncs).
    pub fn store(&self) -> &'a VariableStore<B> {
        self.store
    }

    /// The seeded RNG of the executor: the only source of randomness a kernel may use.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
    }

    /// The device this kernel runs on.
    pub fn device(&self) -> Device {
        self.meta.device
    }

    /// The flat key of the current call in split mode (`""` otherwise).
    pub fn flat_key(&self) -> &str {
        self.flat_key
    }

    /// The component's scope path.
    pub fn component(&self) -> &str {
        &self.meta.component
    }

    pub(crate) fn with_key<'b>(&'b mut self, key: &'b str) -> KernelCtx<'b, B> {
        KernelCtx {
            meta: self.meta,
            store: self.store,
            rng: self.rng,
            flat_key: key,
        }
    }
}

/// What output-space inference can see: the component's variable declarations and the flat key.
pub struct InferCtx<'a> {
    pub(crate) component: &'a str,
    pub(crate) vars: &'a [VarDecl],
    pub(crate) flat_key: &'a str,
}

impl InferCtx<'_> {
    /// The declaration of this component's variable `name`.
    pub fn var(&self, name: &str) -> Option<&VarDecl> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// The component's scope path.
    pub fn component(&self) -> &str {
        self.component
    }

    /// The flat key of the current leaf in split mode (`""` otherwise).
    pub fn flat_key(&self) -> &str {
        self.flat_key
    }
}

/// Calls a leaf kernel on `count` operands, the `i`-th given by `leaf(i)`, appending its
/// results to `out`; gives `Ok(false)`, calling nothing, when an operand is not a single tensor.
#[inline]
pub(crate) fn call_leaf_kernel<'t, B: Backend>(
    kernel: &LeafKernel<B>,
    ctx: &mut KernelCtx<'_, B>,
    count: usize,
    leaf: impl Fn(usize) -> Option<&'t B::Tensor>,
    out: &mut Vec<B::Tensor>,
) -> Result<bool>
where
    B::Tensor: 't,
{
    // Short operand lists live on the stack: this runs once per kernel call. The result is a
    // plain `Result<bool>`, not an `Option<Result<()>>`, which would copy the error's bytes.
    match count {
        0 => kernel(ctx, &[], out)?,
        1 => match leaf(0) {
            Some(a) => kernel(ctx, &[a], out)?,
            None => return Ok(false),
        },
        2 => match (leaf(0), leaf(1)) {
            (Some(a), Some(b)) => kernel(ctx, &[a, b], out)?,
            _ => return Ok(false),
        },
        3 => match (leaf(0), leaf(1), leaf(2)) {
            (Some(a), Some(b), Some(c)) => kernel(ctx, &[a, b, c], out)?,
            _ => return Ok(false),
        },
        n => match (0..n).map(leaf).collect::<Option<Vec<_>>>() {
            Some(xs) => kernel(ctx, &xs, out)?,
            None => return Ok(false),
        },
    }
    Ok(true)
}
