//! RLgraph's `multi_gpu_sync` for the DQN and Ape-X learners: with fewer GPUs than towers
//! the towers sit on the CPU, and each update, with the configured optimizer (Adam here),
//! equals the one-tower update on the same batch; on candle and on tch.

use std::collections::BTreeMap;

use agents::{DqnConfig, DqnLearner, GraphLearner, Learner};
use rlgraph_core::spaces::{Array, FloatBox, IntBox, Space, Value};
use rlgraph_core::HostTensor;
use rlgraph_tests::both_backends;
use serde_json::json;

/// A DQN config with the given memory and execution specs.
fn config(memory: serde_json::Value, execution: serde_json::Value) -> DqnConfig {
    DqnConfig::parse(&json!({
        "type": "dqn",
        "memory_spec": memory,
        "network_spec": [{"type": "dense", "units": 6, "activation": "tanh", "scope": "hidden"}],
        "optimizer_spec": {"type": "adam", "learning_rate": 0.05},
        "update_spec": {"batch_size": 7},
        "execution_spec": execution,
    }))
    .unwrap()
}

/// Three towers, faked on the CPU where there are not three GPUs.
fn three_towers() -> serde_json::Value {
    json!({"device_strategy": "multi_gpu_sync",
           "gpu_spec": {"gpus_enabled": true, "max_usable_gpus": 3, "fake_gpus_if_necessary": true}})
}

fn spaces() -> (Space, Space) {
    (FloatBox::new([3]).into(), IntBox::new(2).unwrap().into())
}

/// Seven transitions (an uneven split over three towers: 3, 2, 2), different per `round`.
fn batch(round: usize) -> Value {
    let n = 7;
    let f = |i: usize, j: usize| ((i * 3 + j + round * 5) % 11) as f32 / 5.0 - 1.0;
    let states: Vec<f32> = (0..n * 3).map(|k| f(k / 3, k % 3)).collect();
    let next: Vec<f32> = (0..n * 3).map(|k| f(k / 3 + 1, k % 3)).collect();
    Value::Dict(BTreeMap::from([
        (
            "states".to_string(),
            Value::Float32(Array::new([n, 3], states).unwrap()),
        ),
        (
            "next_states".to_string(),
            Value::Float32(Array::new([n, 3], next).unwrap()),
        ),
        (
            "actions".to_string(),
            Value::Int32(Array::new([n], (0..n).map(|i| ((i + round) % 2) as i32).collect()).unwrap()),
        ),
        (
            "rewards".to_string(),
            Value::Float32(Array::new([n], (0..n).map(|i| i as f32 * 0.5 - 1.0).collect()).unwrap()),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([n], (0..n).map(|i| i == 4).collect()).unwrap()),
        ),
        (
            "importance_weights".to_string(),
            Value::Float32(Array::new([n], (0..n).map(|i| 0.5 + i as f32 / 7.0).collect()).unwrap()),
        ),
    ]))
}

/// The learner's policy and target variables (not the optimizer's, not other towers').
fn weights<B: rlgraph_core::Backend>(learner: &DqnLearner<B>) -> BTreeMap<String, HostTensor> {
    learner
        .executor()
        .variables()
        .unwrap()
        .into_iter()
        .filter(|(k, _)| k.starts_with("dqn-agent/policy/") || k.starts_with("dqn-agent/target-policy/"))
        .collect()
}

