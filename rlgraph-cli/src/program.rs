//! The `rlgraph` program as a function: its arguments, its subcommands and how it prints
//! their results, so that `main.rs`, and a user's own binary with their environments
//! registered, are one call.

use crate::{
    act_command, agent_commands, bench_command, call_command, certs_command, distributed_command, env_command,
    export_command, output_files, profile_command, space_command, train_command,
};

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Make the TLS files of a distributed run: a new CA and one certificate for every host.
    Certs(certs_command::CertsArgs),
    /// Report a profile recorded by `train --profile DIR`, or calibrate the profiler.
    Profile(profile_command::ProfileArgs),
    /// Train every row of a benchmark suite on its seeds and write a report (HTML, SVG)
    /// against the published results.
    Bench(bench_command::BenchArgs),
}

fn thread_count(text: &str) -> Result<usize, String> {
    rlgraph_core::threads::parse(Some(text))
        .ok_or_else(|| format!("expected a count of at least 1 or `all`, got {text:?}"))
}

/// The whole `rlgraph` program: parses the process's arguments, runs the subcommand and prints
/// what it returns (an error as one line on stderr, with exit code 2). A binary of one's own
/// that registers its environments first (`rlgraph_envs::register_env`) and then calls this
/// gets every subcommand with them (`rlgraph train --env TheirEnv-v0`, `launch`, `evaluate`):
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
    let cli = Cli::parse();
    // Before any other thread starts: candle's pool is sized from the environment.
    backend_candle::init_threads(cli.threads);
    let result = match cli.command {
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
        Command::Certs(args) => certs_command::run(&args),
    };
    match result {
        Ok(output) => {
            use std::io::Write;
            match writeln!(std::io::stdout().lock(), "{output}") {
                Ok(()) => ExitCode::SUCCESS,
                // The reader went away (`rlgraph ... | head`): end quietly, as Unix tools do.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    output_files::stderr_line(&format!("error: cannot write the output: {e}"));
                    ExitCode::from(2)
                }
            }
        }
        Err(message) => {
            // One line per error, so scripts can read it.
            output_files::stderr_line(&format!("error: {}", message.replace('\n', " ")));
            ExitCode::from(2)
        }
    }
}
