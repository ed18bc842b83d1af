//! `TensorVectorEnv`: a tensor environment's copies, on a backend and device, for
//! `rlgraph.envs.make_vec(..., tensor=True)`. They step as one tensor program; what Python
//! needs comes to the host once per step and moves into numpy without another copy.

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rlgraph_cli::backend_choice::{on_linked_backend, OnBackend};
use rlgraph_core::batching::unstack;
use rlgraph_core::convert::{host_to_value, value_into_host};
use rlgraph_core::{Backend, Device, HostData, HostTensor};
use rlgraph_spaces::{Array, Space, Value};
use rlgraph_tensor_envs::TensorEnv;

use crate::values::{from_value, to_value};
use crate::vector_env::{HostSteps, Stepped};

/// One step of the copies on the host: the observations, the per-copy results, and the ended
/// copies' final observations (all copies' rows, `None` when none ended).
struct HostStep {
    observations: HostTensor,
    steps: HostSteps,
    finals: Option<HostTensor>,
}

/// The copies on some backend, seen from the host (the backend is chosen at run time).
trait Copies: Send {
    /// Starts every copy's episode; with `seed`, the copies are made again from it.
    fn reset(&mut self, seed: Option<u64>) -> Result<HostTensor, String>;
    /// One step of every copy with `actions` (`[N]` or `[N, ...]`).
    fn step(&mut self, actions: &HostTensor) -> Result<HostStep, String>;
}

/// The copies of `id` on backend `B`.
struct OnDevice<B: Backend> {
    env: Box<dyn TensorEnv<B>>,
    id: String,
    device: Device,
}

impl<B: Backend> Copies for OnDevice<B> {
    fn reset(&mut self, seed: Option<u64>) -> Result<HostTensor, String> {
        if let Some(seed) = seed {
            self.env = rlgraph_tensor_envs::make::<B>(&self.id, self.env.num_envs(), seed, self.device)
                .map_err(|e| e.to_string())?;
        }
        self.env.reset().and_then(|t| B::to_host(&t)).map_err(|e| e.to_string())
    }

    fn step(&mut self, actions: &HostTensor) -> Result<HostStep, String> {
        let mut run = || -> rlgraph_core::Result<HostStep> {
            let step = self.env.step(&B::from_host(actions, self.device)?)?;
            let flags = |t: &B::Tensor| -> rlgraph_core::Result<Vec<bool>> {
                Ok(B::to_host(t)?.data.to_f64().into_iter().map(|x| x != 0.0).collect())
            };
            let (terminated, truncated) = (flags(&step.terminated)?, flags(&step.truncated)?);
            let ended: Vec<usize> = (0..terminated.len())
                .filter(|&i| terminated[i] || truncated[i])
                .collect();
            let finals = match ended.is_empty() {
                true => None,
                false => Some(B::to_host(&self.env.final_observation()?)?),
            };
            Ok(HostStep {
                observations: B::to_host(&step.observation)?,
                steps: HostSteps {
                    rewards: B::to_host(&step.reward)?.data.to_f64(),
                    terminated,
                    truncated,
                    ended,
                },
                finals,
            })
        };
        run().map_err(|e| e.to_string())
    }
}

/// Makes the copies on the backend `on_linked_backend` picks.
struct MakeCopies<'a> {
    id: &'a str,
    num_envs: usize,
    seed: u64,
    device: Device,
}

impl OnBackend for MakeCopies<'_> {
    type Output = (Box<dyn Copies>, Space, Space);
    fn run<B: Backend>(&self) -> Result<Self::Output, String> {
        let env = rlgraph_tensor_envs::make::<B>(self.id, self.num_envs, self.seed, self.device)
            .map_err(|e| e.to_string())?;
        let spaces = (env.state_space().clone(), env.action_space().clone());
        let copies = OnDevice {
            env,
            id: self.id.to_string(),
            device: self.device,
        };
        Ok((Box::new(copies), spaces.0, spaces.1))
    }
}

/// Copies of a tensor environment on a backend's device, reset and stepped with the GIL
/// released.
#[pyclass(frozen, module = "rlgraph._rlgraph")]
pub(crate) struct TensorVectorEnv {
    copies: Mutex<Box<dyn Copies>>,
    state_space: Space,
    action_space: Space,
    num_envs: usize,
}

