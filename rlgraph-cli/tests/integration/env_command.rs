//! `rlgraph env` end to end: RLgraph's 2x2 GridWorld walk and CartPole's first step.

use crate::common;

use common::rlgraph;

fn lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn grid_world_walk_prints_one_line_per_transition() {
    let (code, stdout, stderr) = rlgraph(&["env", "GridWorld-2x2", "--actions", "2,1"]);
    assert_eq!(code, 0, "{stderr}");
    let l = lines(&stdout);
    assert_eq!(l.len(), 3);
    assert_eq!(l[0]["observation"], 0);
    assert_eq!(
        (l[1]["observation"].clone(), l[1]["reward"].clone()),
        (1.into(), (-0.1).into())
    );
    assert_eq!(
        (
            l[2]["observation"].clone(),
            l[2]["reward"].clone(),
            l[2]["terminated"].clone()
        ),
        (3.into(), 1.0.into(), true.into())
    );
}

#[test]
fn cartpole_with_a_set_state() {
    let (code, stdout, stderr) = rlgraph(&[
        "env",
        "CartPole-v1",
        "--seed",
        "3",
        "--state",
        "0,0,0,0",
        "--actions",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let l = lines(&stdout);
    // x_dot = 0.02 * 4400/451 after one push right from rest (see the envs crate's tests).
    let x_dot = l[1]["observation"][1].as_f64().unwrap();
    assert!((x_dot - 0.02 * 4400.0 / 451.0).abs() < 1e-6, "{x_dot}");
}

#[test]
fn negative_numbers_are_values_not_flags() {
    // Pushed right from x = -0.52 at rest: Euler moves x by tau * x_dot = 0 in the first
    // step, and x_dot becomes 0.02 * 4400/451 as from the origin (x does not enter the
    // dynamics).
    let (code, stdout, stderr) = rlgraph(&["env", "CartPole-v1", "--state", "-0.52,0,0,0", "--actions", "1"]);
    assert_eq!(code, 0, "{stderr}");
    let l = lines(&stdout);
    assert_eq!(l[0]["state_set"], serde_json::json!([-0.52, 0.0, 0.0, 0.0]));
    let x = l[1]["observation"][0].as_f64().unwrap();
    let x_dot = l[1]["observation"][1].as_f64().unwrap();
    assert!((x + 0.52).abs() < 1e-6, "{x}");
    assert!((x_dot - 0.02 * 4400.0 / 451.0).abs() < 1e-6, "{x_dot}");
    // Pendulum's torque is a negative number too.
    let (code, stdout, stderr) = rlgraph(&["env", "Pendulum-v1", "--actions", "-1.5"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines(&stdout).len(), 2);
}

#[test]
fn bad_actions_and_ids_are_one_line_errors() {
    let (code, _, stderr) = rlgraph(&["env", "CartPole-v1", "--actions", "1,7"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("actions[1]"), "{stderr}");
    let (code, _, stderr) = rlgraph(&["env", "Nope-v0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("Nope-v0"), "{stderr}");
}

#[test]
fn non_finite_or_out_of_bounds_states_are_one_line_errors() {
    for (state, named) in [
        ("nan,0,0,0", "x is NaN"),
        ("0,inf,0,0", "x_dot is inf"),
        ("0,0,0.5,0", "theta is 0.5"),
    ] {
        let (code, _, stderr) = rlgraph(&["env", "CartPole-v1", "--state", state, "--actions", "1"]);
        assert_eq!(code, 2, "{state}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(named), "{stderr}");
    }
}

#[test]
fn mujocos_warnings_go_to_stderr_and_leave_the_json_on_stdout_whole() {
    if common::python().is_none() {
        return;
    }
    // A velocity beyond MuJoCo's limit of 1e10: MuJoCo warns and resets the simulation, as
    // under Gymnasium. Its default handler would print to stdout, among the JSON lines, and
    // write MUJOCO_LOG.TXT into the working folder.
    let state = "0,1.25,0,0,0,0,1e11,0,0,0,0,0";
    let (code, stdout, stderr) = rlgraph(&[
        "env",
        "Hopper-v5",
        "--state",
        state,
        "--actions",
        "[[0, 0, 0], [0, 0, 0]]",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines(&stdout).len(), 3, "{stdout}");
    assert!(
        stderr.contains("MuJoCo warning: Nan, Inf or huge value in QVEL"),
        "{stderr}"
    );
    let log = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../MUJOCO_LOG.TXT"));
    assert!(!log.exists(), "MuJoCo wrote {}", log.display());
    // A comma list is one number per step: for Hopper's three, the error shows the JSON form.
    let (code, _, stderr) = rlgraph(&["env", "Hopper-v5", "--actions", "0.5,-0.2,0.1"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("expected shape [3], got [1]") && stderr.contains("--actions '[[0.5, -0.2, 0.1]"),
        "{stderr}"
    );
}
