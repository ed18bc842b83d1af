//! `NativeAgent`: an agent and its single-threaded worker, as `rlgraph.Agent` drives them.
//!
//! The Python class (`python/rlgraph/agent.py`) owns the loop a user sees (progress, the
//! callback, Ctrl-C); this one runs the library's worker in legs between those checks, with
//! the GIL released, and keeps the checkpoint format of `rlgraph train --out`.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use agents::Agent;
use executors::{Evaluation, RunLength, SingleThreadedWorker, Worker, WorkerStats};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use rlgraph_cli::agent_commands::play_episode;
use rlgraph_cli::backend_choice::{on_linked_backend, OnBackend};
use rlgraph_cli::output_files::write_file;
use rlgraph_cli::CHECKPOINT_FILE;
use rlgraph_core::Backend;
use rlgraph_envs::{Env, Stepping, VectorEnv};
use rlgraph_spaces::Space;
use serde_json::Value as Json;

use crate::python_env::{ErrorSlot, PythonEnv};
use crate::values::{batch_size, from_value, to_value};

/// What trains and changes: the agent in its worker, and this process's clock of it.
struct Inner {
    worker: SingleThreadedWorker<Box<dyn Agent + Send>>,
    /// Seconds spent in `run` by this process (the summary's clock).
    seconds: f64,
    /// Of `seconds`, those spent in greedy evaluation rounds.
    evaluation_seconds: f64,
    /// The step at which the target return was reached, in the leg that reached it.
    solved_at: Option<u64>,
}

/// An rlgraph agent with its worker (`rlgraph.Agent` wraps it). What the agent was made from
/// stays outside the lock: only the worker changes.
#[pyclass(frozen, module = "rlgraph._rlgraph")]
pub(crate) struct NativeAgent {
    inner: Mutex<Inner>,
    errors: ErrorSlot,
    /// The seed in use: the caller's, else the config's `execution_spec.seed`, else 0.
    #[pyo3(get)]
    seed: u64,
    config: Json,
    backend: String,
    env_id: String,
    state_space: Space,
    /// `state_space` as the agent reads observations (float bounds dropped), for `predict`.
    acting_space: Space,
    action_space: Space,
    /// Environment copies stepped together (a checkpoint resumes with as many).
    copies: usize,
}

/// Builds the agent of `config` for two spaces on the backend `on_linked_backend` picks.
struct BuildAgent<'a> {
    config: &'a Json,
    state_space: &'a Space,
    action_space: &'a Space,
    seed: u64,
}

impl OnBackend for BuildAgent<'_> {
    type Output = Box<dyn Agent + Send>;
    fn run<B: Backend>(&self) -> Result<Self::Output, String> {
        agents::build_agent::<B>(self.config, self.state_space, self.action_space, self.seed).map_err(|e| e.to_string())
    }
}

/// The environments `env` names: a native or `gym:` id (a `str`), or a list of Gymnasium
/// `Env` objects (one per copy); `copies` for an id.
pub(crate) fn make_envs(env: &Bound<'_, PyAny>, copies: usize, seed: u64, errors: &ErrorSlot) -> PyResult<VectorEnv> {
    if let Ok(id) = env.cast::<PyString>() {
        let id = id.to_string();
        let py = env.py();
        return py
            .detach(|| VectorEnv::make(&id, copies, seed, None))
            .map_err(|e| PyValueError::new_err(format!("env: {e}")));
    }
    let list = env.cast::<PyList>()?;
    let envs = list
        .iter()
        .enumerate()
        .map(|(i, e)| Ok(Box::new(PythonEnv::new(&e, seed + i as u64, errors.clone())?) as Box<dyn Env>))
        .collect::<PyResult<Vec<_>>>()?;
    VectorEnv::new(envs, Stepping::Sequential).map_err(|e| PyValueError::new_err(format!("env: {e}")))
}

/// One environment of what `env` names (as [`make_envs`] reads it; a list's first).
fn make_env(env: &Bound<'_, PyAny>, seed: u64, errors: &ErrorSlot) -> PyResult<Box<dyn Env>> {
    if let Ok(id) = env.cast::<PyString>() {
        return rlgraph_envs::make(&id.to_string(), seed).map_err(|e| PyValueError::new_err(format!("env: {e}")));
    }
    let first = env.cast::<PyList>()?.get_item(0)?;
    Ok(Box::new(PythonEnv::new(&first, seed, errors.clone())?))
}

