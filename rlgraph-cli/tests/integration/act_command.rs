//! `rlgraph act`: a trained run's actions for states from a file, with the numbers behind
//! them, and errors that name the line.

use crate::common;

use common::{rlgraph, train_into};

fn lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn act_prints_greedy_actions_with_their_q_values_or_likelihoods() {
    let dir = std::env::temp_dir().join(format!("rlgraph-act-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // DQN with action masks: the environment comes from the run's summary.
    let dqn = dir.join("dqn").to_string_lossy().to_string();
    train_into("configs/dqn-masked-choice.json", "MaskedChoice-v0", 600, 2, &dqn);
    let states = dir.join("states.jsonl");
    let masks = [[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]];
    let text: String = masks
        .iter()
        .map(|m| format!("{}\n", serde_json::json!({"action_mask": m, "observation": m})))
        .collect();
    std::fs::write(&states, text).unwrap();
    let (code, stdout, stderr) = rlgraph(&["act", &dqn, "--states", &states.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    let out = lines(&stdout);
    assert_eq!(out.len(), masks.len(), "{stdout}");
    for (line, mask) in out.iter().zip(&masks) {
        let q: Vec<f64> = line["q_values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let action = line["action"].as_u64().unwrap() as usize;
        // The greedy action is the largest Q-value, a valid action; invalid ones are masked.
        let best = (0..4).max_by(|&i, &j| q[i].total_cmp(&q[j])).unwrap();
        assert_eq!(action, best, "{line}");
        assert_eq!(mask[action], 1, "{line}");
        for (qa, m) in q.iter().zip(mask) {
            assert_eq!(*qa <= -1e8, *m == 0, "{line}");
        }
    }
    // PPO on CartPole: a greedy action is at least as likely as the other one.
    let ppo = dir.join("ppo").to_string_lossy().to_string();
    train_into("configs/ppo-cartpole.json", "CartPole-v1", 600, 2, &ppo);
    std::fs::write(&states, "[0.01, 0.02, 0.03, 0.04]\n\n[0.0, 0.0, -0.1, 0.0]\n").unwrap();
    let (code, stdout, stderr) = rlgraph(&[
        "act",
        &ppo,
        "--states",
        &states.to_string_lossy(),
        "--env",
        "CartPole-v1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let out = lines(&stdout);
    assert_eq!(out.len(), 2, "{stdout}");
    for line in &out {
        assert!(line["log_likelihood"].as_f64().unwrap().exp() >= 0.5, "{line}");
        assert!(line["state_value"].as_f64().unwrap().is_finite(), "{line}");
    }
    // Bad input: a state of the wrong shape names its line and the space; a directory
    // without a run names the file it needs.
    std::fs::write(&states, "[0.01, 0.02, 0.03, 0.04]\n\n[1, 2]\n").unwrap();
    let (code, _, stderr) = rlgraph(&["act", &ppo, "--states", &states.to_string_lossy()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("line 3") && stderr.contains("FloatBox") && stderr.contains("[4]"),
        "{stderr}"
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, stderr) = rlgraph(&["act", &ppo, "--states", "-"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("holds no states"), "{stderr}");
    std::fs::write(&states, "[0.01, 0.02, 0.03, 0.04]\n").unwrap();
    let (code, _, stderr) = rlgraph(&[
        "act",
        &empty.to_string_lossy(),
        "--states",
        &states.to_string_lossy(),
        "--env",
        "CartPole-v1",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("config.json"), "{stderr}");
    let (code, _, stderr) = rlgraph(&["act", &empty.to_string_lossy(), "--states", &states.to_string_lossy()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("summary.json") && stderr.contains("--env"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
