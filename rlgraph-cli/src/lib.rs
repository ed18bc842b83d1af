//! The subcommands of `rlgraph`, the command-line program, as a library: `main.rs` parses the
//! arguments and prints what these return, and the fuzz targets call the same code (see
//! [`call_command::run_spec`]).

pub use program::{cli_reference, main, main_exec_tch, main_with, run};
pub use run_outputs::{CHECKPOINT_FILE, GA3C_CHECKPOINT_FILE, GA3C_MODEL_FILE};

pub mod act_command;
pub mod agent_commands;
pub mod backend_choice;
pub mod bench_command;
pub mod call_command;
pub mod certs_command;
pub mod distributed_command;
pub mod env_command;
pub mod export_command;
pub mod output_files;
pub mod profile_command;
mod program;
pub mod replay_command;
mod run_outputs;
pub mod schema_command;
pub mod serve_options;
pub mod space_command;
pub mod tch_commands;
pub mod train_args;
pub mod train_command;
mod train_ga3c;
mod video;
