//! `NativeVectorEnv`: the native environments stepped as a batch, for
//! `rlgraph.envs.make_vec`'s Gymnasium `VectorEnv`.

use std::sync::Mutex;

use numpy::{PyArray1, PyReadonlyArray1};
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

/// What one vector step gives Python: observations, rewards, terminated, truncated, the
/// copies whose episode ended and (stacked, in that order) their episodes' last observations.
pub(crate) type Stepped<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<usize>>,
    Option<Bound<'py, PyAny>>,
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
            stack(&observations).map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
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
        let actions = match discrete_actions(actions, &self.action_space) {
            Some(actions) => actions,
            None => {
                let batch = to_value(actions, &self.action_space, "actions")?;
                unstack(&batch).map_err(|e| PyValueError::new_err(format!("actions: {e}")))?
            }
        };
        if actions.len() != self.copies {
            return Err(PyValueError::new_err(format!(
                "actions: expected one per copy ({}), got {}",
                self.copies,
                actions.len()
            )));
        }
        let steps = py.detach(|| lock(&self.envs).step(&actions)).map_err(|e| {
            // Checked only on failure, to name the copy: a check of every action costs more
            // than the step of a classic-control environment.
            match actions.iter().position(|a| !self.action_space.contains(a)) {
                Some(bad) => PyValueError::new_err(format!(
                    "actions[{bad}]: does not fit the action space {}",
                    self.action_space.describe()
                )),
                None => PyRuntimeError::new_err(e.to_string()),
            }
        })?;
        let n = steps.len();
        let mut out = HostSteps {
            rewards: Vec::with_capacity(n),
            terminated: Vec::with_capacity(n),
            truncated: Vec::with_capacity(n),
            ended: vec![],
        };
        let (mut next, mut finals) = (Vec::with_capacity(n), vec![]);
        for (i, s) in steps.into_iter().enumerate() {
            out.rewards.push(s.step.reward);
            out.terminated.push(s.step.terminated);
            out.truncated.push(s.step.truncated);
            match s.reset_observation {
                Some(first) => {
                    out.ended.push(i);
                    finals.push(s.step.observation);
                    next.push(first);
                }
                None => next.push(s.step.observation),
            }
        }
        let stacked = |values: &[Value]| stack(values).map_err(|e| PyRuntimeError::new_err(e.to_string()));
        let finals = match finals.is_empty() {
            true => None,
            false => Some(stacked(&finals)?),
        };
        out.into_python(py, stacked(&next)?, finals)
    }
}

/// A vector step's per-copy results on the host, before they become numpy arrays.
pub(crate) struct HostSteps {
    pub(crate) rewards: Vec<f64>,
    pub(crate) terminated: Vec<bool>,
    pub(crate) truncated: Vec<bool>,
    /// The copies whose episode ended, in order.
    pub(crate) ended: Vec<usize>,
}

impl HostSteps {
    /// The step as Python receives it, given the observations and the ended copies' final
    /// ones; every buffer moves into numpy without a copy.
    pub(crate) fn into_python(
        self,
        py: Python<'_>,
        observations: Value,
        finals: Option<Value>,
    ) -> PyResult<Stepped<'_>> {
        let finals = finals.map(|f| from_value(py, f)).transpose()?;
        Ok((
            from_value(py, observations)?,
            PyArray1::from_vec(py, self.rewards),
            PyArray1::from_vec(py, self.terminated),
            PyArray1::from_vec(py, self.truncated),
            PyArray1::from_vec(py, self.ended),
            finals,
        ))
    }
}

/// The actions of a scalar integer action space (Discrete) from a 1-D int64 or int32 array,
/// read without the general conversion (which costs more than a classic-control step);
/// `None` where the general path applies. Each is checked against the space by the step.
fn discrete_actions(actions: &Bound<'_, PyAny>, space: &Space) -> Option<Vec<Value>> {
    let scalar_int32 = matches!(space, Space::Int(_))
        && space.shape() == Some(&[][..])
        && space.dtype() == Some(rlgraph_spaces::Dtype::Int32);
    if !scalar_int32 {
        return None;
    }
    let wide = |x: i64| i32::try_from(x).unwrap_or(i32::MAX);
    if let Ok(a) = actions.extract::<PyReadonlyArray1<'_, i64>>() {
        return Some(a.as_array().iter().map(|&x| Value::i32(wide(x))).collect());
    }
    let a = actions.extract::<PyReadonlyArray1<'_, i32>>().ok()?;
    Some(a.as_array().iter().map(|&x| Value::i32(x)).collect())
}

fn lock(envs: &Mutex<VectorEnv>) -> std::sync::MutexGuard<'_, VectorEnv> {
    envs.lock().unwrap_or_else(|p| p.into_inner())
}
