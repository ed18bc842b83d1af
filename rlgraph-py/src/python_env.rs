//! `PythonEnv`: a Gymnasium environment object of the caller's process as an rlgraph `Env`.
//!
//! Spaces and observations go through the Gymnasium bridge's own Python code (`bridge.py`,
//! imported as a module here), so an environment reads the same in this process as in a
//! bridge process. The GIL is taken only for the environment's own calls.

use std::ffi::CString;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyModule, PyTuple};
use rlgraph_envs::{Env, EnvError, Result, Step};
use rlgraph_spaces::{Space, Value};

/// The first Python exception an environment raised, kept so that the caller's call raises
/// that exception itself (with its traceback) rather than a message about it.
#[derive(Clone, Default)]
pub(crate) struct ErrorSlot(Arc<Mutex<Option<PyErr>>>);

impl ErrorSlot {
    fn keep(&self, err: PyErr) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(err);
        }
    }

    /// The kept exception, if any (the slot is emptied).
    pub(crate) fn take(&self) -> Option<PyErr> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// `bridge.py` as a module of this process, imported once.
pub(crate) fn bridge(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static BRIDGE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    BRIDGE
        .get_or_try_init(py, || {
            let code = CString::new(rlgraph_envs::gym::BRIDGE)
                .map_err(|e| PyValueError::new_err(format!("bridge.py: {e}")))?;
            let module = PyModule::from_code(py, &code, c"rlgraph/bridge.py", c"rlgraph._bridge")?;
            Ok(module.unbind())
        })
        .map(|m| m.bind(py))
}

/// The rlgraph space of a Gymnasium space (and the bridge's leaf list that encodes its
/// values); `at` names it in errors.
pub(crate) fn convert_space<'py>(
    space: &Bound<'py, PyAny>,
    at: &str,
    float32: bool,
) -> PyResult<(Space, Bound<'py, PyList>)> {
    let py = space.py();
    let leaves = PyList::empty(py);
    let spec = bridge(py)?
        .call_method1("convert", (space, "", &leaves, float32))
        .map_err(|e| PyValueError::new_err(format!("{at}: {}", e.value(py))))?;
    let text: String = py.import("json")?.call_method1("dumps", (spec,))?.extract()?;
    let parsed = Space::from_json_str(&text).map_err(|e| PyValueError::new_err(format!("{at}: {e}")))?;
    Ok((parsed, leaves))
}

/// A Gymnasium `Env` object stepped in this process.
pub(crate) struct PythonEnv {
    id: String,
    env: Py<PyAny>,
    observation_space: Py<PyAny>,
    observation_leaves: Py<PyList>,
    action_gym_space: Py<PyAny>,
    state_space: Space,
    action_space: Space,
    errors: ErrorSlot,
    /// The seed of the first reset when that reset brings none.
    pending_seed: Option<u64>,
}

impl PythonEnv {
    /// Wraps `env` (a `gymnasium.Env`); exceptions it raises are kept in `errors`.
    pub(crate) fn new(env: &Bound<'_, PyAny>, seed: u64, errors: ErrorSlot) -> PyResult<Self> {
        let py = env.py();
        let gym = py.import("gymnasium")?;
        if !env.is_instance(&gym.getattr("Env")?)? {
            return Err(PyTypeError::new_err(format!(
                "env: expected a gymnasium.Env, got {}",
                crate::values::type_name(env)
            )));
        }
        let observation_space = env.getattr("observation_space")?;
        let action_gym_space = env.getattr("action_space")?;
        let name = crate::values::type_name(env);
        let (state_space, leaves) = convert_space(&observation_space, &format!("env {name}: observation_space"), true)?;
        let (action_space, _) = convert_space(&action_gym_space, &format!("env {name}: action_space"), false)?;
        Ok(PythonEnv {
            id: format!("python:{name}"),
            env: env.clone().unbind(),
            observation_space: observation_space.unbind(),
            observation_leaves: leaves.unbind(),
            action_gym_space: action_gym_space.unbind(),
            state_space,
            action_space,
            errors,
            pending_seed: Some(seed),
        })
    }

    /// Keeps `err` for the caller and says the environment failed.
    fn raised(&self, what: &str, err: PyErr) -> EnvError {
        let reason = Python::attach(|py| err.value(py).to_string());
        self.errors.keep(err);
        EnvError::Bridge {
            env: self.id.clone(),
            what: what.into(),
            reason: format!("the environment raised: {reason}"),
        }
    }

    /// The rlgraph value of an observation the environment returned from `what`.
    fn observation(&self, py: Python<'_>, obs: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
        let space = self.observation_space.bind(py);
        let bytes = bridge(py)?
            .call_method1("encode", (space, self.observation_leaves.bind(py), obs))
            .map_err(|e| {
                PyValueError::new_err(format!(
                    "{}.{what}() returned an observation that does not fit its observation_space {}: {}",
                    self.id,
                    space.str().map(|s| s.to_string()).unwrap_or_default(),
                    e.value(py)
                ))
            })?;
        let bytes = bytes.cast::<PyBytes>()?;
        rlgraph_envs::gym::decode(&self.state_space, bytes.as_bytes()).map_err(|reason| {
            PyValueError::new_err(format!(
                "{}.{what}() returned an observation that does not fit its observation_space: {reason}",
                self.id
            ))
        })
    }
}

impl Env for PythonEnv {
    fn id(&self) -> &str {
        &self.id
    }

    fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn action_space(&self) -> &Space {
        &self.action_space
    }

    fn reset(&mut self, seed: Option<u64>) -> Result<Value> {
        let seed = seed.or(self.pending_seed.take());
        Python::attach(|py| -> PyResult<Value> {
            let kwargs = PyDict::new(py);
            kwargs.set_item("seed", seed)?;
            let out = self.env.bind(py).call_method("reset", (), Some(&kwargs))?;
            let out = out
                .cast::<PyTuple>()
                .map_err(|_| PyValueError::new_err(format!("{}.reset() must return (observation, info)", self.id)))?;
            self.observation(py, &out.get_item(0)?, "reset")
        })
        .map_err(|e| self.raised("reset", e))
    }

    fn step(&mut self, action: &Value) -> Result<Step> {
        if !self.action_space.contains(action) {
            return Err(rlgraph_envs::bad_action(&self.id, &self.action_space, action));
        }
        Python::attach(|py| -> PyResult<Step> {
            let a = crate::values::from_value(py, action.clone())?;
            let a = bridge(py)?.call_method1("action", (self.action_gym_space.bind(py), a))?;
            let out = self.env.bind(py).call_method1("step", (a,))?;
            let out = out.cast::<PyTuple>().ok().filter(|t| t.len() == 5).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{}.step() must return (observation, reward, terminated, truncated, info), as gymnasium's API does",
                    self.id
                ))
            })?;
            Ok(Step {
                observation: self.observation(py, &out.get_item(0)?, "step")?,
                reward: out.get_item(1)?.extract::<f64>()?,
                terminated: out.get_item(2)?.is_truthy()?,
                truncated: out.get_item(3)?.is_truthy()?,
            })
        })
        .map_err(|e| self.raised("step", e))
    }
}
