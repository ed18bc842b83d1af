//! `rlgraph._rlgraph`, the native half of the Python package `rlgraph`: agents trained by the
//! library's worker, components under test, and vectors of native environments. The Python
//! half (`python/rlgraph/`) turns Python arguments into these calls and nothing more.

mod agent;
mod component_test;
mod python_env;
mod values;
mod vector_env;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _rlgraph(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<agent::NativeAgent>()?;
    m.add_class::<component_test::NativeComponentTest>()?;
    m.add_class::<vector_env::NativeVectorEnv>()?;
    m.add("ENV_IDS", rlgraph_envs::ENV_IDS.to_vec())?;
    m.add("TCH", rlgraph_cli::backend_choice::TCH_BUILT)?;
    Ok(())
}
