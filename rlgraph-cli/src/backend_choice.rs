//! `--backend candle|tch`: one place that turns a backend's name into a run of a command
//! generic over `Backend`, and says what to do when libtorch is not in this process.
//!
//! Libtorch spends about half a CPU-second and 110 MB registering its operators whenever a
//! process that links it starts, and most runs of the `rlgraph` program (every distributed
//! role is one) never use it. So a command reaches `tch` only through the table of
//! [`TchEntry`]s a process installs ([`crate::tch_commands::enable_tch`]): a program that
//! never does names nothing of libtorch, and the linker leaves libtorch out. The `rlgraph`
//! program is such a program ([`crate::main_exec_tch`]); asked for tch, it runs
//! `rlgraph-tch` in its place.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rlgraph_core::Backend;

/// A command that runs on any backend.
pub trait OnBackend {
    /// What the command returns.
    type Output;
    /// Runs the command on backend `B`.
    fn run<B: Backend>(&self) -> Result<Self::Output, String>;
}

/// How a command of type `T` runs on libtorch.
type OnTch<T> = fn(&T) -> Result<<T as OnBackend>::Output, String>;

/// One command's run on libtorch, as an `OnTch<T>`: [`crate::tch_commands`] makes the
/// program's, and only a process that installs them ([`crate::tch_commands::enable_tch`])
/// names libtorch.
pub struct TchEntry(Box<dyn Any + Send + Sync>);

impl TchEntry {
    /// The run of commands of type `T` on libtorch.
    #[cfg(feature = "tch")]
    pub fn of<T: OnBackend + 'static>() -> Self
    where
        T::Output: 'static,
    {
        let run: OnTch<T> = |task| task.run::<backend_tch::Tch>();
        TchEntry(Box::new(run))
    }
}

/// What runs commands on libtorch in this process, once installed.
struct Tch {
    entries: Vec<TchEntry>,
    intra_op_threads: fn() -> usize,
}

static TCH: OnceLock<Tch> = OnceLock::new();

/// Lets the commands of `entries` run on tch in this process (libtorch starts with it).
#[cfg(feature = "tch")]
pub fn install_tch(entries: Vec<TchEntry>) {
    let _ = TCH.set(Tch {
        entries,
        intra_op_threads: backend_tch::intra_op_threads,
    });
}

/// Set by [`exec_tch_when_asked`]: a command on tch runs the `rlgraph-tch` program instead.
static EXEC_TCH: AtomicBool = AtomicBool::new(false);

/// Makes a command on tch, in a program that has not installed tch, run the `rlgraph-tch`
/// program beside this one with this process's arguments in its place.
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
pub fn on_backend<T: OnBackend + 'static>(name: &str, task: &T) -> Result<T::Output, String>
where
    T::Output: 'static,
{
    on_named(name, task, on_tch)
}

/// [`on_backend`] for a process that links libtorch whatever it runs (the Python package),
/// whose commands may borrow.
pub fn on_linked_backend<T: OnBackend>(name: &str, task: &T) -> Result<T::Output, String> {
    on_named(name, task, on_linked_tch)
}

fn on_named<T: OnBackend>(name: &str, task: &T, tch: fn(&T) -> Result<T::Output, String>) -> Result<T::Output, String> {
    match name {
        "candle" => task.run::<backend_candle::Candle>(),
        "tch" => tch(task),
        other => Err(format!("unknown backend {other:?}; use candle or tch")),
    }
}

fn on_tch<T: OnBackend + 'static>(task: &T) -> Result<T::Output, String>
where
    T::Output: 'static,
{
    if let Some(tch) = TCH.get() {
        return match tch.entries.iter().find_map(|e| e.0.downcast_ref::<OnTch<T>>()) {
            Some(run) => run(task),
            None => Err(format!(
                "{} has no entry in rlgraph_cli::tch_commands, so it cannot run on tch",
                std::any::type_name::<T>()
            )),
        };
    }
    if !TCH_BUILT {
        return Err(WITHOUT_TCH.into());
    }
    if EXEC_TCH.load(Ordering::Relaxed) {
        return Err(exec_tch_program());
    }
    Err(TCH_NOT_ENABLED.into())
}

fn on_linked_tch<T: OnBackend>(task: &T) -> Result<T::Output, String> {
    #[cfg(feature = "tch")]
    return task.run::<backend_tch::Tch>();
    #[cfg(not(feature = "tch"))]
    {
        let _ = task;
        Err(WITHOUT_TCH.into())
    }
}

/// Whether this build runs `tch` (libtorch was built in with the `tch` feature).
pub const TCH_BUILT: bool = cfg!(feature = "tch");

/// What a build without libtorch answers when asked for tch.
pub const WITHOUT_TCH: &str =
    "this rlgraph was built without libtorch; rebuild with `--features tch` after scripts/install-libtorch.sh";

/// What a build with libtorch answers when asked for tch before tch is installed.
pub const TCH_NOT_ENABLED: &str =
    "libtorch is built in but not enabled in this process: call rlgraph_cli::tch_commands::enable_tch() first";

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
        .map_or(serde_json::Value::Null, |tch| (tch.intra_op_threads)().into())
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

    // The only test that enables tch: the others run beside it in this process.
    #[cfg(feature = "tch")]
    #[test]
    fn tch_with_the_feature_runs_once_enabled() {
        if TCH.get().is_none() {
            assert_eq!(on_backend("tch", &Nothing), Err(TCH_NOT_ENABLED.to_string()));
        }
        install_tch(vec![TchEntry::of::<Nothing>()]);
        assert_eq!(on_backend("tch", &Nothing), Ok(()));
        // A command without an entry is named, not run.
        struct Unlisted;
        impl OnBackend for Unlisted {
            type Output = ();
            fn run<B: Backend>(&self) -> Result<(), String> {
                Ok(())
            }
        }
        let err = on_backend("tch", &Unlisted).unwrap_err();
        assert!(err.contains("Unlisted") && err.contains("no entry"), "{err}");
        assert!(threads_json("tch")["libtorch"].as_u64().is_some_and(|n| n >= 1));
    }
}
