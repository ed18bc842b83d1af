//! The user's `rlgraph` program: every subcommand, knowing their environment and component.

fn main() -> std::process::ExitCode {
    own_rl::register();
    rlgraph_cli::main()
}
