//! `rlgraph`: the command-line front door of rlgraph-rs.
//!
//! Subcommands: `space` parses an RLgraph space spec and shows its flat keys, samples and
//! membership checks; `call` builds one component from its spec and runs API-method calls on
//! it; `env` steps an environment; `train`, `evaluate`, `act` and `graph` train, play, query and show
//! agents built from RLgraph JSON configs; `bench` runs a benchmark suite and reports it.
//! Asked for the tch backend, it runs `rlgraph-tch` (`src/bin/rlgraph_tch.rs`) in its place,
//! so that its runs on candle do not start libtorch.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rlgraph_cli::main_exec_tch()
}
