//! Action masks in the agents: DQN bootstraps from the best valid next action, PPO's
//! log-likelihoods are a distribution over the valid actions only, and masks that cannot be
//! used are refused by name. The states are `MaskedChoice-v0`'s (an observation and a uint8
//! mask under `action_mask`).

use std::collections::BTreeMap;

use agents::{Agent, DqnAgent, DqnConfig, PgAgent, PgConfig};
use backend_candle::Candle;
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_envs::{Env, MaskedChoiceEnv, RandomEnv};

/// A MaskedChoice state (or a batch of them: `rows` states).
fn states(rows: usize, observation: Vec<f32>, mask: Vec<u8>) -> Value {
    let shape = |n: usize| if rows == 1 { vec![n] } else { vec![rows, n / rows] };
    Value::Dict(BTreeMap::from([
        (
            "action_mask".to_string(),
            Value::Uint8(Array::new(shape(mask.len()), mask).unwrap()),
        ),
        (
            "observation".to_string(),
            Value::Float32(Array::new(shape(observation.len()), observation).unwrap()),
        ),
    ]))
}

fn env() -> MaskedChoiceEnv {
    MaskedChoiceEnv::new(0)
}

fn dqn(extra: serde_json::Value) -> DqnAgent<Candle> {
    let mut spec = serde_json::json!({
        "type": "dqn",
        "discount": 0.9,
        "double_q": false,
        "huber_loss": false,
        "memory_spec": {"type": "replay", "capacity": 64},
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh", "scope": "hidden"}],
        "update_spec": {"update_interval": 4, "batch_size": 2, "sync_interval": 16},
        "optimizer_spec": {"type": "sgd", "learning_rate": 0.001}
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    let e = env();
    DqnAgent::new(DqnConfig::parse(&spec).unwrap(), e.state_space(), e.action_space(), 4).unwrap()
}

#[test]
fn dqn_bootstraps_from_the_best_valid_next_action() {
    let mut a = dqn(serde_json::json!({}));
    let obs = |k: f32| vec![k, 1.0 - k, 0.5, 0.25];
    // Raw Q-values: every action valid.
    let q = a
        .q_values(&[states(1, obs(0.0), vec![1; 4]), states(1, obs(1.0), vec![1; 4])])
        .unwrap();
    let (q_s, q_next) = (&q[0], &q[1]);
    // The next state's mask leaves out its best action, so masking changes the target.
    let best = (0..4).max_by(|&i, &j| q_next[i].total_cmp(&q_next[j])).unwrap();
    let mut next_mask = vec![1u8; 4];
    next_mask[best] = 0;
    let masked_max = (0..4)
        .filter(|&i| i != best)
        .map(|i| q_next[i] as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    // Item 0: action 2, reward 0.5, not terminal. Item 1: action 1, reward 1, terminal, and
    // its next state allows nothing (terminal masks may be all zeros): no bootstrap, no NaN.
    let td0 = 0.5 + 0.9 * masked_max - q_s[2] as f64;
    let td1 = 1.0 - q_s[1] as f64;
    let want = (0.5 * td0 * td0 + 0.5 * td1 * td1) / 2.0;
    let batch = Value::Dict(BTreeMap::from([
        (
            "states".to_string(),
            states(2, [obs(0.0), obs(0.0)].concat(), vec![1; 8]),
        ),
        (
            "actions".to_string(),
            Value::Int32(Array::new([2], vec![2, 1]).unwrap()),
        ),
        (
            "rewards".to_string(),
            Value::Float32(Array::new([2], vec![0.5, 1.0]).unwrap()),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([2], vec![false, true]).unwrap()),
        ),
        (
            "next_states".to_string(),
            states(2, [obs(1.0), obs(1.0)].concat(), [next_mask, vec![0; 4]].concat()),
        ),
    ]));
    let got = a.update_from_batch(&batch, 0.0).unwrap();
    assert!(
        (got - want).abs() < 1e-5 * want.max(1.0),
        "loss {got}, by hand {want} (q {q:?})"
    );
    // Acting: the greedy action is the best valid one, and the actor's Q-values are masked.
    let masked = a.q_values(&[states(1, obs(1.0), [0, 1, 0, 1].to_vec())]).unwrap();
    assert!(
        masked[0][0] <= -1e8 && masked[0][2] <= -1e8 && masked[0][1] > -1e8,
        "{masked:?}"
    );
    for explore in [false, true] {
        for _ in 0..20 {
            let acted = a
                .get_actions(&[states(1, obs(1.0), vec![0, 0, 1, 0])], explore, 0.0)
                .unwrap();
            assert_eq!(acted[0], Value::i32(2), "explore {explore}");
        }
    }
    // A state the agent must act in with no valid action is an error naming the mask.
    let err = a
        .get_actions(&[states(1, obs(1.0), vec![0; 4])], false, 0.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("action_mask") && err.contains("allows no action"), "{err}");
}

#[test]
fn ppo_log_likelihoods_are_a_distribution_over_the_valid_actions() {
    let spec = serde_json::json!({
        "type": "ppo",
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh", "scope": "hidden"}],
        "update_spec": {"update_interval": 16, "batch_size": 16, "num_iterations": 1, "sample_size": 8}
    });
    let e = env();
    let mut a = PgAgent::<Candle>::new(PgConfig::parse(&spec).unwrap(), e.state_space(), e.action_space(), 2).unwrap();
    let mask = vec![1, 0, 1, 1];
    let s: Vec<Value> = (0..4)
        .map(|_| states(1, vec![1.0, 0.0, 1.0, 1.0], mask.clone()))
        .collect();
    let actions: Vec<Value> = (0..4).map(Value::i32).collect();
    let (log_probs, _) = a.evaluate(&s, &actions).unwrap();
    let valid: f64 = [0, 2, 3].iter().map(|&i| log_probs[i].exp()).sum();
    assert!((valid - 1.0).abs() < 1e-5, "{log_probs:?}");
    assert!(log_probs[1] < -1e6, "{log_probs:?}");
    // Sampled actions are valid ones.
    for _ in 0..50 {
        let acted = a.get_actions(&s[..1], true, 0.0).unwrap();
        assert_ne!(acted[0], Value::i32(1));
    }
}

#[test]
fn masks_that_cannot_be_used_are_refused_by_name() {
    // A mask of 3 elements for 4 actions.
    let states = Space::from_json_str(
        r#"{"observation": {"type": "float-box", "shape": [2]},
            "action_mask": {"type": "int-box", "low": 0, "high": 2, "dtype": "uint8", "shape": [3]}}"#,
    )
    .unwrap();
    let actions = Space::from_json_str(r#"{"type": "int-box", "high": 4}"#).unwrap();
    let env = RandomEnv::new(states.clone(), actions.clone(), 0.1, 0);
    let spec = serde_json::json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8, "scope": "hidden"}],
    });
    let err = DqnAgent::<Candle>::new(
        DqnConfig::parse(&spec).unwrap(),
        env.state_space(),
        env.action_space(),
        0,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("states/action_mask") && err.contains("4 elements") && err.contains("[3]"),
        "{err}"
    );
    // SAC takes no masks, and says which agents do.
    let text = std::fs::read_to_string(format!("{}/../configs/sac-cartpole.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let spec: serde_json::Value = serde_json::from_str(&text).unwrap();
    let e = MaskedChoiceEnv::new(0);
    let err = agents::build_agent::<Candle>(&spec, e.state_space(), e.action_space(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("states/action_mask") && err.contains("SAC") && err.contains("PPO"),
        "{err}"
    );
}

#[test]
fn masks_reach_the_random_agent_and_are_refused_where_they_cannot_be_kept() {
    let e = env();
    let build = |spec: serde_json::Value| agents::build_agent::<Candle>(&spec, e.state_space(), e.action_space(), 1);
    // The random agent draws uniformly among the valid actions: here 1 and 3.
    let mut random = build(serde_json::json!({"type": "random"})).unwrap();
    let state = states(1, vec![0.0, 1.0, 0.0, 1.0], vec![0, 1, 0, 1]);
    let mut counts = [0usize; 4];
    for _ in 0..400 {
        let Value::Int32(a) = &random.get_actions(std::slice::from_ref(&state), true, 0.0).unwrap()[0] else {
            panic!("integer actions")
        };
        counts[a.data()[0] as usize] += 1;
    }
    assert_eq!(counts[0] + counts[2], 0, "{counts:?}");
    // 200 expected each: four standard deviations (10) either side.
    assert!((160..=240).contains(&counts[1]), "{counts:?}");
    // Frame stacks run per copy over the whole observation: masked states are refused there.
    let stacked = serde_json::json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8, "scope": "hidden"}],
        "preprocessing_spec": [{"type": "sequence", "sequence_length": 2, "add_rank": false}],
    });
    let err = build(stacked).err().unwrap().to_string();
    assert!(
        err.contains("config.preprocessing_spec") && err.contains("action mask"),
        "{err}"
    );
    // A key the config names must be there.
    let named = serde_json::json!({
        "type": "ppo",
        "action_mask_key": "legal_moves",
        "network_spec": [{"type": "dense", "units": 8, "scope": "hidden"}],
    });
    let err = build(named).err().unwrap().to_string();
    assert!(
        err.contains("config.action_mask_key") && err.contains("legal_moves"),
        "{err}"
    );
}
