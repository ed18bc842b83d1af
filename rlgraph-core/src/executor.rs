//! `GraphExecutor`: runs the compiled plans of a built graph on one backend and owns its variables.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_spaces::{Space, Value};

use crate::backend::{Backend, Device, HostTensor};
use crate::builder::{build, BuildOptions, BuildReport, BuiltGraph};
use crate::component::Component;
use crate::convert::{tree_to_value, value_into_tree, value_to_tree};
use crate::error::{CoreError, Result};
use crate::meta_graph::MetaGraph;
use crate::plan::{Outputs, Plan, Scratch, TreeInput};
use crate::variables::{VarInfo, VariableStore};

/// Runs a built component graph: API methods by name, variables by scope path, checkpoints.
pub struct GraphExecutor<B: Backend> {
    pub(crate) built: BuiltGraph<B>,
    pub(crate) store: VariableStore<B>,
    pub(crate) plans: BTreeMap<String, Plan<B>>,
    pub(crate) rng: ChaCha8Rng,
    scratch: Scratch<B>,
}

impl<B: Backend> GraphExecutor<B> {
    /// Builds `root` from its input spaces and creates its variables, seeded by `seed`.
    pub fn build(
        root: Component<B>,
        input_spaces: &BTreeMap<String, Space>,
        options: &BuildOptions,
        seed: u64,
    ) -> Result<Self> {
        Self::new(build(root, input_spaces, options)?, seed)
    }

