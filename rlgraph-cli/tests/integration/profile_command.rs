//! `rlgraph train --profile DIR` and `rlgraph profile report|calibrate`: the events a
//! short DQN run records, counted against what the run must do (one environment step, one
//! inference per step), the report's table, chart and overhead correction.

use crate::common;

use std::path::PathBuf;

use common::rlgraph;
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_profiled_run_records_every_step_and_the_report_breaks_it_down() {
    let dir = scratch("profile_dqn");
    let d = dir.to_str().unwrap();
    let (code, out, err) = rlgraph(&[
        "train",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "600",
        "--profile",
        d,
    ]);
    assert_eq!(code, 0, "{err}");
    let summary: Value = serde_json::from_str(&out).unwrap();
    let profile = &summary["profile"];
    assert!(profile["capture_events"].as_u64().unwrap() > 0);

    let trace: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("trace.json")).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let count = |cat: &str, name: &str| events.iter().filter(|e| e["cat"] == cat && e["name"] == name).count();
    // One environment, 600 steps: 600 env steps, inferences and collection phases.
    assert_eq!(count("simulator", "env.step"), 600);
    assert_eq!(count("operation", "inference"), 600);
    assert_eq!(count("phase", "data_collection"), 600);
    // Every update is a training phase holding one backpropagation.
    assert_eq!(count("phase", "training"), count("operation", "backpropagation"));
    assert!(count("operation", "backpropagation") > 0);
    // Plan steps carry their component, graph function and API method.
    let step = events.iter().find(|e| e["cat"] == "backend").unwrap();
    assert!(step["name"].as_str().unwrap().starts_with("dqn-agent"), "{step}");
    assert!(
        step["args"]["graph_fn"].is_string() && step["args"]["api_method"].is_string(),
        "{step}"
    );
    assert!(events.iter().any(|e| e["cat"] == "transfer"));
    assert!(events
        .iter()
        .all(|e| e["ph"] == "X" && e["dur"].as_f64().unwrap() >= 0.0));

    let (code, table, err) = rlgraph(&["profile", "report", d]);
    assert_eq!(code, 0, "{err}");
    for op in [
        "inference",
        "backpropagation",
        "simulation",
        "replay",
        "shares:",
        "not corrected",
    ] {
        assert!(table.contains(op), "{op} missing from\n{table}");
    }
    assert!(std::fs::read_to_string(dir.join("breakdown.svg"))
        .unwrap()
        .starts_with("<svg"));

    // The recorded times colour the component view: every box with a share, the shares
    // summing to the whole.
    let (code, json, err) = rlgraph(&[
        "graph",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--format",
        "json",
        "--profile",
        d,
    ]);
    assert_eq!(code, 0, "{err}");
    let view: Value = serde_json::from_str(&json).unwrap();
    let shares: Vec<f64> = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["backend_share"].as_f64().unwrap())
        .collect();
    assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{shares:?}");
    let (code, dot, err) = rlgraph(&[
        "graph",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--profile",
        d,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        dot.contains("% of backend time") && dot.contains("fillcolor=\"#bd0026\""),
        "{dot}"
    );
    let (code, _, err) = rlgraph(&[
        "graph",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--view",
        "calls",
        "--profile",
        d,
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--profile colours the components view"), "{err}");

    // With a calibration, the report removes annotations x 1000 ns + captures x 500 ns.
    let calibration = dir.join("calibration.json");
    std::fs::write(&calibration, r#"{"annotation_ns": 1000.0, "capture_ns": 500.0}"#).unwrap();
    let (code, corrected, err) = rlgraph(&["profile", "report", d]);
    assert_eq!(code, 0, "{err}");
    let annotations = profile["annotation_events"].as_u64().unwrap() as f64;
    let captures = profile["capture_events"].as_u64().unwrap() as f64;
    let removed = format!("{:.1} ms of", (annotations * 1000.0 + captures * 500.0) / 1e6);
    assert!(corrected.contains(&removed), "{removed} not in\n{corrected}");
}

#[test]
fn report_and_calibrate_errors_name_what_is_wrong() {
    let dir = scratch("profile_missing");
    let (code, _, err) = rlgraph(&["profile", "report", dir.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        err.contains("events.json") && err.contains("rlgraph train --profile"),
        "{err}"
    );
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("events.json"), "[{\"kind\": 3}]").unwrap();
    let (code, _, err) = rlgraph(&["profile", "report", dir.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("not a profile file"), "{err}");
    let (code, _, err) = rlgraph(&[
        "profile",
        "calibrate",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--repeats",
        "0",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--repeats"), "{err}");
}

#[test]
fn calibrate_writes_per_event_costs_and_checks_them_on_fresh_runs() {
    let dir = scratch("profile_calibrate");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("calibration.json");
    let (code, stdout, err) = rlgraph(&[
        "profile",
        "calibrate",
        "configs/dqn-cartpole.json",
        "--env",
        "CartPole-v1",
        "--timesteps",
        "300",
        "--repeats",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(stored["annotation_ns"], result["annotation_ns"]);
    assert!(stored["annotation_ns"].as_f64().unwrap() >= 0.0 && stored["capture_ns"].as_f64().unwrap() >= 0.0);
    // The runs it measured: none recorded with profiling off, only annotations in the
    // annotated run.
    let runs = stored["runs"].as_array().unwrap();
    assert_eq!(
        (
            runs[0]["annotation_events"].as_u64(),
            runs[0]["capture_events"].as_u64()
        ),
        (Some(0), Some(0))
    );
    assert!(runs[1]["annotation_events"].as_u64().unwrap() > 0);
    assert_eq!(runs[1]["capture_events"].as_u64(), Some(0));
    assert!(runs[2]["capture_events"].as_u64().unwrap() > 0);
    assert!(result["validation"]["corrected_error_percent"].is_number());
}
