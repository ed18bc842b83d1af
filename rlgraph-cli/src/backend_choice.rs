//! `--backend candle|tch`: one place that turns a backend's name into a run of a command
//! generic over `Backend`, and says what to do when libtorch was not built in.

use rlgraph_core::Backend;

/// A command that runs on any backend.
pub trait OnBackend {
    /// What the command returns.
    type Output;
    /// Runs the command on backend `B`.
    fn run<B: Backend>(&self) -> Result<Self::Output, String>;
}

/// Whether this build runs `tch` (libtorch was built in with the `tch` feature).
pub const TCH_BUILT: bool = cfg!(feature = "tch");

/// Runs `task` on the backend named `name` (`candle` or `tch`).
pub fn on_backend<T: OnBackend>(name: &str, task: &T) -> Result<T::Output, String> {
    match name {
        "candle" => task.run::<backend_candle::Candle>(),
        "tch" => on_tch(task),
        other => Err(format!("unknown backend {other:?}; use candle or tch")),
    }
}

#[cfg(feature = "tch")]
fn on_tch<T: OnBackend>(task: &T) -> Result<T::Output, String> {
    task.run::<backend_tch::Tch>()
}

/// What a build without libtorch answers when asked for tch.
pub const WITHOUT_TCH: &str =
    "this rlgraph was built without libtorch; rebuild with `--features tch` after scripts/install-libtorch.sh";

#[cfg(not(feature = "tch"))]
fn on_tch<T: OnBackend>(_: &T) -> Result<T::Output, String> {
    Err(WITHOUT_TCH.into())
}

/// The threads a run used, for its summary: the CPUs this process may use (its affinity mask
/// and CPU quota), the kernel threads of both backends, and what libtorch reports it uses
/// (with `--backend tch`).
pub fn threads_json(backend: &str) -> serde_json::Value {
    let mut json = serde_json::json!({
        "available_cpus": rlgraph_core::threads::available_cpus(),
        "kernel": rlgraph_core::threads::kernel_threads(),
    });
    if backend == "tch" {
        json["libtorch"] = libtorch_threads();
    }
    json
}

#[cfg(feature = "tch")]
fn libtorch_threads() -> serde_json::Value {
    backend_tch::intra_op_threads().into()
}

#[cfg(not(feature = "tch"))]
fn libtorch_threads() -> serde_json::Value {
    serde_json::Value::Null
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;

    impl OnBackend for Nothing {
        type Output = ();
        fn run<B: Backend>(&self) -> Result<(), String> {
            Ok(())
        }
    }

    #[test]
    fn names_outside_the_two_backends_are_refused() {
        let err = on_backend("jax", &Nothing).unwrap_err();
        assert!(err.contains("\"jax\"") && err.contains("candle or tch"), "{err}");
    }

    // The default build answers tch with `WITHOUT_TCH` (clippy's pass without the feature
    // compiles that branch); the test build has the feature, so the message is checked here
    // rather than by building the program a second time.
    #[test]
    fn a_build_without_libtorch_says_how_to_get_it() {
        assert!(WITHOUT_TCH.contains("--features tch"), "{WITHOUT_TCH}");
        assert!(WITHOUT_TCH.contains("scripts/install-libtorch.sh"), "{WITHOUT_TCH}");
        #[cfg(not(feature = "tch"))]
        assert_eq!(on_backend("tch", &Nothing), Err(WITHOUT_TCH.to_string()));
    }

    #[cfg(feature = "tch")]
    #[test]
    fn tch_with_the_feature_runs() {
        assert_eq!(on_backend("tch", &Nothing), Ok(()));
    }
}
