//! `rlgraph`: the command-line front door of rlgraph-rs.
//!
//! Today it has one subcommand, `space`, which parses an RLgraph space spec and shows its
//! flat keys, samples and membership checks. `train`, `evaluate`, `graph`, `env` and `call`
//! arrive with the issues that build agents, environments and components.

mod space_command;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Build, inspect and (soon) train reinforcement-learning agents from RLgraph JSON configs.
#[derive(Parser)]
#[command(name = "rlgraph", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse a space spec (JSON text or a file), then print its flat keys and seeded samples.
    Space(space_command::SpaceArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Space(args) => space_command::run(&args),
    };
    match result {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            // One line per error, so scripts can read it.
            eprintln!("error: {}", message.replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
