//! `rlgraph space` end to end: the JSON report, checks, and one-line errors.

use crate::common;

use common::rlgraph;

#[test]
fn prints_flat_keys_and_seeded_samples() {
    let spec = r#"{"a": {"type": "int-box", "high": 3, "add_batch_rank": true}, "b": ["bool", "float"]}"#;
    let (code, stdout, _) = rlgraph(&["space", spec, "--samples", "2", "--batch", "4", "--seed", "5"]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let keys: Vec<&str> = report["flat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["/a", "/b/_T0_", "/b/_T1_"]);
    let samples = report["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[0]["a"].as_array().unwrap().len(), 4);
    // The same seed gives the same samples.
    let (_, again, _) = rlgraph(&["space", spec, "--samples", "2", "--batch", "4", "--seed", "5"]);
    assert_eq!(stdout, again);
}

#[test]
fn check_reports_where_a_value_does_not_fit() {
    let (code, stdout, _) = rlgraph(&["space", r#"{"type": "int-box", "high": 3}"#, "--check", "3"]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["check"]["contained"], false);
    assert!(report["check"]["reason"].as_str().unwrap().contains("not below high 3"));
}

#[test]
fn a_bad_spec_is_one_line_on_stderr_with_a_non_zero_exit() {
    let (code, stdout, stderr) = rlgraph(&["space", r#"{"type": "float-box", "low": 2, "high": 1}"#]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("low (2) is greater than high (1)"), "{stderr}");
}

#[test]
fn a_reader_that_goes_away_ends_the_program_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // `rlgraph space ... --samples 100 | head -c 10`: read ten bytes, close the pipe.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(["space", r#"{"type": "float-box", "shape": [64]}"#, "--samples", "2000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // Dropping our end closes the pipe before the report (megabytes) is written.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn sizes_no_machine_holds_are_one_line_errors() {
    for args in [
        vec![
            "space",
            r#"{"type": "float-box", "shape": [4]}"#,
            "--samples",
            "1000000000",
        ],
        vec![
            "space",
            r#"{"type": "float-box", "shape": [4], "add_batch_rank": true}"#,
            "--batch",
            "10000000000",
        ],
    ] {
        let (code, _, stderr) = rlgraph(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("--samples") && stderr.contains("16777216") && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
    let (code, _, stderr) = rlgraph(&["space", r#"{"type": "float-box", "shape": [1000000000000]}"#]);
    assert_eq!(code, 2);
    assert!(stderr.contains("268435456"), "{stderr}");
    // A path that is not there is said to be missing, not malformed JSON.
    let (code, _, stderr) = rlgraph(&["space", "/nonexistent.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("/nonexistent.json") && stderr.contains("no such file"),
        "{stderr}"
    );
}

#[test]
fn a_closed_stderr_does_not_panic() {
    // `rlgraph space /nonexistent.json 2>&-`: the error cannot be printed, and the exit code
    // still says it failed (a panic would exit with 101).
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("'{}' space /nonexistent.json 2>&-", env!("CARGO_BIN_EXE_rlgraph")),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
