//! The `rlgraph` program as a function: its arguments, its subcommands and how it prints
//! their results, so that `main.rs`, and a user's own binary with their environments
//! registered, are one call.

use crate::{
    act_command, agent_commands, bench_command, call_command, certs_command, distributed_command, env_command,
    export_command, output_files, profile_command, replay_command, schema_command, space_command, train_command,
};

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Build, inspect and train reinforcement-learning agents from RLgraph JSON configs.
#[derive(Parser)]
#[command(name = "rlgraph", version, about)]
struct Cli {
    /// Threads for the backends' CPU kernels (candle's and libtorch's): a count or `all` (the
    /// CPUs this process may use: its affinity mask and CPU quota). One, the default, is the
    /// fastest for classic-control networks and stays fast beside other busy processes; a
    /// learner alone on its machine gains from more on convolutions.
    #[arg(long, global = true, env = "RLGRAPH_THREADS", default_value = "1", value_parser = thread_count)]
    threads: usize,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse a space spec (JSON text or a file), then print its flat keys and seeded samples.
    Space(space_command::SpaceArgs),
    /// Build one component alone from a JSON call spec and run API-method calls on it.
    Call(call_command::CallArgs),
    /// Reset an environment, apply actions, and print one JSON line per transition.
    Env(env_command::EnvArgs),
    /// Train an agent from an RLgraph JSON config on an environment.
    Train(train_command::TrainArgs),
    /// Play greedy episodes with an agent trained by `rlgraph train --out DIR`.
    Evaluate(agent_commands::EvaluateArgs),
    /// Print a trained agent's actions for given states (and its Q-values or
    /// log-likelihoods), one JSON line per state.
    Act(act_command::ActArgs),
    /// Write a trained run's acting graph as ONNX (or its variables as safetensors).
    Export(export_command::ExportArgs),
    /// Print an agent's meta graph (DOT or JSON) with its spaces and devices.
    Graph(agent_commands::GraphArgs),
    /// Run one role (learner, replay shard, actor) of a distributed Ape-X or IMPALA run.
    Serve(distributed_command::ServeArgs),
    /// Run distributed Ape-X or IMPALA on this machine: every role as a process of its own.
    Launch(distributed_command::LaunchArgs),
    /// Run a distributed learner again in this process from the input log `--record` wrote,
    /// ending with the live learner's checkpoint, byte for byte.
    Replay(replay_command::ReplayArgs),
    /// Make the TLS files of a distributed run: a new CA and one certificate for every host.
    Certs(certs_command::CertsArgs),
    /// Report a profile recorded by `train --profile DIR`, or calibrate the profiler.
    Profile(profile_command::ProfileArgs),
    /// Train every row of a benchmark suite on its seeds and write a report (HTML, SVG)
    /// against the published results.
    Bench(bench_command::BenchArgs),
    /// Print the JSON Schema of agent configs, which editors complete and check keys with
    /// (`docs/config.schema.json` holds it; configs name it with `$schema`).
    Schema(schema_command::SchemaArgs),
}

/// The command-line reference page (`docs/book/src/reference/cli-flags.md`): every
/// subcommand's full help, as the argument parser prints it, in one markdown page.
pub fn cli_reference() -> String {
    // Environment values are hidden so the page does not depend on who generated it.
    fn hide_env(command: clap::Command) -> clap::Command {
        command
            .mut_args(|arg| arg.hide_env_values(true))
            .mut_subcommands(hide_env)
    }
    fn section(page: &mut String, command: &mut clap::Command, path: &str) {
        let help = command.render_long_help().to_string();
        page.push_str(&format!("\n## `{path}`\n\n```text\n{}\n```\n", help.trim_end()));
        for sub in command.get_subcommands_mut() {
            if sub.get_name() != "help" {
                let path = format!("{path} {}", sub.get_name());
                section(page, sub, &path);
            }
        }
    }
    let mut command = hide_env(Cli::command()).term_width(100);
    command.build();
    let mut page = String::from(
        "<!-- Generated from the argument parser by rlgraph-cli's `cli_reference`; do not edit.\n     \
         Regenerate: RLGRAPH_BLESS=1 cargo test -p rlgraph-cli --lib cli_reference -->\n\n\
         # Every subcommand and flag\n\n\
         What `rlgraph help SUBCOMMAND` prints, for every subcommand. The [command line](cli.md) \
         says what the flags are for and how they combine.\n",
    );
    section(&mut page, &mut command, "rlgraph");
    page
}

fn thread_count(text: &str) -> Result<usize, String> {
    rlgraph_core::threads::parse(Some(text))
        .ok_or_else(|| format!("expected a count of at least 1 or `all`, got {text:?}"))
}

