//! `--backend candle|tch`: one place that turns a backend's name into a run of a command
//! generic over `Backend`, and says what to do when libtorch is not in this process.
//!
//! Libtorch spends about half a CPU-second and 110 MB registering its operators whenever a
//! process that links it starts, and most runs of the `rlgraph` program (every distributed
//! role is one) never use it. So the commands reach `tch` only through [`TchCommands`],
//! whose one implementation [`enable_tch`] installs: a program that never calls it names
//! nothing of libtorch, and the linker leaves libtorch out. The `rlgraph` program is such a
//! program ([`crate::main_exec_tch`]); asked for tch, it runs `rlgraph-tch` in its place.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use agents::Experience;
use rlgraph_core::Backend;
use serde_json::{Map, Value as Json};

use crate::act_command::ActArgs;
use crate::agent_commands::{EvaluateArgs, GraphArgs};
use crate::bench_command::BenchArgs;
use crate::distributed_command::ServeArgs;
use crate::export_command::ExportArgs;
use crate::profile_command::CalibrateArgs;
use crate::replay_command::ReplayArgs;
use crate::serve_options::RunOptions;
use crate::train_args::TrainArgs;

/// A command that runs on any backend.
pub trait OnBackend {
    /// What the command returns.
    type Output;
    /// Runs the command on backend `B`.
    fn run<B: Backend>(&self) -> Result<Self::Output, String>;
    /// Runs the command on libtorch: `tch`'s method for this command (a command of another
    /// crate calls [`run_on_linked_tch`]).
    fn on_tch(&self, tch: &dyn TchCommands) -> Result<Self::Output, String>;
}

/// The program's commands on libtorch, one method each. [`enable_tch`] installs the only
/// implementation; a method is named by the command's [`OnBackend::on_tch`].
pub trait TchCommands: Sync {
    /// `rlgraph train`.
    fn train(&self, args: &TrainArgs) -> Result<String, String>;
    /// `rlgraph evaluate`.
    fn evaluate(&self, args: &EvaluateArgs) -> Result<String, String>;
    /// `rlgraph act`.
    fn act(&self, args: &ActArgs) -> Result<String, String>;
    /// `rlgraph graph`.
    fn graph(&self, args: &GraphArgs) -> Result<String, String>;
    /// `rlgraph export`.
    fn export(&self, args: &ExportArgs) -> Result<String, String>;
    /// `rlgraph bench`.
    fn bench(&self, args: &BenchArgs) -> Result<String, String>;
    /// `rlgraph profile calibrate`.
    fn calibrate(&self, args: &CalibrateArgs) -> Result<String, String>;
    /// `rlgraph serve`.
    fn serve(&self, args: &ServeArgs) -> Result<String, String>;
    /// Where `rlgraph launch`'s actors send what they gather.
    fn experience(&self, run: &RunOptions, config: &Json) -> Result<Experience, String>;
    /// `rlgraph replay`, ending with the layout's checkpoint `file`.
    fn replay(&self, args: &ReplayArgs, file: &str) -> Result<String, String>;
    /// The calls of an `rlgraph call` spec.
    fn call(&self, spec: &Map<String, Json>) -> Result<Json, String>;
    /// The threads libtorch says it uses, for a run's summary.
    fn intra_op_threads(&self) -> usize;
}

/// Whether this build runs `tch` (libtorch was built in with the `tch` feature).
pub const TCH_BUILT: bool = cfg!(feature = "tch");

/// The commands on libtorch, once [`enable_tch`] has run.
static TCH: OnceLock<&'static dyn TchCommands> = OnceLock::new();

/// Set by [`exec_tch_when_asked`]: a command on tch runs the `rlgraph-tch` program instead.
static EXEC_TCH: AtomicBool = AtomicBool::new(false);

/// Lets commands run on tch in this process (libtorch starts with it); does nothing in a
/// build without the `tch` feature. `rlgraph-tch`, the Python package and a program of
/// one's own that calls [`crate::main`] call it.
pub fn enable_tch() {
    #[cfg(feature = "tch")]
    let _ = TCH.set(&linked::Linked);
}

/// Makes a command on tch, in a program that has not called [`enable_tch`], run the
/// `rlgraph-tch` program beside this one with this process's arguments in its place.
pub fn exec_tch_when_asked() {
    EXEC_TCH.store(true, Ordering::Relaxed);
}

/// What this process has read of its standard input, which `rlgraph-tch` reads again when
/// it takes the process over (`rlgraph call -`).
static STDIN_READ: OnceLock<String> = OnceLock::new();

/// Reads all of standard input, keeping it for `rlgraph-tch` should it take the process over.
pub fn read_stdin() -> std::io::Result<String> {
    let text = std::io::read_to_string(std::io::stdin())?;
    let _ = STDIN_READ.set(text.clone());
    Ok(text)
}

