//! The DQN agent's API: weights round-trip exactly, and a checkpointed run continues exactly
//! as the uninterrupted one.

use crate::common;

use agents::{Agent, DqnAgent, DqnConfig, Transition};
use backend_candle::Candle;
use common::act_and_observe;
use rlgraph_core::spaces::{FloatBox, IntBox, Space};
use rlgraph_envs::{CartPole, Env};

fn config(prioritized: bool) -> DqnConfig {
    let memory = if prioritized {
        serde_json::json!({"type": "prioritized_replay", "capacity": 500, "alpha": 0.6, "beta": 0.4})
    } else {
        serde_json::json!({"type": "replay", "capacity": 500})
    };
    DqnConfig::parse(&serde_json::json!({
        "type": "dqn",
        "memory_spec": memory,
        "network_spec": [{"type": "dense", "units": 16, "activation": "tanh", "scope": "hidden"}],
        "policy_spec": {"type": "dueling-policy", "units_state_value_stream": 8},
        "observe_spec": {"n_step": 3},
        "update_spec": {"update_interval": 4, "batch_size": 8, "sync_interval": 16},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.01}
    }))
    .unwrap()
}

fn agent(prioritized: bool, seed: u64) -> DqnAgent<Candle> {
    let env = CartPole::new(0);
    DqnAgent::new(config(prioritized), env.state_space(), env.action_space(), seed).unwrap()
}

/// Runs episodes `first..first + n`, each reset with its own seed, updating every 4 steps.
fn run_episodes(agent: &mut DqnAgent<Candle>, first: u64, n: u64) -> Vec<f64> {
    let mut env = CartPole::new(0);
    let mut returns = vec![];
    for e in first..first + n {
        let mut state = env.reset(Some(e)).unwrap();
        let mut total = 0.0;
        loop {
            let (_, step) = act_and_observe(agent, &mut env, &mut state, 0);
            total += step.reward;
            if agent.timesteps().is_multiple_of(4) {
                agent.update(0.5).unwrap();
            }
            if step.terminated || step.truncated {
                break;
            }
        }
        returns.push(total);
    }
    returns
}

#[test]
fn weights_round_trip_exactly() {
    let mut a = agent(false, 7);
    run_episodes(&mut a, 0, 3);
    let mut b = agent(false, 7);
    let weights = a.get_weights().unwrap();
    assert_ne!(b.get_weights().unwrap(), weights);
    b.set_weights(&weights).unwrap();
    assert_eq!(b.get_weights().unwrap(), weights);
}

