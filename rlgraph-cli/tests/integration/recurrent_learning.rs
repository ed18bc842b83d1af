//! Recurrent PPO's target: on CartPoleNoVel-v1 (CartPole without the velocities, where a
//! memoryless policy cannot tell which way the pole moves) an LSTM policy reaches a greedy
//! evaluation mean of 475, as sb3-contrib's RecurrentPPO reaches 500 in 100,000 steps; the
//! same config with a dense layer in the LSTM's place stays far below. Run through `rlgraph
//! train` on candle, and on libtorch too when the program is built with it. Recurrent IMPALA
//! reaches the same mean on both.

use crate::common::rlgraph;

/// Trains `config` on CartPoleNoVel-v1 on `backend` from `seed` until a greedy round of 20
/// episodes averages 475 or `steps` pass; returns the summary.
fn train(config: &str, backend: &str, steps: u64, seed: u64) -> serde_json::Value {
    let (steps, seed) = (steps.to_string(), seed.to_string());
    let (code, stdout, stderr) = rlgraph(&[
        "train",
        config,
        "--env",
        "CartPoleNoVel-v1",
        "--backend",
        backend,
        "--num-envs",
        "8",
        "--timesteps",
        &steps,
        "--eval-every",
        "10000",
        "--eval-episodes",
        "20",
        "--target-return",
        "475",
        "--seed",
        &seed,
    ]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

fn best_evaluation(summary: &serde_json::Value) -> f64 {
    let rounds = summary["evaluations"].as_array().unwrap();
    assert!(!rounds.is_empty(), "no evaluation round: {summary}");
    rounds
        .iter()
        .map(|e| e["mean_return"].as_f64().unwrap())
        .fold(f64::NEG_INFINITY, f64::max)
}

/// `config` on `backend` from `seed` reaches a greedy round of 475 within `steps`.
fn balances(config: &str, backend: &str, steps: u64, seed: u64) {
    let summary = train(config, backend, steps, seed);
    assert!(
        summary["solved_at_timestep"].is_u64(),
        "{config} on {backend}: no greedy round reached 475: {summary}"
    );
}

const PPO: &str = "configs/ppo-lstm-cartpole-novel.json";

/// On candle, seeds 1, 2 and 3 reached 475 at 650,000, 600,000 and 900,000 steps (16-27 s
/// each); seed 2 on libtorch at 630,000.
const IMPALA: &str = "configs/impala-lstm-cartpole-novel.json";

// One test per backend, so the two runs share the test threads.
#[test]
fn an_lstm_policy_balances_cartpole_without_velocities_on_candle() {
    balances(PPO, "candle", 200_000, 3);
}

#[cfg(feature = "tch")]
#[test]
fn an_lstm_policy_balances_cartpole_without_velocities_on_tch() {
    balances(PPO, "tch", 200_000, 3);
}

#[test]
fn recurrent_impala_balances_cartpole_without_velocities_on_candle() {
    balances(IMPALA, "candle", 1_500_000, 2);
}

#[cfg(feature = "tch")]
#[test]
fn recurrent_impala_balances_cartpole_without_velocities_on_tch() {
    balances(IMPALA, "tch", 1_500_000, 2);
}

#[test]
fn without_the_lstm_the_same_config_does_not() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/ppo-lstm-cartpole-novel.json"
    ))
    .unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    config["network_spec"][0] =
        serde_json::json!({"type": "dense", "units": 32, "activation": "tanh", "scope": "lstm"});
    let dir = std::env::temp_dir().join(format!("rlgraph-memoryless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ppo-memoryless.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let summary = train(&path.to_string_lossy(), "candle", 100_000, 3);
    std::fs::remove_dir_all(&dir).ok();
    let best = best_evaluation(&summary);
    assert!(best < 200.0, "a memoryless policy averaged {best}: {summary}");
}
