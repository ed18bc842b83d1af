//! Names the commit the program was built from (`RLGRAPH_COMMIT`), so a learner input log
//! says which code wrote it and `rlgraph replay` can tell another program's log.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RLGRAPH_COMMIT={commit}");
    // Rebuilt when the checkout moves to another commit; a path that does not exist would
    // rerun this on every build, so only existing ones are watched.
    let mut watched = false;
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for path in ["HEAD", "refs/heads", "packed-refs"] {
            let path = Path::new(&dir).join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
                watched = true;
            }
        }
    }
    if !watched {
        println!("cargo:rerun-if-changed=build.rs");
    }
    // `rlgraph` names nothing of libtorch (see src/backend_choice.rs), yet the C++ wrappers of
    // tch come into its link with the crates that hold them, and an executable exports and
    // keeps the inline functions it shares with a library it links: hidden, they go with the
    // rest of what nothing calls, and libtorch is not loaded.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=rlgraph=-Wl,--exclude-libs,ALL");
    }
}