    /// Creates the variables of a built graph (random initializers drawn from `seed`) and compiles its plans.
    pub fn new(built: BuiltGraph<B>, seed: u64) -> Result<Self> {
        for v in &built.vars {
            if !B::device_available(v.device) {
                return Err(CoreError::Device(format!(
                    "variable {} is placed on {}, which backend {} cannot use here; change the device map",
                    v.path,
                    v.device,
                    B::NAME
                )));
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let store = VariableStore::create(built.vars.clone(), &mut rng)?;
        let plans = built
            .meta
            .methods
            .keys()
            .map(|m| Ok((m.clone(), Plan::compile(&built, m)?)))
            .collect::<Result<_>>()?;
        Ok(GraphExecutor {
            built,
            store,
            plans,
            rng,
            scratch: Scratch::default(),
        })
    }

    /// [`Self::execute_owned`] without recording gradient history ([`AutodiffOps::without_grad`](crate::AutodiffOps::without_grad)),
    /// for calls whose outputs no gradient will flow through, such as acting.
    pub fn execute_without_grad(&mut self, method: &str, inputs: Vec<Value>) -> Result<Vec<Value>> {
        B::without_grad(|| self.execute_owned(method, inputs))
    }

    /// Executes API method `method` on host values, checking each against its parameter's space.
    pub fn execute(&mut self, method: &str, inputs: &[Value]) -> Result<Vec<Value>> {
        self.execute_values(method, inputs.iter().collect(), |v, device| {
            value_to_tree::<B>(v, device)
        })
    }

    /// [`Self::execute`] on borrowed values, so a caller that holds a replayed batch need not
    /// copy its frames to pass them.
    pub fn execute_refs(&mut self, method: &str, inputs: &[&Value]) -> Result<Vec<Value>> {
        self.execute_values(method, inputs.to_vec(), |v, device| value_to_tree::<B>(v, device))
    }

    /// [`Self::execute`] on values it may take apart: their data moves into the upload
    /// instead of being copied (an actor's freshly stacked states).
    pub fn execute_owned(&mut self, method: &str, inputs: Vec<Value>) -> Result<Vec<Value>> {
        self.execute_values(method, inputs, |v, device| value_into_tree::<B>(v, device))
    }

    fn execute_values<V: std::borrow::Borrow<Value>>(
        &mut self,
        method: &str,
        inputs: Vec<V>,
        upload: impl Fn(V, Device) -> Result<crate::tree::Tree<B::Tensor>>,
    ) -> Result<Vec<Value>> {
        let plan = self.plan(method)?;
        if inputs.len() != plan.input_slots.len() {
            return Err(CoreError::BadArguments {
                component: self.built.root.name.clone(),
                method: method.into(),
                reason: format!(
                    "{} inputs given, the method takes {} ({})",
                    inputs.len(),
                    plan.input_slots.len(),
                    plan.input_params.join(", ")
                ),
            });
        }
        let device = self.built.comps[&self.built.root.name].device;
        let mut trees = Vec::with_capacity(inputs.len());
        for ((param, space), value) in plan.inputs().zip(inputs) {
            space.check(value.borrow()).map_err(|e| CoreError::SpaceMismatch {
                component: self.built.root.name.clone(),
                method: method.into(),
                param: param.into(),
                expected: space.describe(),
                actual: e.to_string(),
            })?;
            trees.push(upload(value, device)?);
        }
        let outputs = self.execute_tensors(method, trees)?;
        let spaces = &self.plans[method].output_spaces;
        outputs
            .iter()
            .zip(spaces)
            .map(|(t, s)| tree_to_value::<B>(t, Some(s)))
            .collect()
    }

    /// Executes several API methods in one call, in order.
    pub fn execute_many(&mut self, calls: &[(&str, Vec<Value>)]) -> Result<Vec<Vec<Value>>> {
        calls.iter().map(|(m, inputs)| self.execute(m, inputs)).collect()
    }

    /// Executes API method `method` on backend tensors, with no host conversion and no space
    /// checks. The inputs may be any list (an array costs no allocation) of trees, owned or
    /// borrowed (`[&x]` spares a handle clone); a wrong count is an error.
    pub fn execute_tensors(
        &mut self,
        method: &str,
        inputs: impl IntoIterator<Item = impl TreeInput<B::Tensor>>,
    ) -> Result<Outputs<B::Tensor>> {
        let plan = self.plans.get(method).ok_or_else(|| self.unknown(method))?;
        plan.run(inputs, &self.store, &mut self.rng, &mut self.scratch)
    }

    fn unknown(&self, method: &str) -> CoreError {
        CoreError::UnknownApiMethod {
            component: self.built.root.name.clone(),
            method: method.into(),
            known: self.api_methods().join(", "),
        }
    }

    /// The root API methods, sorted.
    pub fn api_methods(&self) -> Vec<String> {
        self.plans.keys().cloned().collect()
    }

    /// The compiled plan of API method `method`.
    pub fn plan(&self, method: &str) -> Result<&Plan<B>> {
        self.plans.get(method).ok_or_else(|| self.unknown(method))
    }

    /// The value of the variable at scope path `path`.
    pub fn get_variable(&self, path: &str) -> Result<HostTensor> {
        self.store.get(path)
    }

    /// Overwrites the variable at `path` (same shape and dtype; otherwise it stays unchanged).
    pub fn set_variable(&self, path: &str, value: &HostTensor) -> Result<()> {
        self.store.set(path, value)
    }

    /// Every variable's value, by scope path.
    pub fn variables(&self) -> Result<BTreeMap<String, HostTensor>> {
        self.store.get_all()
    }

    /// Overwrites several variables, given as `(path, value)` pairs (a `&BTreeMap` is
    /// one); checks them all first, so a bad one changes nothing.
    pub fn set_variables<'a, I>(&self, values: I) -> Result<()>
    where
        I: IntoIterator<Item = (&'a String, &'a HostTensor)> + Clone,
    {
        for (path, v) in values.clone() {
            self.store.check(path, v)?;
        }
        values.into_iter().try_for_each(|(p, v)| self.store.set(p, v))
    }

    /// What each variable is.
    pub fn variable_infos(&self) -> &[VarInfo] {
        self.store.infos()
    }

    /// The variable store, for components and tests that need handles.
    pub fn store(&self) -> &VariableStore<B> {
        &self.store
    }

    /// The annotated meta graph.
    pub fn meta_graph(&self) -> &MetaGraph {
        &self.built.meta
    }

    /// The build's cost and counts.
    pub fn report(&self) -> &BuildReport {
        &self.built.report
    }

    /// The built graph.
    pub fn built(&self) -> &BuiltGraph<B> {
        &self.built
    }

    /// Reseeds the executor's RNG (the one kernels draw from).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// The executor's RNG, to save its position beside other state.
    pub fn rng(&self) -> &ChaCha8Rng {
        &self.rng
    }

    /// Replaces the executor's RNG (a position saved from [`GraphExecutor::rng`]).
    pub fn set_rng(&mut self, rng: ChaCha8Rng) {
        self.rng = rng;
    }
}