#[test]
fn a_restored_checkpoint_continues_exactly_as_the_uninterrupted_run() {
    for prioritized in [false, true] {
        let dir = std::env::temp_dir().join(format!("rlgraph-dqn-resume-{prioritized}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("checkpoint.safetensors");
        let mut a = agent(prioritized, 7);
        run_episodes(&mut a, 0, 5);
        a.save_checkpoint(&file).unwrap();
        let continued = run_episodes(&mut a, 5, 5);
        // A fresh agent with another seed, restored, plays and learns the same.
        let mut b = agent(prioritized, 99);
        b.restore_checkpoint(&file).unwrap();
        let resumed = run_episodes(&mut b, 5, 5);
        assert_eq!(continued, resumed, "prioritized: {prioritized}");
        assert_eq!(a.get_weights().unwrap(), b.get_weights().unwrap());
        assert_eq!(
            (a.timesteps(), a.updates(), a.memory_size()),
            (b.timesteps(), b.updates(), b.memory_size())
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn bad_configs_name_the_key() {
    let dense = serde_json::json!([{"type": "dense", "units": 2}]);
    let cases = [
        (
            serde_json::json!({"type": "dqn", "network_spec": dense, "bogus": 1}),
            "config.bogus",
        ),
        (serde_json::json!({"type": "ppo", "network_spec": dense}), "config.type"),
        (
            serde_json::json!({"type": "apex", "network_spec": dense, "memory_spec": {"type": "replay"}}),
            "config.memory_spec.type",
        ),
        (
            serde_json::json!({"type": "dqn", "network_spec": dense, "memory_spec": {"type": "ring"}}),
            "config.memory_spec.type",
        ),
        (
            serde_json::json!({"type": "dqn", "network_spec": dense, "update_spec": {"batch_sise": 2}}),
            "config.update_spec.batch_sise",
        ),
        (
            serde_json::json!({"type": "dqn", "network_spec": dense, "execution_spec": {"sesion_config": {}}}),
            "config.execution_spec.sesion_config",
        ),
        (serde_json::json!({"type": "dqn"}), "config.network_spec"),
        (
            serde_json::json!({"type": "dqn", "network_spec": dense, "container_actions_loss": "sum"}),
            "config.container_actions_loss",
        ),
    ];
    for (spec, key) in cases {
        let err = DqnConfig::parse(&spec).err().unwrap().to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
    // A continuous action in a container is refused at its key.
    let state = Space::from(FloatBox::new([2]));
    let actions = Space::dict([
        ("a", Space::from(IntBox::new(2).unwrap())),
        ("b", Space::from(FloatBox::new([1]))),
    ])
    .unwrap();
    let err = DqnAgent::<Candle>::new(config(false), &state, &actions, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("action_space/b") && err.contains("bounded IntBox"),
        "{err}"
    );
}

#[test]
fn ape_x_inserts_records_at_their_own_td_error() {
    // Ape-X (alpha 1 so the tree holds raw priorities): the actor gives each record the
    // priority |r + gamma max_a' Q(s', a') - Q(s, a)| + 1e-6 under its own Q-values, as the
    // Ape-X paper's actors do.
    let spec = serde_json::json!({
        "type": "apex",
        "discount": 0.9,
        "double_q": false,
        "memory_spec": {"type": "prioritized_replay", "capacity": 8, "alpha": 1.0, "beta": 0.4},
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh", "scope": "hidden"}],
        "update_spec": {"update_interval": 4, "batch_size": 4, "sync_interval": 16},
    });
    let env = CartPole::new(0);
    let mut a = DqnAgent::<Candle>::new(
        DqnConfig::parse(&spec).unwrap(),
        env.state_space(),
        env.action_space(),
        3,
    )
    .unwrap();
    let mut env = CartPole::new(0);
    let mut state = env.reset(Some(0)).unwrap();
    let mut expected = vec![];
    for _ in 0..3 {
        let action = a
            .get_actions(std::slice::from_ref(&state), true, 0.0)
            .unwrap()
            .remove(0);
        let step = env.step(&action).unwrap();
        let q = a.q_values(&[state.clone(), step.observation.clone()]).unwrap();
        let act = match &action {
            rlgraph_core::spaces::Value::Int32(x) => x.data()[0] as usize,
            other => panic!("{other:?}"),
        };
        let next_max = q[1].iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let td = step.reward + 0.9 * next_max * if step.terminated { 0.0 } else { 1.0 } - q[0][act] as f64;
        expected.push(td.abs() + 1e-6);
        let t = Transition {
            state: state.clone(),
            action,
            reward: step.reward,
            terminated: step.terminated,
            truncated: step.truncated,
            next_state: step.observation.clone(),
        };
        a.observe(0, t).unwrap();
        state = step.observation;
    }
    let got = a.priorities().unwrap();
    assert_eq!(got.len(), 3);
    for (g, e) in got.iter().zip(&expected) {
        assert!((g - e).abs() < 1e-4 * e.max(1.0), "{got:?} vs {expected:?}");
    }
    // Not all at one value, as max-priority insertion would give.
    assert!(got.iter().any(|p| (p - got[0]).abs() > 1e-9), "{got:?}");
}

#[test]
fn external_batches_models_and_resets() {
    use rlgraph_core::spaces::Array;
    let mut a = agent(true, 5);
    let before = a.get_weights().unwrap();
    // Two hand-made transitions of CartPole.
    let floats =
        |shape: &[usize], v: Vec<f32>| rlgraph_core::spaces::Value::Float32(Array::new(shape.to_vec(), v).unwrap());
    let batch = rlgraph_core::spaces::Value::Dict(
        [
            (
                "states".to_string(),
                floats(&[2, 4], vec![0.01, 0.0, 0.02, 0.0, 0.0, 0.1, 0.0, -0.1]),
            ),
            (
                "actions".to_string(),
                rlgraph_core::spaces::Value::Int32(Array::new([2], vec![0, 1]).unwrap()),
            ),
            ("rewards".to_string(), floats(&[2], vec![1.0, 1.0])),
            (
                "terminals".to_string(),
                rlgraph_core::spaces::Value::Bool(Array::new([2], vec![false, true]).unwrap()),
            ),
            ("next_states".to_string(), floats(&[2, 4], vec![0.0; 8])),
        ]
        .into(),
    );
    let loss = a.update_from_batch(&batch, 0.5).unwrap();
    assert!(loss.is_finite() && a.updates() == 1);
    assert_ne!(a.get_weights().unwrap(), before);
    // A batch without next states names the missing key.
    let mut partial = batch.clone();
    if let rlgraph_core::spaces::Value::Dict(d) = &mut partial {
        d.remove("next_states");
    }
    let err = a.update_from_batch(&partial, 0.5).unwrap_err().to_string();
    assert!(err.contains("next_states"), "{err}");
    // export_model / import_model round-trip through a file.
    let dir = std::env::temp_dir().join(format!("rlgraph-dqn-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("model.safetensors");
    Agent::export_model(&a, &file).unwrap();
    let saved = a.get_weights().unwrap();
    a.update_from_batch(&batch, 0.5).unwrap();
    assert_ne!(a.get_weights().unwrap(), saved);
    Agent::import_model(&mut a, &file).unwrap();
    assert_eq!(a.get_weights().unwrap(), saved);
    std::fs::remove_dir_all(&dir).ok();
    // reset drops pending n-step transitions (n = 3): two steps, a reset, then a terminal
    // step leave one record, not three.
    let mut b = agent(false, 6);
    let mut env = CartPole::new(0);
    let s0 = env.reset(Some(0)).unwrap();
    let step = |terminated| Transition {
        state: s0.clone(),
        action: rlgraph_core::spaces::Value::i32(0),
        reward: 1.0,
        terminated,
        truncated: false,
        next_state: s0.clone(),
    };
    b.observe(0, step(false)).unwrap();
    b.observe(0, step(false)).unwrap();
    Agent::reset(&mut b).unwrap();
    b.observe(0, step(true)).unwrap();
    assert_eq!(b.memory_size(), 1);
}

#[test]
fn a_batch_larger_than_the_memory_is_drawn_with_replacement_once_it_is_full() {
    // RLgraph samples replay indices with replacement; its multi-GPU grid-world config asks
    // for batches of 48 from a memory of 32. Before the memory is full nothing is drawn.
    for memory in ["replay", "prioritized_replay"] {
        let config = DqnConfig::parse(&serde_json::json!({
            "type": "dqn",
            "memory_spec": {"type": memory, "capacity": 16},
            "network_spec": [{"type": "dense", "units": 4}],
            "update_spec": {"batch_size": 32}
        }))
        .unwrap();
        let mut env = CartPole::new(0);
        let mut a = DqnAgent::<Candle>::new(config, env.state_space(), env.action_space(), 0).unwrap();
        let mut state = env.reset(Some(0)).unwrap();
        for stored in 1..=16 {
            act_and_observe(&mut a, &mut env, &mut state, 0);
            let loss = a.update(0.5).unwrap();
            match stored {
                16 => assert!(loss.is_some_and(f64::is_finite), "{memory}: full, yet {loss:?}"),
                _ => assert_eq!(loss, None, "{memory}: {stored} stored"),
            }
        }
    }
}