fn runtime(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// A JSON value as Python (through `json.loads`, so dicts, lists, floats and None).
pub(crate) fn json_to_py<'py>(py: Python<'py>, json: &Json) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (json.to_string(),))
}

impl NativeAgent {
    /// Runs `f` on the agent with the GIL released (a Python environment takes it back for
    /// its own calls), so that another thread's call waits here without holding the GIL.
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Inner) -> T + Send) -> T {
        py.detach(|| f(&mut lock(&self.inner)))
    }

    /// `err`, or the exception a Python environment raised on the way to it.
    fn failed(&self, err: impl std::fmt::Display) -> PyErr {
        self.errors.take().unwrap_or_else(|| runtime(err))
    }

    /// The whole run's statistics as `learn` returns them and `summary.json` holds them:
    /// every leg of this process, and the legs before a resume.
    fn summary_json(&self, inner: &Inner) -> Json {
        let mut leg = WorkerStats::from_returns(0, vec![], 0, inner.seconds, inner.solved_at);
        leg.evaluation_seconds = inner.evaluation_seconds;
        let whole = inner.worker.run_stats(&leg);
        let mut json = whole.to_json();
        json["wall_clock_seconds"] = inner.seconds.into();
        json["env_frames_per_second"] = (whole.timesteps_executed as f64 / inner.seconds.max(1e-9)).into();
        json["episode_rewards"] = whole.episode_rewards.into();
        json["episode_timesteps"] = serde_json::json!(inner.worker.tally().episodes.ends());
        json["env"] = self.env_id.clone().into();
        json["num_envs"] = self.copies.into();
        json["backend"] = self.backend.clone().into();
        json
    }
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // A panic while training poisons the lock; the agent is still there to use.
    inner.lock().unwrap_or_else(|p| p.into_inner())
}

#[pymethods]
impl NativeAgent {
    /// An agent of `config` (JSON text; `source`, a file's path or empty, names it in
    /// errors) for `env` (an id, or a list of Gymnasium environments, one per copy), on
    /// `backend`, seeded by `seed` (`None`: the config's `execution_spec.seed`, else 0).
    #[new]
    #[pyo3(signature = (config, source, env, backend, seed, num_envs))]
    fn new(
        py: Python<'_>,
        config: &str,
        source: &str,
        env: &Bound<'_, PyAny>,
        backend: &str,
        seed: Option<u64>,
        num_envs: usize,
    ) -> PyResult<Self> {
        // A dict's errors are named by their key path alone; a file's start with its path.
        let named = |e: String| match source {
            "" => PyValueError::new_err(e),
            _ => PyValueError::new_err(format!("{source}: {e}")),
        };
        let config: Json = serde_json::from_str(config).map_err(|e| named(format!("not JSON: {e}")))?;
        let seed = match seed {
            Some(seed) => seed,
            None => rlgraph_cli::train_args::config_seed(&config)
                .map_err(named)?
                .unwrap_or(0),
        };
        let errors = ErrorSlot::default();
        let envs = make_envs(env, num_envs, seed, &errors)?;
        if let Some(err) = errors.take() {
            return Err(err);
        }
        let (state_space, action_space) = (envs.state_space().clone(), envs.action_space().clone());
        let env_id = envs.id().to_string();
        let copies = envs.len();
        let build = BuildAgent {
            config: &config,
            state_space: &state_space,
            action_space: &action_space,
            seed,
        };
        let agent = py.detach(|| on_linked_backend(backend, &build)).map_err(named)?;
        Ok(NativeAgent {
            inner: Mutex::new(Inner {
                worker: SingleThreadedWorker::new(agent, envs, seed),
                seconds: 0.0,
                evaluation_seconds: 0.0,
                solved_at: None,
            }),
            errors,
            seed,
            config,
            backend: backend.into(),
            env_id,
            acting_space: agents::without_float_bounds(&state_space),
            state_space,
            action_space,
            copies,
        })
    }

