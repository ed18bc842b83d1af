//! `rlgraph call` end to end: a dense layer with set weights, an agent, errors as one line.

use std::io::Write;
use std::process::{Command, Stdio};

fn call(spec: &serde_json::Value) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(["call", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the rlgraph binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn dense_spec(backend: &str) -> serde_json::Value {
    serde_json::json!({
        "component": {"type": "dense", "units": 2, "activation": "relu", "scope": "layer"},
        "input_spaces": {"inputs": {"type": "float-box", "shape": [3], "add_batch_rank": true}},
        "backend": backend,
        "seed": 3,
        "variables": {"layer/kernel": [[1.0, -1.0], [0.5, 0.0], [0.0, 2.0]], "bias": [0.25, -0.5]},
        "calls": [
            {"method": "call", "inputs": [[[1.0, 2.0, 3.0]]]},
            {"method": "call", "inputs": {"inputs": [[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]}}
        ]
    })
}

// By hand: [1, 2, 3] -> [1 + 1 + 0 + 0.25, -1 + 0 + 6 - 0.5] = [2.25, 4.5];
// [-1, 0, 0] -> relu([-0.75, 0.5]) = [0, 0.5]; [0, 0, 1] -> relu([0.25, 1.5]) = [0.25, 1.5].
fn expected() -> serde_json::Value {
    serde_json::json!({"results": [
        {"method": "call", "outputs": [[[2.25, 4.5]]]},
        {"method": "call", "outputs": [[[0.0, 0.5], [0.25, 1.5]]]}
    ]})
}

#[test]
fn runs_calls_on_a_component_built_from_its_spec() {
    let (code, stdout, stderr) = call(&dense_spec("candle"));
    assert_eq!(code, 0, "{stderr}");
    let got: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(got, expected());
}

#[cfg(feature = "tch")]
#[test]
fn the_same_calls_on_tch_give_the_same_results() {
    let (code, stdout, stderr) = call(&dense_spec("tch"));
    assert_eq!(code, 0, "{stderr}");
    let got: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(got, expected());
}

#[test]
fn errors_are_one_line_naming_the_place() {
    let mut spec = dense_spec("candle");
    spec["calls"][0]["inputs"] = serde_json::json!([[[1.0, 2.0]]]);
    let (code, stdout, stderr) = call(&spec);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("calls[0].inputs.inputs") && stderr.contains("expected shape"),
        "{stderr}"
    );

    let mut spec = dense_spec("candle");
    spec["component"]["unitz"] = serde_json::json!(3);
    let (code, _, stderr) = call(&spec);
    assert_eq!(code, 2);
    assert!(stderr.contains("component.unitz"), "{stderr}");

    let mut spec = dense_spec("candle");
    spec["variables"] = serde_json::json!({"layer/kernel": [1.0, 2.0]});
    let (code, _, stderr) = call(&spec);
    assert_eq!(code, 2);
    assert!(stderr.contains("variables.layer/kernel"), "{stderr}");

    let (code, _, stderr) = call(&serde_json::json!({"component": {"type": "dense", "units": 1}, "calz": []}));
    assert_eq!(code, 2);
    assert!(stderr.contains("\"calz\""), "{stderr}");
}

#[test]
fn the_readme_example_runs_and_its_greedy_actions_follow_its_q_values() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/dueling-policy-call.json");
    let out = Command::new(env!("CARGO_BIN_EXE_rlgraph"))
        .args(["call", path])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = got["results"][0]["outputs"][2].as_array().unwrap();
    let actions = got["results"][1]["outputs"][0].as_array().unwrap();
    assert_eq!(q.len(), 2);
    for (row, action) in q.iter().zip(actions) {
        let row: Vec<f64> = row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let best = if row[1] > row[0] { 1 } else { 0 };
        assert_eq!(action.as_i64().unwrap(), best, "{row:?}");
    }
}

#[test]
fn agents_are_called_by_api_method() {
    // A PPO agent on CartPole: its greedy action for two states, and the log-likelihoods and
    // values `evaluate` gives; two categories, so the two actions' probabilities sum to one.
    let agent = serde_json::json!({
        "type": "ppo",
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}],
        "update_spec": {"batch_size": 16}
    });
    let state = [0.01, -0.02, 0.03, 0.04];
    let spec = serde_json::json!({
        "agent": agent,
        "env": "CartPole-v1",
        "seed": 5,
        "calls": [
            {"method": "get_deterministic_action", "inputs": [[state, state]]},
            {"method": "evaluate", "inputs": {"states": [state, state], "actions": [0, 1]}}
        ]
    });
    let (code, stdout, stderr) = call(&spec);
    assert_eq!(code, 0, "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let actions = &out["results"][0]["outputs"][0];
    assert_eq!(actions[0], actions[1], "{out}");
    let log_probs = out["results"][1]["outputs"][0].as_array().unwrap();
    let p: f64 = log_probs.iter().map(|l| l.as_f64().unwrap().exp()).sum();
    assert!((p - 1.0).abs() < 1e-5, "{out}");
    // Unknown methods and component keys are one-line errors that say what exists.
    let mut bad = spec.clone();
    bad["calls"] = serde_json::json!([{"method": "get_q_values", "inputs": [[state]]}]);
    let (code, _, stderr) = call(&bad);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("get_q_values") && stderr.contains("evaluate"),
        "{stderr}"
    );
    let mut bad = spec;
    bad["input_spaces"] = serde_json::json!({});
    let (code, _, stderr) = call(&bad);
    assert_eq!(code, 2);
    assert!(stderr.contains("input_spaces"), "{stderr}");
}