#[pymethods]
impl TensorVectorEnv {
    /// `num_envs` copies of the tensor environment `id` on `backend` and `device`, their
    /// start states drawn from `seed`.
    #[new]
    fn new(py: Python<'_>, id: &str, num_envs: usize, backend: &str, device: &str, seed: u64) -> PyResult<Self> {
        if num_envs == 0 {
            return Err(PyValueError::new_err("num_envs: must be at least 1"));
        }
        let device = Device::parse(device)
            .ok_or_else(|| PyValueError::new_err(format!("device: expected cpu, cuda or cuda:N, got {device:?}")))?;
        let make = MakeCopies {
            id,
            num_envs,
            seed,
            device,
        };
        let (copies, state_space, action_space) = py
            .detach(|| on_linked_backend(backend, &make))
            .map_err(|e| PyValueError::new_err(format!("id {id:?} (tensor, {backend} on {device}): {e}")))?;
        Ok(TensorVectorEnv {
            copies: Mutex::new(copies),
            state_space,
            action_space,
            num_envs,
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

    /// Starts every copy's episode; with `seed`, from copies made again from that seed.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(&self, py: Python<'py>, seed: Option<u64>) -> PyResult<Bound<'py, PyAny>> {
        let observations = py
            .detach(|| lock(&self.copies).reset(seed))
            .map_err(PyRuntimeError::new_err)?;
        from_value(py, self.observations(observations)?)
    }

    /// Steps copy `i` with `actions[i]`; a copy whose episode ends starts the next one in the
    /// same step, its last observation given apart.
    fn step<'py>(&self, py: Python<'py>, actions: &Bound<'py, PyAny>) -> PyResult<Stepped<'py>> {
        let actions = self.actions(actions)?;
        let out = py
            .detach(|| lock(&self.copies).step(&actions))
            .map_err(PyRuntimeError::new_err)?;
        let finals = match out.finals {
            Some(all) => Some(self.observations(rows(all, &out.steps.ended))?),
            None => None,
        };
        let observations = self.observations(out.observations)?;
        out.steps.into_python(py, observations, finals)
    }
}

impl TensorVectorEnv {
    /// Host observations as values of the observation space's dtype.
    fn observations(&self, host: HostTensor) -> PyResult<Value> {
        host_to_value(host, self.state_space.dtype()).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// `actions` as a host tensor of one action per copy (`[N]` stands for `[N, 1]`), checked
    /// by the action space (the copies clamp rather than refuse, so the check is here); a
    /// failure names the first copy whose action does not fit, as for native copies.
    fn actions(&self, actions: &Bound<'_, PyAny>) -> PyResult<HostTensor> {
        let n = self.num_envs;
        let one = self.action_space.shape().unwrap_or(&[]);
        let value = match to_value(actions, &self.action_space, "actions")? {
            Value::Float32(a) if one == [1] && a.shape() == [n] => {
                let (_, data) = a.into_parts();
                Value::Float32(Array::new([n, 1], data).map_err(|e| PyValueError::new_err(format!("actions: {e}")))?)
            }
            v => v,
        };
        let shape = value.shape().unwrap_or(&[]).to_vec();
        if shape.first() != Some(&n) || shape[1..] != *one {
            return Err(PyValueError::new_err(format!(
                "actions: expected one per copy, shape [{n}{}], got {shape:?}",
                one.iter().map(|d| format!(", {d}")).collect::<String>()
            )));
        }
        if let Err(whole) = self.action_space.with_batch_rank(true).check(&value) {
            let rows = unstack(&value).map_err(|e| PyValueError::new_err(format!("actions: {e}")))?;
            let first = rows
                .iter()
                .enumerate()
                .find_map(|(i, a)| self.action_space.check(a).err().map(|e| (i, e)));
            return Err(PyValueError::new_err(match first {
                Some((i, e)) => format!(
                    "actions[{i}]: {e}; the action space is {}",
                    self.action_space.describe()
                ),
                None => format!("actions: {whole}"),
            }));
        }
        value_into_host(value).map_err(|e| PyValueError::new_err(format!("actions: {e}")))
    }
}

/// Rows `which` of `all` (its first dimension), in that order.
fn rows(all: HostTensor, which: &[usize]) -> HostTensor {
    fn pick<T: Copy>(v: &[T], width: usize, which: &[usize]) -> Vec<T> {
        which
            .iter()
            .flat_map(|&i| v[i * width..(i + 1) * width].iter().copied())
            .collect()
    }
    let width: usize = all.shape.iter().skip(1).product();
    let mut shape = all.shape.clone();
    if let Some(first) = shape.first_mut() {
        *first = which.len();
    }
    let data = match &all.data {
        HostData::F32(v) => HostData::F32(pick(v, width, which)),
        HostData::F64(v) => HostData::F64(pick(v, width, which)),
        HostData::I64(v) => HostData::I64(pick(v, width, which)),
        HostData::U8(v) => HostData::U8(pick(v, width, which)),
    };
    HostTensor { shape, data }
}

fn lock(copies: &Mutex<Box<dyn Copies>>) -> std::sync::MutexGuard<'_, Box<dyn Copies>> {
    copies.lock().unwrap_or_else(|p| p.into_inner())
}
