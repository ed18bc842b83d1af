//! `NativeVectorEnv`: the native environments stepped as a batch, for
//! `rlgraph.envs.make_vec`'s Gymnasium `VectorEnv`.

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rlgraph_core::batching::{stack, unstack};
use rlgraph_envs::{Stepping, VectorEnv};
use rlgraph_spaces::{Space, Value};

use crate::values::{from_value, to_value};

/// Copies of a native environment, reset and stepped together with the GIL released.
#[pyclass(frozen, module = "rlgraph._rlgraph")]
pub(crate) struct NativeVectorEnv {
    envs: Mutex<VectorEnv>,
    state_space: Space,
    action_space: Space,
    copies: usize,
}

/// What one vector step gives Python: observations, rewards, terminated, truncated, and for
/// each ended copy the last observation of its episode.
type Stepped<'py> = (
    Bound<'py, PyAny>,
    Vec<f64>,
    Vec<bool>,
    Vec<bool>,
    Vec<Option<Bound<'py, PyAny>>>,
);

#[pymethods]
impl NativeVectorEnv {
    /// `num_envs` copies of the native environment `id`; `threads` steps them on a pool.
    #[new]
    fn new(py: Python<'_>, id: &str, num_envs: usize, threads: bool) -> PyResult<Self> {
        if num_envs == 0 {
            return Err(PyValueError::new_err("num_envs: must be at least 1"));
        }
        if id.starts_with(rlgraph_envs::gym::GYM_PREFIX) {
            return Err(PyValueError::new_err(format!(
                "id {id:?}: make_vec makes native environments; use gymnasium.make_vec for Gymnasium's own"
            )));
        }
        let stepping = if threads {
            Stepping::Threaded
        } else {
            Stepping::Sequential
        };
        let envs = py
            .detach(|| {
                let copies = (0..num_envs)
                    .map(|i| rlgraph_envs::make(id, i as u64))
                    .collect::<Result<Vec<_>, _>>()?;
                VectorEnv::new(copies, stepping)
            })
            .map_err(|e| PyValueError::new_err(format!("id: {e}")))?;
        Ok(NativeVectorEnv {
            state_space: envs.state_space().clone(),
            action_space: envs.action_space().clone(),
            copies: num_envs,
            envs: Mutex::new(envs),
        })
    }

    /// The observation space of one copy, as an rlgraph space spec (JSON text).
    #[getter]
    fn observation_space(&self) -> String {
        self.state_space.to_json().to_string()
    }

    /// The action space of one copy, as an rlgraph space spec (JSON text).
    #[getter]
    fn action_space(&self) -> String {
        self.action_space.to_json().to_string()
    }

    /// Resets every copy, copy `i` with `seed + i` (without a seed, each continues its own
    /// generator); returns the stacked observations.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(&self, py: Python<'py>, seed: Option<u64>) -> PyResult<Bound<'py, PyAny>> {
        let observations = py
            .detach(|| lock(&self.envs).reset_all(seed).map_err(|e| e.to_string()))
            .map_err(PyRuntimeError::new_err)?;
        from_value(
            py,
            &stack(&observations).map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
        )
    }

    /// Each copy's internal state (as `Env::state` gives it: CartPole's x, x_dot, theta,
    /// theta_dot in float64), where the environment has one.
    fn states(&self, py: Python<'_>) -> PyResult<Vec<Vec<f64>>> {
        py.detach(|| lock(&self.envs).snapshots().map_err(|e| e.to_string()))
            .map(|snapshots| snapshots.into_iter().map(|s| s.state).collect())
            .map_err(PyRuntimeError::new_err)
    }

    /// Steps copy `i` with `actions[i]`; a copy whose episode ends starts the next one at
    /// once (Gymnasium's same-step autoreset), its last observation given apart.
    fn step<'py>(&self, py: Python<'py>, actions: &Bound<'py, PyAny>) -> PyResult<Stepped<'py>> {
        let batch = to_value(actions, &self.action_space, "actions")?;
        let actions = unstack(&batch).map_err(|e| PyValueError::new_err(format!("actions: {e}")))?;
        if actions.len() != self.copies {
            return Err(PyValueError::new_err(format!(
                "actions: expected one per copy ({}), got {}",
                self.copies,
                actions.len()
            )));
        }
        if let Some(bad) = actions.iter().position(|a| !self.action_space.contains(a)) {
            return Err(PyValueError::new_err(format!(
                "actions[{bad}]: does not fit the action space {}",
                self.action_space.describe()
            )));
        }
        let steps = py
            .detach(|| lock(&self.envs).step(&actions).map_err(|e| e.to_string()))
            .map_err(PyRuntimeError::new_err)?;
        let next: Vec<Value> = steps.iter().map(|s| s.next_observation().clone()).collect();
        let observations = from_value(py, &stack(&next).map_err(|e| PyRuntimeError::new_err(e.to_string()))?)?;
        let finals = steps
            .iter()
            .map(|s| {
                s.reset_observation
                    .as_ref()
                    .map(|_| from_value(py, &s.step.observation))
                    .transpose()
            })
            .collect::<PyResult<_>>()?;
        Ok((
            observations,
            steps.iter().map(|s| s.step.reward).collect(),
            steps.iter().map(|s| s.step.terminated).collect(),
            steps.iter().map(|s| s.step.truncated).collect(),
            finals,
        ))
    }
}

fn lock(envs: &Mutex<VectorEnv>) -> std::sync::MutexGuard<'_, VectorEnv> {
    envs.lock().unwrap_or_else(|p| p.into_inner())
}
