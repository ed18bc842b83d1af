//! `rlgraph export --format onnx`: the exported acting graph, run in onnxruntime, gives the
//! project's own actions and numbers (from `rlgraph act`) on 1,000 states, for a dueling DQN,
//! a DQN with action masks, PPO with discrete and with bounded continuous actions, and a
//! recurrent PPO and a recurrent IMPALA (an LSTM, its memory carried through the states).
//! onnxruntime comes with the bridge's Python (skipped without one unless
//! `RLGRAPH_REQUIRE_GYM` is set).

use std::path::Path;
use std::process::Command;

use crate::common::rlgraph;

const STATES: usize = 1000;

/// Deterministic pseudo-random numbers in `[-0.4, 0.4)` (inside CartPole's and Pendulum's
/// observation bounds; a 64-bit LCG), so the states are fixed.
fn draws(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * 0.4
        })
        .collect()
}

/// `STATES` states of `features` numbers, or MaskedChoice states (a mask and its floats).
fn states(features: usize, masked: bool) -> Vec<serde_json::Value> {
    let x = draws(features as u64 + 17, STATES * features);
    x.chunks(features)
        .map(|row| match masked {
            false => serde_json::json!(row),
            true => {
                let mut mask: Vec<u8> = row.iter().map(|&v| u8::from(v > 0.0)).collect();
                mask[0] |= u8::from(!mask.contains(&1));
                serde_json::json!({"action_mask": mask, "observation": mask})
            }
        })
        .collect()
}

/// Every number of a JSON value, flattened.
fn floats(v: &serde_json::Value) -> Vec<f64> {
    match v {
        serde_json::Value::Array(a) => a.iter().flat_map(floats).collect(),
        other => vec![other.as_f64().unwrap()],
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0)
}