/// Runs `task` on the backend named `name` (`candle` or `tch`).
pub fn on_backend<T: OnBackend>(name: &str, task: &T) -> Result<T::Output, String> {
    match name {
        "candle" => task.run::<backend_candle::Candle>(),
        "tch" => on_tch(task),
        other => Err(format!("unknown backend {other:?}; use candle or tch")),
    }
}

fn on_tch<T: OnBackend>(task: &T) -> Result<T::Output, String> {
    if let Some(tch) = TCH.get() {
        return task.on_tch(*tch);
    }
    if !TCH_BUILT {
        return Err(WITHOUT_TCH.into());
    }
    if EXEC_TCH.load(Ordering::Relaxed) {
        return Err(exec_tch_program());
    }
    Err(TCH_NOT_ENABLED.into())
}

/// What a build without libtorch answers when asked for tch.
pub const WITHOUT_TCH: &str =
    "this rlgraph was built without libtorch; rebuild with `--features tch` after scripts/install-libtorch.sh";

/// What a build with libtorch answers when asked for tch before [`enable_tch`].
pub const TCH_NOT_ENABLED: &str =
    "libtorch is built in but not enabled in this process: call rlgraph_cli::backend_choice::enable_tch() first";

/// Replaces this process with `rlgraph-tch` (beside this program) on the same arguments;
/// returns why it could not.
#[cfg(unix)]
fn exec_tch_program() -> String {
    use std::os::unix::process::CommandExt;
    let program = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name("rlgraph-tch"),
        Err(e) => return format!("cannot find this program's path to run rlgraph-tch beside it: {e}"),
    };
    let mut command = std::process::Command::new(&program);
    command.args(std::env::args_os().skip(1));
    if let Some(text) = STDIN_READ.get() {
        match stdin_file(text) {
            Ok(file) => {
                command.stdin(file);
            }
            Err(e) => return format!("cannot hand standard input to {}: {e}", program.display()),
        }
    }
    let e = command.exec();
    format!(
        "the tch backend runs in {}, which could not start: {e} (build it with `cargo build --features tch`)",
        program.display()
    )
}

#[cfg(not(unix))]
fn exec_tch_program() -> String {
    "the tch backend runs in rlgraph-tch; run it instead of rlgraph on this system".into()
}

/// An unnamed file holding `text`, read from its start.
fn stdin_file(text: &str) -> std::io::Result<std::fs::File> {
    use std::io::{Seek, Write};
    let mut file = tempfile::tempfile()?;
    file.write_all(text.as_bytes())?;
    file.rewind()?;
    Ok(file)
}

/// Runs `task` on libtorch linked into this process, as a command of a crate other than this
/// one implements [`OnBackend::on_tch`]; without the `tch` feature, says how to get it.
pub fn run_on_linked_tch<T: OnBackend>(task: &T) -> Result<T::Output, String> {
    #[cfg(feature = "tch")]
    return task.run::<backend_tch::Tch>();
    #[cfg(not(feature = "tch"))]
    {
        let _ = task;
        Err(WITHOUT_TCH.into())
    }
}

#[cfg(feature = "tch")]
mod linked {
    //! The one implementation of the commands on libtorch: only `enable_tch` names it.

    use super::*;
    use backend_tch::Tch;

    pub(super) struct Linked;

    impl TchCommands for Linked {
        fn train(&self, args: &TrainArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn evaluate(&self, args: &EvaluateArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn act(&self, args: &ActArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn graph(&self, args: &GraphArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn export(&self, args: &ExportArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn bench(&self, args: &BenchArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn calibrate(&self, args: &CalibrateArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn serve(&self, args: &ServeArgs) -> Result<String, String> {
            args.run::<Tch>()
        }
        fn experience(&self, run: &RunOptions, config: &Json) -> Result<Experience, String> {
            crate::distributed_command::experience_of::<Tch>(run, config)
        }
        fn replay(&self, args: &ReplayArgs, file: &str) -> Result<String, String> {
            (args, file).run::<Tch>()
        }
        fn call(&self, spec: &Map<String, Json>) -> Result<Json, String> {
            crate::call_command::run_spec_on::<Tch>(spec)
        }
        fn intra_op_threads(&self) -> usize {
            backend_tch::intra_op_threads()
        }
    }
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

fn libtorch_threads() -> serde_json::Value {
    TCH.get()
        .map_or(serde_json::Value::Null, |tch| tch.intra_op_threads().into())
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
        fn on_tch(&self, _: &dyn TchCommands) -> Result<(), String> {
            run_on_linked_tch(self)
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

    // The only test that enables tch: the others run beside it in this process.
    #[cfg(feature = "tch")]
    #[test]
    fn tch_with_the_feature_runs_once_enabled() {
        if TCH.get().is_none() {
            assert_eq!(on_backend("tch", &Nothing), Err(TCH_NOT_ENABLED.to_string()));
        }
        enable_tch();
        assert_eq!(on_backend("tch", &Nothing), Ok(()));
        assert!(threads_json("tch")["libtorch"].as_u64().is_some_and(|n| n >= 1));
    }
}
