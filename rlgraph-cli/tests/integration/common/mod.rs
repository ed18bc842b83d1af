//! Running the `rlgraph` binary from the repository root.

use std::process::Command;

/// Runs `rlgraph ARGS` and returns (exit code, stdout, stderr).
pub fn rlgraph(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("the rlgraph binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub mod roles;
