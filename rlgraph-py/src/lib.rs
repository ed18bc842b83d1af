//! `rlgraph._rlgraph`, the native half of the Python package `rlgraph`: agents trained by the
//! library's worker, components under test, and vectors of native and tensor environments. The Python
//! half (`python/rlgraph/`) turns Python arguments into these calls and nothing more.

mod agent;
mod component_test;
mod python_env;
mod tensor_vector_env;
mod values;
mod vector_env;

use pyo3::exceptions::PyValueError;

/// mimalloc for every allocation the extension makes (see Cargo.toml for why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use pyo3::prelude::*;

/// Runs one subcommand of the `rlgraph` program (`args`: its name first) with the GIL
/// released; returns what it prints, or raises `ValueError` with its error.
#[pyfunction]
fn program(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    let args = args.into_iter().map(Into::into).collect();
    py.detach(|| rlgraph_cli::run(args)).map_err(PyValueError::new_err)
}

/// The `rlgraph` command: runs the program on `args` (its name first), printing as the
/// binary does; returns the exit code.
#[pyfunction]
fn program_main(py: Python<'_>, args: Vec<String>) -> u8 {
    let args = args.into_iter().map(Into::into).collect();
    py.detach(|| rlgraph_cli::main_with(args))
}

/// The native module.
#[pymodule]
fn _rlgraph(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The program's commands run on tch in this process, as the agents do.
    rlgraph_cli::tch_commands::enable_tch();
    m.add_class::<agent::NativeAgent>()?;
    m.add_class::<component_test::NativeComponentTest>()?;
    m.add_class::<vector_env::NativeVectorEnv>()?;
    m.add_class::<tensor_vector_env::TensorVectorEnv>()?;
    m.add_function(wrap_pyfunction!(program, m)?)?;
    m.add_function(wrap_pyfunction!(program_main, m)?)?;
    m.add("ENV_IDS", rlgraph_envs::ENV_IDS.to_vec())?;
    m.add("TENSOR_ENV_IDS", rlgraph_tensor_envs::TENSOR_ENV_IDS.to_vec())?;
    m.add("TCH", rlgraph_cli::backend_choice::TCH_BUILT)?;
    // The file that marks a GA3C run's folder, so `Agent.load` finds the layout.
    m.add("GA3C_CHECKPOINT_FILE", rlgraph_cli::GA3C_CHECKPOINT_FILE)?;
    Ok(())
}
