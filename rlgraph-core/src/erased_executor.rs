//! `ErasedExecutor`: a graph executor with its backend type erased, so callers can hold
//! agents of either backend behind one trait object (the `rlgraph` command, workers).

use std::collections::BTreeMap;
use std::path::Path;

use crate::backend::{Backend, HostTensor};
use crate::error::Result;
use crate::executor::GraphExecutor;
use crate::meta_graph::MetaGraph;
use crate::spaces::{Space, Value};

/// What a caller can do with a built graph without naming its backend.
pub trait ErasedExecutor {
    /// Runs API method `method` on host values (see [`GraphExecutor::execute`]).
    fn execute(&mut self, method: &str, inputs: &[Value]) -> Result<Vec<Value>>;
    /// The parameters of API method `method` that take inputs, with their spaces.
    fn api_inputs(&self, method: &str) -> Result<Vec<(String, Space)>>;
    /// The root API methods.
    fn api_methods(&self) -> Vec<String>;
    /// The meta graph.
    fn meta_graph(&self) -> &MetaGraph;
    /// The compiled steps of root API method `method` in Graphviz DOT (see
    /// [`crate::Plan::to_dot`]).
    fn plan_dot(&self, method: &str) -> Result<String>;
    /// Every variable by scope path.
    fn variables(&self) -> Result<BTreeMap<String, HostTensor>>;
    /// Overwrites variables by scope path; all are checked before any is written.
    fn set_variables(&self, values: &BTreeMap<String, HostTensor>) -> Result<()>;
    /// Writes every variable and the RNG to a safetensors file.
    fn save(&self, path: &Path) -> Result<()>;
    /// Reads a file written by `save`; on error nothing changes.
    fn restore(&mut self, path: &Path) -> Result<()>;
}

impl<B: Backend> ErasedExecutor for GraphExecutor<B> {
    fn execute(&mut self, method: &str, inputs: &[Value]) -> Result<Vec<Value>> {
        GraphExecutor::execute(self, method, inputs)
    }

    fn api_inputs(&self, method: &str) -> Result<Vec<(String, Space)>> {
        Ok(self
            .plan(method)?
            .inputs()
            .map(|(p, s)| (p.to_string(), s.clone()))
            .collect())
    }

    fn api_methods(&self) -> Vec<String> {
        GraphExecutor::api_methods(self)
    }

    fn meta_graph(&self) -> &MetaGraph {
        GraphExecutor::meta_graph(self)
    }

    fn plan_dot(&self, method: &str) -> Result<String> {
        Ok(self.plan(method)?.to_dot())
    }

    fn variables(&self) -> Result<BTreeMap<String, HostTensor>> {
        GraphExecutor::variables(self)
    }

    fn set_variables(&self, values: &BTreeMap<String, HostTensor>) -> Result<()> {
        GraphExecutor::set_variables(self, values)
    }

    fn save(&self, path: &Path) -> Result<()> {
        GraphExecutor::save(self, path)
    }

    fn restore(&mut self, path: &Path) -> Result<()> {
        GraphExecutor::restore(self, path)
    }
}
