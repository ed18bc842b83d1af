//! The SAC agent: bounded actions, Polyak-averaged targets, weights and exact checkpoint
//! resume.

use crate::common;

use agents::{Agent, SacAgent, SacConfig};
use backend_candle::Candle;
use common::act_and_observe;
use rlgraph_core::spaces::{IntBox, Space, Value};
use rlgraph_envs::{Env, Pendulum};

fn spec(tau: f64) -> serde_json::Value {
    serde_json::json!({
        "type": "sac",
        "target_entropy": -1.0,
        "memory_spec": {"type": "replay", "capacity": 500},
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "value_function_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "update_spec": {"update_interval": 1, "sync_interval": 1, "sync_tau": tau, "batch_size": 16},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001}
    })
}

fn agent(tau: f64, seed: u64) -> SacAgent<Candle> {
    let env = Pendulum::new(0);
    SacAgent::new(
        SacConfig::parse(&spec(tau)).unwrap(),
        env.state_space(),
        env.action_space(),
        seed,
    )
    .unwrap()
}

/// Plays `steps` steps from a reset with `seed`, updating after each.
fn run(agent: &mut SacAgent<Candle>, seed: u64, steps: usize) -> (Vec<f64>, Vec<f64>) {
    common::pendulum_steps(agent, seed, steps, true)
}

fn floats(v: &rlgraph_core::HostTensor) -> Vec<f64> {
    v.data.to_f64()
}

#[test]
fn actions_stay_in_the_bounds() {
    let mut a = agent(0.01, 0);
    let env = Pendulum::new(0);
    let states: Vec<Value> = (0..200).map(|i| Pendulum::new(i).reset(Some(i)).unwrap()).collect();
    for action in a.get_actions(&states, true, 0.0).unwrap() {
        assert!(env.action_space().contains(&action), "{action:?}");
    }
}

#[test]
fn targets_move_by_tau_toward_the_critics() {
    let tau = 0.25;
    let mut a = agent(tau, 1);
    let before = a.get_weights().unwrap();
    let target_keys: Vec<String> = before
        .keys()
        .filter(|k| k.contains("target-critics"))
        .cloned()
        .collect();
    assert!(!target_keys.is_empty(), "{:?}", before.keys().collect::<Vec<_>>());
    // The targets start equal to the critics.
    for k in &target_keys {
        assert_eq!(before[k], before[&k.replace("target-critics", "critics")], "{k}");
    }
    // 16 steps fill the batch; the 16th update is the first, then one sync.
    let (_, losses) = run(&mut a, 0, 16);
    assert_eq!(losses.len(), 1);
    let after = a.get_weights().unwrap();
    for k in &target_keys {
        let critic = k.replace("target-critics", "critics");
        let want: Vec<f64> = floats(&before[k])
            .iter()
            .zip(floats(&after[&critic]))
            .map(|(old, new)| tau * new + (1.0 - tau) * old)
            .collect();
        for (g, w) in floats(&after[k]).iter().zip(&want) {
            assert!((g - w).abs() < 1e-6, "{k}: {g} vs {w}");
        }
    }
    // The critics did learn.
    let k = target_keys[0].replace("target-critics", "critics");
    assert_ne!(before[&k], after[&k]);
}

#[test]
fn a_restored_checkpoint_continues_exactly_and_weights_round_trip() {
    let dir = std::env::temp_dir().join(format!("rlgraph-sac-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("checkpoint.safetensors");
    let mut a = agent(0.01, 7);
    run(&mut a, 0, 40);
    a.save_checkpoint(&file).unwrap();
    let continued = run(&mut a, 1, 30);
    let mut b = agent(0.01, 99);
    b.restore_checkpoint(&file).unwrap();
    let resumed = run(&mut b, 1, 30);
    assert_eq!(continued, resumed);
    assert_eq!(a.get_weights().unwrap(), b.get_weights().unwrap());
    assert_eq!((a.timesteps(), a.updates()), (b.timesteps(), b.updates()));
    let mut c = agent(0.01, 3);
    c.set_weights(&a.get_weights().unwrap()).unwrap();
    assert_eq!(c.get_weights().unwrap(), a.get_weights().unwrap());
    assert!((a.alpha().unwrap() - 1.0).abs() > 1e-6, "alpha was tuned");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn without_a_target_entropy_alpha_stays_fixed_as_in_rlgraph() {
    // RLgraph's SAC default is target_entropy=None: no alpha loss, no alpha optimizer.
    for target in [serde_json::Value::Null, serde_json::json!("absent")] {
        let mut spec = spec(0.01);
        let obj = spec.as_object_mut().unwrap();
        obj.insert("initial_alpha".into(), serde_json::json!(0.5));
        if target.is_null() {
            obj.insert("target_entropy".into(), target);
        } else {
            obj.remove("target_entropy");
        }
        let config = SacConfig::parse(&spec).unwrap();
        assert_eq!(config.target_entropy, None);
        let env = Pendulum::new(0);
        let mut a = SacAgent::<Candle>::new(config, env.state_space(), env.action_space(), 1).unwrap();
        run(&mut a, 0, 40);
        assert!(
            (a.alpha().unwrap() - 0.5).abs() < 1e-6,
            "alpha moved to {}",
            a.alpha().unwrap()
        );
    }
}

#[test]
fn unsupported_settings_are_named() {
    let env = Pendulum::new(0);
    let dict = Space::dict([("a", Space::from(IntBox::new(3).unwrap()))]).unwrap();
    let err = SacAgent::<Candle>::new(SacConfig::parse(&spec(0.1)).unwrap(), env.state_space(), &dict, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("action_space"), "{err}");
    let mut s = spec(0.1);
    s["double_q"] = false.into();
    assert!(SacConfig::parse(&s)
        .unwrap_err()
        .to_string()
        .contains("config.double_q"));
    let mut s = spec(0.1);
    s["memory_spec"]["type"] = "prioritized_replay".into();
    assert!(SacConfig::parse(&s)
        .unwrap_err()
        .to_string()
        .contains("config.memory_spec.type"));
    let mut s = spec(0.1);
    s["update_spec"]["sync_tau"] = 1.5.into();
    assert!(SacConfig::parse(&s)
        .unwrap_err()
        .to_string()
        .contains("config.update_spec.sync_tau"));
}

#[test]
fn discrete_actions_act_through_a_gumbel_softmax_and_learn() {
    let env = rlgraph_envs::CartPole::new(0);
    let mut a = SacAgent::<Candle>::new(
        SacConfig::parse(&spec(0.1)).unwrap(),
        env.state_space(),
        env.action_space(),
        4,
    )
    .unwrap();
    let mut env = rlgraph_envs::CartPole::new(0);
    let mut state = env.reset(Some(0)).unwrap();
    let mut losses = vec![];
    let mut counts = [0usize; 2];
    for _ in 0..64 {
        let (action, _) = act_and_observe(&mut a, &mut env, &mut state, 0);
        assert!(env.action_space().contains(&action), "{action:?}");
        if let Value::Int32(x) = &action {
            counts[x.data()[0] as usize] += 1;
        }
        losses.extend(a.update(0.5).unwrap());
    }
    // Both actions are tried, and the updates (from the 16th step on) give finite losses.
    assert!(counts[0] > 0 && counts[1] > 0, "{counts:?}");
    assert_eq!(losses.len(), 49);
    assert!(losses.iter().all(|l| l.is_finite()));
}