/// Trains `config` briefly, exports it, and compares onnxruntime's outputs with `rlgraph act`.
fn check(python: &str, dir: &Path, config: &str, env: &str, features: usize, masked: bool) {
    let stem = Path::new(config).file_stem().unwrap().to_string_lossy();
    let name = format!("{stem}-{env}");
    let run = dir.join(&name).to_string_lossy().to_string();
    crate::common::train_into(config, env, 300, 4, &run);
    // `train --out` wrote the model already; `export` writes the same bytes.
    let trained = std::fs::read(Path::new(&run).join("model.onnx")).unwrap();
    let (code, stdout, stderr) = rlgraph(&["export", &run]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(Path::new(&run).join("model.onnx")).unwrap(), trained);
    let written: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(written["opset"], 17, "{written}");
    let states = states(features, masked);
    let states_file = dir.join(format!("{name}.jsonl"));
    std::fs::write(
        &states_file,
        states.iter().map(|s| format!("{s}\n")).collect::<String>(),
    )
    .unwrap();
    let (code, stdout, stderr) = rlgraph(&["act", &run, "--states", &states_file.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    let ours: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(ours.len(), STATES);
    // The same states as onnxruntime's feeds.
    let feeds = match masked {
        false => serde_json::json!({"states": states}),
        true => serde_json::json!({
            "states": states.iter().map(|s| s["observation"].clone()).collect::<Vec<_>>(),
            "action_mask": states.iter().map(|s| s["action_mask"].clone()).collect::<Vec<_>>(),
        }),
    };
    let (feeds_file, out_file) = (
        dir.join(format!("{name}-feeds.json")),
        dir.join(format!("{name}-out.json")),
    );
    std::fs::write(&feeds_file, feeds.to_string()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/onnx_outputs.py");
    let model = Path::new(&run).join("model.onnx");
    let out = Command::new(python)
        .args([
            script.as_ref(),
            model.as_os_str(),
            feeds_file.as_os_str(),
            out_file.as_os_str(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let theirs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    for (i, line) in ours.iter().enumerate() {
        let (a_ours, a_theirs) = (floats(&line["action"]), floats(&theirs["actions"][i]));
        if let Some(q) = line.get("q_values") {
            let (q_ours, q_theirs) = (floats(q), floats(&theirs["q_values"][i]));
            assert!(
                q_ours.iter().zip(&q_theirs).all(|(a, b)| close(*a, *b)),
                "{env} state {i}: {q_ours:?} vs {q_theirs:?}"
            );
            // The same greedy action, unless the two Q-values tie within the tolerance.
            let (a, b) = (a_ours[0] as usize, a_theirs[0] as usize);
            assert!(
                a == b || close(q_ours[a], q_ours[b]),
                "{env} state {i}: action {a} vs {b}"
            );
        } else if let (Some(ll), true) = (line.get("log_likelihood"), theirs.get("logits").is_some()) {
            // log softmax of the exported logits at our greedy action is our log-likelihood.
            let logits = floats(&theirs["logits"][i]);
            let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lse = max + logits.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
            let a = a_ours[0] as usize;
            assert!(
                close(logits[a] - lse, ll.as_f64().unwrap()),
                "{env} state {i}: {logits:?} vs {ll}"
            );
            assert!(
                a == a_theirs[0] as usize || close(logits[a], logits[a_theirs[0] as usize]),
                "{env} state {i}"
            );
        } else {
            // Continuous actions: the squashed mean.
            assert!(
                a_ours.iter().zip(&a_theirs).all(|(a, b)| close(*a, *b)),
                "{env} state {i}: {a_ours:?} vs {a_theirs:?}"
            );
        }
    }
}

#[test]
fn onnx_exports_act_as_the_project_does_in_onnxruntime() {
    let Some(python) = crate::common::python() else {
        return;
    };
    let has_ort = Command::new(&python)
        .args(["-c", "import onnxruntime"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_ort {
        assert!(
            std::env::var_os("RLGRAPH_REQUIRE_GYM").is_none(),
            "{python} has no onnxruntime: run scripts/install-gym.sh"
        );
        eprintln!("skipped: {python} has no onnxruntime (run scripts/install-gym.sh)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rlgraph-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    check(
        &python,
        &dir,
        "configs/double-dueling-dqn-cartpole.json",
        "CartPole-v1",
        4,
        false,
    );
    check(
        &python,
        &dir,
        "configs/dqn-masked-choice.json",
        "MaskedChoice-v0",
        4,
        true,
    );
    check(&python, &dir, "configs/ppo-cartpole.json", "CartPole-v1", 4, false);
    check(&python, &dir, "configs/ppo-cartpole.json", "Pendulum-v1", 3, false);
    // Recurrent: the 1,000 states are one episode, the LSTM's memory carried through it. The
    // shipped config with a dense layer before the LSTM, so every part of the network is there.
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/ppo-lstm-cartpole-novel.json");
    let mut recurrent: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(shipped).unwrap()).unwrap();
    let encoder = serde_json::json!({"type": "dense", "units": 8, "activation": "tanh"});
    recurrent["network_spec"].as_array_mut().unwrap().insert(0, encoder);
    let recurrent_config = dir.join("ppo-lstm-encoded.json");
    std::fs::write(&recurrent_config, recurrent.to_string()).unwrap();
    check(
        &python,
        &dir,
        &recurrent_config.to_string_lossy(),
        "CartPoleNoVel-v1",
        2,
        false,
    );
    // Recurrent IMPALA: the same network under another root, its actor sampling with
    // log-likelihoods.
    let shipped = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/impala-lstm-cartpole-novel.json"
    );
    check(&python, &dir, shipped, "CartPoleNoVel-v1", 2, false);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn what_cannot_be_exported_is_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("rlgraph-export-refused-{}", std::process::id()));
    let run = dir.to_string_lossy().to_string();
    let (code, _, stderr) = rlgraph(&[
        "train",
        "configs/sac-pendulum.json",
        "--env",
        "Pendulum-v1",
        "--timesteps",
        "50",
        "--out",
        &run,
    ]);
    assert_eq!(code, 0, "{stderr}");
    // The run succeeds without the model and says why.
    assert!(!dir.join("model.onnx").exists());
    assert!(
        stderr.contains("note: --out: no model.onnx") && stderr.contains("cannot be exported to ONNX"),
        "{stderr}"
    );
    let (code, _, stderr) = rlgraph(&["export", &run]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("agents of type \"sac\"") && stderr.contains("cannot be exported to ONNX"),
        "{stderr}"
    );
    let (code, _, stderr) = rlgraph(&["export", &run, "--format", "tflite"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--format tflite") && stderr.contains("onnx"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