both_backends! {
    fn towers_give_the_one_tower_update<B>() {
        let (s, a) = spaces();
        for memory in [json!({"type": "replay"}), json!({"type": "prioritized_replay", "alpha": 0.6, "beta": 0.4})] {
            let mut one = DqnLearner::<B>::new(&config(memory.clone(), json!({})), &s, &a, 3).unwrap();
            let towered = config(memory.clone(), three_towers());
            assert_eq!(towered.multi_gpu.as_ref().map(|m| m.towers), Some(3));
            let mut three = DqnLearner::<B>::new(&towered, &s, &a, 4).unwrap();
            // The same starting weights; the other towers are copied from tower 0 by the update.
            let start = weights(&one);
            three.executor().set_variables(start.iter()).unwrap();
            let devices: Vec<_> = three.executor().variable_infos().iter()
                .filter(|v| v.path.starts_with("dqn-agent/tower-"))
                .map(|v| v.device)
                .collect();
            assert!(!devices.is_empty(), "towers 1 and 2 have variables");
            for round in 0..3 {
                let b = batch(round);
                let l1 = one.learn(&b, 0.0).unwrap();
                let l3 = three.learn(&b, 0.0).unwrap();
                assert!((l1.loss - l3.loss).abs() <= 1e-5 * (1.0 + l1.loss.abs()), "{memory} round {round}: loss {} vs {}", l1.loss, l3.loss);
                match (&l1.priorities, &l3.priorities) {
                    (Some(p1), Some(p3)) => {
                        assert_eq!(p1.len(), 7);
                        for (x, y) in p1.iter().zip(p3) {
                            assert!((x - y).abs() <= 1e-5 * (1.0 + x.abs()), "{memory} round {round}: priorities {p1:?} vs {p3:?}");
                        }
                    }
                    (None, None) => {}
                    other => panic!("priorities differ in kind: {other:?}"),
                }
                let (w1, w3) = (weights(&one), weights(&three));
                assert_ne!(w1, start, "the update moved the weights");
                for (k, v) in &w1 {
                    for (x, y) in v.data.to_f64().iter().zip(w3[k].data.to_f64()) {
                        assert!((x - y).abs() <= 1e-5 * (1.0 + x.abs()), "{memory} round {round}, {k}: {x} vs {y}");
                    }
                }
            }
        }
    }
}

#[test]
fn multi_gpu_settings_are_checked_by_name() {
    let base = json!({"type": "dqn", "network_spec": [{"type": "dense", "units": 4}]});
    for (execution, path) in [
        (
            json!({"device_strategy": "multi_gpu_sync"}),
            "config.execution_spec.gpu_spec.gpus_enabled",
        ),
        (
            json!({"device_strategy": "multi_gpu_sync", "gpu_spec": {"gpus_enabled": true}}),
            "config.execution_spec.gpu_spec.max_usable_gpus",
        ),
        (
            json!({"device_strategy": "multi_gpu_async"}),
            "config.execution_spec.device_strategy",
        ),
        (
            json!({"gpu_spec": {"allow_memory_growth": false}}),
            "config.execution_spec.gpu_spec.allow_memory_growth",
        ),
        (
            json!({"gpu_spec": {"max_usable_gpus": 0}}),
            "config.execution_spec.gpu_spec.max_usable_gpus",
        ),
        // Found by the config-mutation property test: a trillion towers probed a trillion
        // devices before failing.
        (
            json!({"device_strategy": "multi_gpu_sync",
                   "gpu_spec": {"gpus_enabled": true, "max_usable_gpus": 1_000_000_000_000u64, "fake_gpus_if_necessary": true}}),
            "config.execution_spec.gpu_spec.max_usable_gpus",
        ),
    ] {
        let mut spec = base.clone();
        spec["execution_spec"] = execution.clone();
        let err = DqnConfig::parse(&spec).unwrap_err().to_string();
        assert!(err.contains(path), "{execution}: {err}");
    }
    // Other learners are not split over towers yet, and say so.
    let ppo = json!({"type": "ppo", "network_spec": [{"type": "dense", "units": 4}],
        "execution_spec": {"device_strategy": "multi_gpu_sync", "gpu_spec": {"gpus_enabled": true, "max_usable_gpus": 2}}});
    let err = agents::PgConfig::parse(&ppo).unwrap_err().to_string();
    assert!(err.contains("config.execution_spec.device_strategy"), "{err}");
}

#[test]
fn without_faking_too_few_gpus_is_an_error() {
    let (s, a) = spaces();
    let spec = config(
        json!({"type": "replay"}),
        json!({"device_strategy": "multi_gpu_sync",
        "gpu_spec": {"gpus_enabled": true, "max_usable_gpus": 64}}),
    );
    let err = DqnLearner::<rlgraph_tests::Candle>::new(&spec, &s, &a, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("64 towers"), "{err}");
}
