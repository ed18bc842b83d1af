//! Runs the Python package's pytest suite (`rlgraph-py/tests/test_*.py`) on the extension
//! this build made, with the `rlgraph` program beside it for the tests that cross over.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The package as Python imports it: `python/rlgraph/` with the extension as
/// `_rlgraph.abi3.so`, in a fresh folder under `target/`. The extension is the one this
/// test's build made beside it in `deps/` (cargo copies it up to `target/<profile>/` only
/// when the crate itself is built, not as a test's dependency).
fn stage(build: &Path) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stage = build.join(format!("rlgraph-py-stage-{}", std::process::id()));
    let package = stage.join("rlgraph");
    std::fs::create_dir_all(&package).expect("make the staging folder");
    for entry in std::fs::read_dir(crate_dir.join("python/rlgraph")).expect("python/rlgraph") {
        let path = entry.expect("a file").path();
        if path.is_file() {
            std::fs::copy(&path, package.join(path.file_name().expect("a name"))).expect("copy a module");
        }
    }
    let extension = build.join("deps").join("lib_rlgraph.so");
    assert!(
        extension.exists(),
        "{} is missing: the build makes it with this test",
        extension.display()
    );
    std::fs::copy(&extension, package.join("_rlgraph.abi3.so")).expect("copy the extension");
    stage
}

#[test]
fn the_pytest_suite_passes() {
    let Some(python) = rlgraph_envs::gym::python_for_tests().expect("the Python of the tests") else {
        return;
    };
    // target/<profile>/deps/this-test -> target/<profile>
    let exe = std::env::current_exe().expect("the test's path");
    let build = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf();
    let program = build.join("rlgraph");
    assert!(
        program.exists(),
        "{} is missing; build it first (cargo build -p rlgraph-cli), as `cargo test --workspace` does",
        program.display()
    );
    let stage = stage(&build);
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    // Two workers (pytest-xdist): cargo runs this binary alone, so one pytest would leave a
    // core idle for the suite's minute.
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider"])
        .args(["--durations=5"])
        .arg(&tests)
        .env("PYTHONPATH", &stage)
        .env("RLGRAPH_BIN", &program)
        .current_dir(&tests)
        .output()
        .expect("run pytest");
    let _ = std::fs::remove_dir_all(&stage);
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");
    assert!(out.status.success(), "pytest failed:\n{report}");
}