    /// Trains until the run's steps reach `until`, in a run of `total` steps (schedules run
    /// over `total`); returns this leg's statistics.
    fn run<'py>(&self, py: Python<'py>, until: u64, total: u64) -> PyResult<Bound<'py, PyAny>> {
        let length = RunLength {
            timesteps: total,
            episodes: None,
            pause_at: Some(until),
        };
        let leg = self.with(py, |inner| {
            let leg = inner.worker.execute_run(length, |_: &executors::Progress<'_>| {});
            if let Ok(leg) = &leg {
                inner.seconds += leg.runtime_seconds;
                inner.evaluation_seconds += leg.evaluation_seconds;
                inner.solved_at = leg.solved_at_timestep.or(inner.solved_at);
            }
            leg.map(|leg| {
                let mut json = leg.to_json();
                json["episode_rewards"] = leg.episode_rewards.clone().into();
                json
            })
        });
        json_to_py(py, &leg.map_err(|e| self.failed(e))?)
    }

    /// The whole run's statistics: every leg of this process, and the legs before a resume.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = self.with(py, |inner| self.summary_json(inner));
        json_to_py(py, &json)
    }

    /// The run's steps so far (over resumed legs too).
    #[getter]
    fn timesteps(&self, py: Python<'_>) -> u64 {
        self.with(py, |inner| inner.worker.tally().timesteps)
    }

    /// The observation space, as an rlgraph space spec (JSON text).
    #[getter]
    fn observation_space(&self) -> String {
        self.state_space.to_json().to_string()
    }

    /// The action space, as an rlgraph space spec (JSON text).
    #[getter]
    fn action_space(&self) -> String {
        self.action_space.to_json().to_string()
    }

    /// Greedy evaluation rounds of `episodes` episodes on `env` every `every` steps (None:
    /// none), and the target return that ends the run (None: none).
    #[pyo3(signature = (every, env, episodes, target_return))]
    fn set_stopping(
        &self,
        py: Python<'_>,
        every: Option<u64>,
        env: &Bound<'_, PyAny>,
        episodes: usize,
        target_return: Option<f64>,
    ) -> PyResult<()> {
        let evaluation = match every {
            Some(every) if every > 0 => Some(Evaluation::new(
                every,
                make_envs(env, episodes, self.seed, &self.errors)?,
            )),
            Some(_) => return Err(PyValueError::new_err("eval_every: must be at least 1")),
            None => None,
        };
        self.with(py, |inner| {
            inner.worker.set_evaluation(evaluation);
            inner.worker.set_target_return(target_return);
        });
        Ok(())
    }

    /// Actions for `observation` (one, or a batch with a leading dimension): greedy when
    /// `deterministic`, else sampled as in training.
    #[pyo3(signature = (observation, deterministic, episode_start=None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        observation: &Bound<'py, PyAny>,
        deterministic: bool,
        episode_start: Option<Vec<bool>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let space = &self.state_space;
        let value = to_value(observation, space, "observation")?;
        let batch = batch_size(&value, space, "observation")?;
        let states = match batch {
            None => vec![value],
            Some(_) => rlgraph_core::batching::unstack(&value).map_err(|e| PyValueError::new_err(e.to_string()))?,
        };
        // Float bounds describe typical observations rather than promise them, as the agent
        // itself reads them; dtypes, shapes and integer ranges are checked.
        if let Some(bad) = states.iter().position(|s| !self.acting_space.contains(s)) {
            let row = batch.map(|_| format!("[{bad}]")).unwrap_or_default();
            return Err(PyValueError::new_err(format!(
                "observation{row}: does not fit the observation space {}",
                space.describe()
            )));
        }
        if states.is_empty() {
            return Err(PyValueError::new_err("observation: an empty batch"));
        }
        // A recurrent policy carries one memory per row between calls; these rows start anew.
        let starting: Vec<usize> = match episode_start {
            Some(flags) if flags.len() != states.len() => {
                return Err(PyValueError::new_err(format!(
                    "episode_start: expected one flag per observation ({}), got {}",
                    states.len(),
                    flags.len()
                )))
            }
            Some(flags) => flags.iter().enumerate().filter(|(_, s)| **s).map(|(i, _)| i).collect(),
            None => vec![],
        };
        let actions = self
            .with(py, |inner| {
                let agent = inner.worker.agent_mut();
                agent
                    .begin_episodes(!deterministic, &starting)
                    .and_then(|()| agent.get_actions(&states, !deterministic, 1.0))
                    .map_err(|e| e.to_string())
            })
            .map_err(runtime)?;
        match batch {
            None => from_value(
                py,
                actions
                    .into_iter()
                    .next()
                    .ok_or_else(|| runtime("the agent gave no action"))?,
            ),
            Some(_) => from_value(py, rlgraph_core::batching::stack(&actions).map_err(runtime)?),
        }
    }

    /// Saves the agent into the directory `path` as `rlgraph train --out` does: `config.json`,
    /// `checkpoint.safetensors` (the agent with the run beside it) and `summary.json`.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.with(py, |inner| -> Result<(), String> {
            std::fs::create_dir_all(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            let config = serde_json::to_string_pretty(&self.config).map_err(|e| e.to_string())?;
            write_file(&path, "config.json", config.as_bytes())?;
            inner
                .worker
                .save_checkpoint(&path.join(CHECKPOINT_FILE))
                .map_err(|e| e.to_string())?;
            write_file(&path, "summary.json", self.summary_json(inner).to_string().as_bytes())
        })
        .map_err(|e| PyValueError::new_err(format!("save: {e}")))
    }

    /// Restores the checkpoint in the directory `path` (written by `save` or by `rlgraph
    /// train --out`); nothing changes on error.
    fn restore(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let file = path.join(CHECKPOINT_FILE);
        self.with(py, |inner| inner.worker.resume(&file))
            .map_err(|e| PyValueError::new_err(format!("load: {}: {e}", file.display())))
    }

    /// Every variable of the agent, by scope path, as numpy arrays.
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let weights = self
            .with(py, |inner| {
                inner.worker.agent().get_weights().map_err(|e| e.to_string())
            })
            .map_err(runtime)?;
        let dict = pyo3::types::PyDict::new(py);
        for (path, tensor) in weights {
            let value = rlgraph_core::convert::host_to_value(tensor, None).map_err(runtime)?;
            dict.set_item(path, from_value(py, value)?)?;
        }
        Ok(dict)
    }

    /// Takes what the program trained into the directory `path` (a GA3C or tensor run's
    /// `--out`): its agent checkpoint, or GA3C's model.
    fn restore_trained(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.with(py, |inner| {
            rlgraph_cli::agent_commands::restore_trained(inner.worker.agent_mut().as_mut(), &path)
        })
        .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))
    }

    /// The returns of `episodes` greedy episodes on `env` (an id or a list of one Gymnasium
    /// environment), episode `i` from `reset(seed + i)`, each at most `max_steps` steps.
    #[pyo3(signature = (env, episodes, seed, max_steps))]
    fn evaluate(
        &self,
        py: Python<'_>,
        env: &Bound<'_, PyAny>,
        episodes: u64,
        seed: u64,
        max_steps: u64,
    ) -> PyResult<Vec<f64>> {
        let mut env = make_env(env, seed, &self.errors)?;
        let returns = self.with(py, |inner| -> Result<Vec<f64>, String> {
            let agent = inner.worker.agent_mut();
            (0..episodes)
                .map(|i| play_episode(agent.as_mut(), env.as_mut(), seed + i, max_steps, None))
                .collect()
        });
        returns.map_err(|e| self.failed(e))
    }

    /// The agent's acting graph as an ONNX model, written to `path`.
    fn export_onnx(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.with(py, |inner| -> Result<(), String> {
            let weights = inner.worker.agent().get_weights().map_err(|e| e.to_string())?;
            let model = rlgraph_onnx::export_onnx(&self.config, &self.state_space, &self.action_space, &weights)
                .map_err(|e| e.to_string())?;
            rlgraph_core::write_atomically(&path, &model).map_err(|e| format!("cannot write {}: {e}", path.display()))
        })
        .map_err(|e| PyValueError::new_err(format!("export_onnx: {e}")))
    }
}