/// The whole `rlgraph` program: parses the process's arguments, runs the subcommand and prints
/// what it returns (an error as one line on stderr, with exit code 2). A binary of one's own
/// that registers its environments first (`rlgraph_envs::register_env`) and then calls this
/// gets every subcommand with them (`rlgraph train --env TheirEnv-v0`, `launch`, `evaluate`),
/// and the tch backend in the same process when built with the `tch` feature:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     rlgraph_envs::register_env("MyCartPole-v0", |seed| {
///         Ok(Box::new(rlgraph_envs::CartPole::new(seed)) as Box<dyn rlgraph_envs::Env>)
///     })
///     .expect("a new id");
///     rlgraph_cli::main()
/// }
/// ```
pub fn main() -> ExitCode {
    crate::tch_commands::enable_tch();
    ExitCode::from(main_with(std::env::args_os().collect()))
}

/// The `rlgraph` program: [`main`] without libtorch in the process. A command on tch runs
/// the `rlgraph-tch` program beside it on the same arguments in its place (a build with the
/// `tch` feature makes both), so the runs on candle do not start libtorch.
pub fn main_exec_tch() -> ExitCode {
    crate::backend_choice::exec_tch_when_asked();
    ExitCode::from(main_with(std::env::args_os().collect()))
}

/// The program on `args` (its own name first), as [`main`] runs it: prints what the
/// subcommand returns (an error as one line on stderr) and returns the exit code (0, or 2
/// for an error). The Python package's `rlgraph` command is this call.
pub fn main_with(args: Vec<OsString>) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap's own text: the usage error, or the help and version asked for.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match dispatch(cli) {
        Ok(output) => {
            use std::io::Write;
            match writeln!(std::io::stdout().lock(), "{output}") {
                Ok(()) => 0,
                // The reader went away (`rlgraph ... | head`): end quietly, as Unix tools do.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
                Err(e) => {
                    output_files::stderr_line(&format!("error: cannot write the output: {e}"));
                    2
                }
            }
        }
        Err(message) => {
            // One line per error, so scripts can read it.
            output_files::stderr_line(&format!("error: {}", message.replace('\n', " ")));
            2
        }
    }
}

/// Runs one subcommand on `args` (the program's name first) and returns what the program
/// would print, or its error (for bad arguments, clap's message); help and version are
/// returned as output.
pub fn run(args: Vec<OsString>) -> Result<String, String> {
    match Cli::try_parse_from(args) {
        Ok(cli) => dispatch(cli),
        Err(e) if !e.use_stderr() => Ok(e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn dispatch(cli: Cli) -> Result<String, String> {
    // Before any other thread starts: candle's pool is sized from the environment.
    backend_candle::init_threads(cli.threads);
    match cli.command {
        Command::Space(args) => space_command::run(&args),
        Command::Call(args) => call_command::run(&args),
        Command::Env(args) => env_command::run(&args),
        Command::Train(args) => train_command::run(&args),
        Command::Evaluate(args) => agent_commands::evaluate(&args),
        Command::Act(args) => act_command::run(&args),
        Command::Export(args) => export_command::run(&args),
        Command::Graph(args) => agent_commands::graph(&args),
        Command::Profile(args) => profile_command::run(&args),
        Command::Bench(args) => bench_command::run(&args),
        Command::Serve(args) => distributed_command::serve(&args),
        Command::Launch(args) => distributed_command::launch(&args),
        Command::Replay(args) => replay_command::run(&args),
        Command::Certs(args) => certs_command::run(&args),
        Command::Schema(args) => schema_command::run(&args),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    /// Asserts that the file at `relative` (from this crate's folder) holds `generated`;
    /// with `RLGRAPH_BLESS` set, writes it first. `test` names the test that regenerates it.
    pub(crate) fn assert_current(relative: &str, generated: &str, test: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        if std::env::var_os("RLGRAPH_BLESS").is_some() {
            std::fs::write(&path, generated).expect("write the generated file");
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            stored == generated,
            "{} is not what its source makes; regenerate it with RLGRAPH_BLESS=1 cargo test -p rlgraph-cli --lib {test}",
            path.display()
        );
    }

    /// The generated page in the book is what the parser prints today (regenerated and
    /// compared, so a new flag without its page fails here).
    #[test]
    fn cli_reference_page_is_current() {
        assert_current(
            "../docs/book/src/reference/cli-flags.md",
            &super::cli_reference(),
            "cli_reference",
        );
    }

    #[test]
    fn cli_reference_names_every_subcommand_and_a_flag_of_train() {
        let page = super::cli_reference();
        for sub in [
            "space", "call", "env", "train", "evaluate", "act", "export", "graph", "serve", "launch", "replay",
            "certs", "profile", "bench", "schema",
        ] {
            assert!(page.contains(&format!("## `rlgraph {sub}`")), "{sub} missing");
        }
        assert!(page.contains("--eval-every"));
        assert!(page.contains("RLGRAPH_THREADS"));
        assert!(
            !page.contains("RLGRAPH_THREADS="),
            "an environment value leaked into the page"
        );
    }
}
