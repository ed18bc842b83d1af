//! `NativeComponentTest`: one component built alone from its spec and input spaces, called
//! with numpy values, as RLgraph's `ComponentTest` was used from Python.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rlgraph_cli::backend_choice::{on_linked_backend, OnBackend};
use rlgraph_core::{Backend, ComponentTest, ErasedExecutor};
use rlgraph_spaces::Space;
use serde_json::Value as Json;

use crate::values::{from_value, to_value};

/// A built component of either backend.
trait Harness: Send {
    fn executor(&mut self) -> &mut dyn ErasedExecutor;
}

impl<B: Backend> Harness for ComponentTest<B> {
    fn executor(&mut self) -> &mut dyn ErasedExecutor {
        ComponentTest::executor(self)
    }
}

/// Builds the component of a spec with its input spaces on the backend `on_linked_backend` picks.
struct Build<'a> {
    spec: &'a Json,
    spaces: &'a [(String, Space)],
    seed: u64,
}

impl OnBackend for Build<'_> {
    type Output = Box<dyn Harness>;
    fn run<B: Backend>(&self) -> Result<Self::Output, String> {
        let component = rlgraph_components::from_spec::<B>(self.spec, "spec").map_err(|e| e.to_string())?;
        let spaces = self.spaces.iter().map(|(k, s)| (k.as_str(), s.clone()));
        Ok(Box::new(
            ComponentTest::<B>::new(component, spaces, self.seed).map_err(|e| e.to_string())?,
        ))
    }
}

/// A component under test (`rlgraph.ComponentTest` wraps it).
#[pyclass(frozen, module = "rlgraph._rlgraph")]
pub(crate) struct NativeComponentTest {
    harness: Mutex<Box<dyn Harness>>,
}

#[pymethods]
impl NativeComponentTest {
    /// The component of `spec` (JSON text) with `input_spaces` (JSON text: parameter name to
    /// space spec), on `backend`, its variables initialised from `seed`.
    #[new]
    fn new(py: Python<'_>, spec: &str, input_spaces: &str, backend: &str, seed: u64) -> PyResult<Self> {
        let spec: Json = serde_json::from_str(spec).map_err(|e| PyValueError::new_err(format!("spec: {e}")))?;
        let spaces: serde_json::Map<String, Json> =
            serde_json::from_str(input_spaces).map_err(|e| PyValueError::new_err(format!("input_spaces: {e}")))?;
        let spaces = spaces
            .iter()
            .map(|(k, s)| {
                Space::from_json(s)
                    .map(|s| (k.clone(), s))
                    .map_err(|e| PyValueError::new_err(format!("input_spaces[{k:?}]: {e}")))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let build = Build {
            spec: &spec,
            spaces: &spaces,
            seed,
        };
        let harness = py
            .detach(|| on_linked_backend(backend, &build))
            .map_err(PyValueError::new_err)?;
        Ok(NativeComponentTest {
            harness: Mutex::new(harness),
        })
    }

    /// Calls API method `method` with `inputs` (one per parameter); returns its outputs.
    fn call<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let params = py
            .detach(|| lock(&self.harness).executor().api_inputs(method))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        if params.len() != inputs.len() {
            return Err(PyValueError::new_err(format!(
                "{method}: takes {} inputs ({}), got {}",
                params.len(),
                params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
                inputs.len()
            )));
        }
        let values = inputs
            .iter()
            .zip(&params)
            .map(|(x, (name, space))| to_value(x, space, &format!("{method}({name})")))
            .collect::<PyResult<Vec<_>>>()?;
        let outputs = py
            .detach(|| lock(&self.harness).executor().execute(method, &values))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        outputs.into_iter().map(|v| from_value(py, v)).collect()
    }

    /// Every variable, by scope path, as numpy arrays.
    fn variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let variables = py
            .detach(|| lock(&self.harness).executor().variables())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let dict = PyDict::new(py);
        for (path, tensor) in variables {
            let value =
                rlgraph_core::convert::host_to_value(tensor, None).map_err(|e| PyValueError::new_err(e.to_string()))?;
            dict.set_item(path, from_value(py, value)?)?;
        }
        Ok(dict)
    }
}

fn lock(harness: &Mutex<Box<dyn Harness>>) -> std::sync::MutexGuard<'_, Box<dyn Harness>> {
    harness.lock().unwrap_or_else(|p| p.into_inner())
}
