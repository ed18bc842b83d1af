//! Recurrent PPO's target: on CartPoleNoVel-v1 (CartPole without the velocities, where a
//! memoryless policy cannot tell which way the pole moves) an LSTM policy reaches a greedy
//! evaluation mean of 475, as sb3-contrib's RecurrentPPO reaches 500 in 100,000 steps; the
//! same config with a dense layer in the LSTM's place stays far below. Run through `rlgraph
//! train` on candle; recurrent IMPALA reaches the same mean. On libtorch, when the program is
//! built with it, both configs take the same first updates as on candle (the same episodes,
//! and weights and optimizer state that agree to 1e-3), so candle's learning carries over
//! without a second learning run: those took four CPU-minutes of the CLI's tests on libtorch's
//! per-op dispatch.

use crate::common::rlgraph;
#[cfg(feature = "tch")]
use crate::common::safetensors_f32s;

/// Trains `config` on CartPoleNoVel-v1 on `backend` from `seed` until a greedy round of 20
/// episodes averages 475 or `steps` pass; returns the summary.
fn train(config: &str, backend: &str, steps: u64, seed: u64) -> serde_json::Value {
    train_with(config, backend, steps, seed, &[])
}

/// `train` with `more` arguments after the others.
fn train_with(config: &str, backend: &str, steps: u64, seed: u64, more: &[&str]) -> serde_json::Value {
    let (steps, seed) = (steps.to_string(), seed.to_string());
    let mut args = vec![
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
    ];
    args.extend_from_slice(more);
    let (code, stdout, stderr) = rlgraph(&args);
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

#[test]
fn an_lstm_policy_balances_cartpole_without_velocities() {
    balances(PPO, "candle", 200_000, 3);
}

#[test]
fn recurrent_impala_balances_cartpole_without_velocities() {
    balances(IMPALA, "candle", 1_500_000, 2);
}

/// Trains `config` for `steps` on candle and on libtorch from the same seed: the runs must
/// make at least `updates` updates, play the same episodes and end with the same weights and
/// optimizer state (1e-3 absolute; measured: at most 1.5e-4 after PPO's 11 updates, 4e-6
/// after IMPALA's 46, while the weights moved by up to 0.07 from their start). PPO runs 4
/// updates: differences of 1e-4 in its action probabilities flip a sampled action now and
/// then, and on a 2-core AMD EPYC one had by its 11th update (131 episodes against 132), a
/// chance the run's length only raises.
#[cfg(feature = "tch")]
fn learns_on_tch_as_on_candle(config: &str, steps: u64, seed: u64, updates: u64) {
    let stem = std::path::Path::new(config).file_stem().unwrap().to_string_lossy();
    let dir = std::env::temp_dir().join(format!("rlgraph-{stem}-{}", std::process::id()));
    // A directory left by an earlier process with the same pid must not be read as this run's.
    let _ = std::fs::remove_dir_all(&dir);
    let (candle, tch) = (dir.join("candle"), dir.join("tch"));
    let runs = [("candle", &candle), ("tch", &tch)]
        .map(|(backend, out)| train_with(config, backend, steps, seed, &["--out", &out.to_string_lossy()]));
    for key in [
        "episodes_executed",
        "mean_episode_reward",
        "max_episode_reward",
        "updates",
    ] {
        assert_eq!(
            runs[0][key], runs[1][key],
            "{config}: {key} differs between the backends"
        );
    }
    assert!(runs[0]["updates"].as_u64().unwrap() >= updates, "{config}: {}", runs[0]);
    let (a, b) = (
        safetensors_f32s(&candle.join("checkpoint.safetensors")),
        safetensors_f32s(&tch.join("checkpoint.safetensors")),
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{config}");
    let weights = a.keys().filter(|k| k.contains("/networks/")).count();
    assert!(weights >= 10, "{config}: only {weights} network tensors saved");
    for (name, x) in &a {
        let y = &b[name];
        assert_eq!(x.len(), y.len(), "{config}: {name}");
        let worst = x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-3,
            "{config}: {name} differs by {worst} between the backends"
        );
    }
}

#[cfg(feature = "tch")]
#[test]
fn an_lstm_policy_learns_on_tch_as_on_candle() {
    learns_on_tch_as_on_candle(PPO, 1_100, 3, 4);
}

#[cfg(feature = "tch")]
#[test]
fn recurrent_impala_learns_on_tch_as_on_candle() {
    learns_on_tch_as_on_candle(IMPALA, 12_000, 2, 40);
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