#[test]
fn learn_runs_optimizer_steps_on_a_component() {
    // RLgraph's optimizer tests as a spec: one dense unit without bias, weights [0.5, 0.5],
    // Euclidean loss against label 2.5, SGD with rate 0.1. Input [1, 2]: prediction 1.5,
    // loss |1.5 - 2.5| = 1, gradient -[1, 2], so the weights become [0.6, 0.7] and predict
    // 2.0; the next step reports loss 0.5 and moves them to [0.7, 0.9], predicting 2.5.
    let x = [[1.0, 2.0]];
    let spec = serde_json::json!({
        "component": {"type": "dense", "units": 1, "biases_spec": false, "scope": "layer"},
        "input_spaces": {
            "inputs": {"type": "float-box", "shape": [2], "add_batch_rank": true},
            "labels": {"type": "float-box", "shape": [1], "add_batch_rank": true}
        },
        "learn": {"loss": {"type": "euclidean-distance-loss"}, "optimizer": {"type": "sgd", "learning_rate": 0.1}},
        "variables": {"kernel": [[0.5], [0.5]]},
        "calls": [
            {"method": "step", "inputs": {"inputs": x, "labels": [[2.5]]}},
            {"method": "call", "inputs": [x]},
            {"method": "step", "inputs": {"inputs": x, "labels": [[2.5]]}},
            {"method": "call", "inputs": [x]}
        ]
    });
    for backend in ["candle", "tch"] {
        if backend == "tch" && !cfg!(feature = "tch") {
            continue;
        }
        let mut spec = spec.clone();
        spec["backend"] = serde_json::json!(backend);
        let (code, stdout, stderr) = call(&spec);
        assert_eq!(code, 0, "{backend}: {stderr}");
        let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let number = |i: usize| -> f64 {
            let mut v = &out["results"][i]["outputs"][0];
            while let Some(first) = v.as_array().and_then(|a| a.first()) {
                v = first;
            }
            v.as_f64().unwrap()
        };
        for (i, want) in [1.0, 2.0, 0.5, 2.5].into_iter().enumerate() {
            assert!((number(i) - want).abs() < 1e-5, "{backend}: call {i}: {out}");
        }
    }
    let mut bad = spec.clone();
    bad["learn"]["method"] = serde_json::json!("apply");
    let (code, _, stderr) = call(&bad);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("learn") && stderr.contains("\"apply\"") && stderr.contains("call"),
        "{stderr}"
    );
    let mut bad = spec;
    bad["learn"].as_object_mut().unwrap().remove("optimizer");
    let (code, _, stderr) = call(&bad);
    assert_eq!(code, 2);
    assert!(stderr.contains("learn.optimizer"), "{stderr}");
}

