//! `rlgraph-tch`: the `rlgraph` program with libtorch in the process, which `rlgraph` runs in
//! its place for a command on the tch backend (built with the `tch` feature).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rlgraph_cli::main()
}
