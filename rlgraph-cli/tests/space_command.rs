//! `rlgraph space` end to end: the JSON report, checks, and one-line errors.

mod common;

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