#[test]
fn an_agents_variables_are_set_by_scope_path() {
    // A PPO agent whose hidden layer is the identity; its action adapter is then set so the
    // logits are [s0, 0.5]: state s0 = 1 picks action 0, s0 = 0 picks action 1.
    let identity = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let spec = serde_json::json!({
        "agent": {
            "type": "ppo",
            "network_spec": [{"type": "dense", "units": 4, "weights_spec": identity, "biases_spec": false}],
            "update_spec": {"batch_size": 16}
        },
        "env": "CartPole-v1",
        "variables": {"no/such/variable": [0.0]},
        "calls": [{"method": "get_deterministic_action", "inputs": [[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]}]
    });
    // A wrong path names every variable the agent has.
    let (code, _, stderr) = call(&spec);
    assert_eq!(code, 2);
    assert!(stderr.contains("variables.no/such/variable"), "{stderr}");
    let listed = stderr.rsplit("it has: ").next().unwrap().trim();
    let find = |suffix: &str| {
        listed
            .split(", ")
            .find(|p| p.ends_with(suffix) && p.contains("policy"))
            .unwrap_or_else(|| panic!("no {suffix} in {listed}"))
            .to_string()
    };
    let (kernel, bias) = (find("action-adapter/kernel"), find("action-adapter/bias"));
    let mut spec = spec;
    spec["variables"] = serde_json::json!({
        kernel: [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        bias: [0.0, 0.5]
    });
    let (code, stdout, stderr) = call(&spec);
    assert_eq!(code, 0, "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["results"][0]["outputs"][0], serde_json::json!([0, 1]), "{out}");
}

#[test]
fn a_trained_run_is_called_through_its_checkpoint() {
    let dir = std::env::temp_dir().join(format!("rlgraph-call-checkpoint-{}", std::process::id()));
    let run = dir.to_string_lossy().to_string();
    let train = [
        "train",
        "configs/dqn-masked-choice.json",
        "--env",
        "MaskedChoice-v0",
        "--timesteps",
        "600",
        "--seed",
        "3",
        "--out",
        &run,
    ];
    let (code, _, stderr) = crate::common::rlgraph(&train);
    assert_eq!(code, 0, "{stderr}");
    let state = serde_json::json!({"action_mask": [1, 1, 0, 1], "observation": [1, 1, 0, 1]});
    let q_of = |extra: serde_json::Value| {
        // A batch of one Dict state is a Dict of batches.
        let batch = serde_json::json!({"action_mask": [state["action_mask"]], "observation": [state["observation"]]});
        let mut spec = serde_json::json!({"calls": [{"method": "get_q_values", "inputs": [batch]}]});
        spec.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let (code, stdout, stderr) = call(&spec);
        assert_eq!(code, 0, "{stderr}");
        let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        out["results"][0]["outputs"][0][0].clone()
    };
    // The run's agent, environment and checkpoint: the Q-values `rlgraph act` prints.
    let restored = q_of(serde_json::json!({"checkpoint": run}));
    let states = dir.join("state.jsonl");
    std::fs::write(&states, format!("{state}\n")).unwrap();
    let (code, stdout, stderr) = crate::common::rlgraph(&["act", &run, "--states", &states.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    let act: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(restored, act["q_values"], "{restored} vs {act}");
    // The same agent freshly built has other Q-values: the checkpoint was what made them.
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let fresh = q_of(serde_json::json!({"agent": config, "env": "MaskedChoice-v0", "seed": 3}));
    assert_ne!(restored, fresh);
    // A component has no checkpoint, and a missing run names its file.
    let (code, _, stderr) = call(
        &serde_json::json!({"component": {"type": "dense", "units": 1}, "input_spaces": {}, "checkpoint": run, "calls": []}),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("checkpoint") && stderr.contains("agent calls"),
        "{stderr}"
    );
    let (code, _, stderr) = call(&serde_json::json!({"checkpoint": dir.join("nowhere"), "calls": []}));
    assert_eq!(code, 2);
    assert!(stderr.contains("config.json"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
