//! The policy-gradient agents' API (weights, checkpoints, configs), `build_agent`'s errors,
//! and the random agent (the RLgraph reference configs: `rlgraph_reference_configs.rs`).

use crate::common;

use agents::{build_agent, Agent, PgAgent, PgConfig, RandomAgent};
use backend_candle::Candle;
use common::act_and_observe;
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_envs::{CartPole, Env, Pendulum};

fn ppo_spec() -> serde_json::Value {
    serde_json::json!({
        "type": "ppo",
        "sample_episodes": false,
        "standardize_advantages": true,
        "clip_ratio": ["linear", 0.2, 0.1],
        "weight_entropy": 0.01,
        "memory_spec": {"type": "ring_buffer", "capacity": 64},
        "network_spec": [{"type": "dense", "units": 16, "activation": "tanh", "scope": "hidden"}],
        "value_function_spec": [{"type": "dense", "units": 16, "activation": "tanh", "scope": "vf-hidden"}],
        "update_spec": {"update_interval": 8, "batch_size": 32, "num_iterations": 3, "sample_size": 16},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.01}
    })
}

fn agent(spec: &serde_json::Value, seed: u64) -> PgAgent<Candle> {
    let env = CartPole::new(0);
    PgAgent::new(
        PgConfig::parse(spec).unwrap(),
        env.state_space(),
        env.action_space(),
        seed,
    )
    .unwrap()
}

/// Runs episodes `first..first + n` (each reset with its own seed), updating every 8 steps;
/// returns the episode returns and the losses.
fn run_episodes(agent: &mut dyn Agent, first: u64, n: u64) -> (Vec<f64>, Vec<f64>) {
    let mut env = CartPole::new(0);
    let (mut returns, mut losses) = (vec![], vec![]);
    let mut steps = 0u64;
    for e in first..first + n {
        let mut state = env.reset(Some(e)).unwrap();
        let mut total = 0.0;
        loop {
            let (_, step) = act_and_observe(agent, &mut env, &mut state, 0);
            total += step.reward;
            steps += 1;
            if steps.is_multiple_of(8) {
                losses.extend(agent.update(0.5).unwrap());
            }
            if step.terminated || step.truncated {
                break;
            }
        }
        returns.push(total);
    }
    (returns, losses)
}

#[test]
fn actions_lie_in_the_action_space_and_greedy_actions_repeat() {
    let mut a = agent(&ppo_spec(), 1);
    let env = CartPole::new(0);
    let states: Vec<Value> = (0..5).map(|i| CartPole::new(i).reset(Some(i)).unwrap()).collect();
    let actions = a.get_actions(&states, true, 0.0).unwrap();
    assert_eq!(actions.len(), 5);
    for action in &actions {
        assert!(env.action_space().contains(action), "{action:?}");
    }
    let greedy = a.get_actions(&states, false, 0.0).unwrap();
    assert_eq!(greedy, a.get_actions(&states, false, 0.0).unwrap());
}

#[test]
fn gaussian_policies_act_in_continuous_spaces() {
    let spec = serde_json::json!({
        "type": "actor_critic",
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}],
        "update_spec": {"batch_size": 4}
    });
    let env = Pendulum::new(0);
    let mut a = build_agent::<Candle>(&spec, env.state_space(), env.action_space(), 0).unwrap();
    let state = Pendulum::new(0).reset(Some(0)).unwrap();
    let action = a
        .get_actions(std::slice::from_ref(&state), true, 0.0)
        .unwrap()
        .remove(0);
    match &action {
        Value::Float32(x) => assert_eq!(x.shape(), &[1]),
        other => panic!("{other:?}"),
    }
    // Log-likelihoods of a multi-dimensional action are one number per step.
    let mut pg = PgAgent::<Candle>::new(
        PgConfig::parse(&spec).unwrap(),
        env.state_space(),
        env.action_space(),
        0,
    )
    .unwrap();
    let (log_probs, values) = pg.evaluate(&[state.clone(), state], &[action.clone(), action]).unwrap();
    assert_eq!((log_probs.len(), values.len()), (2, 2));
    assert_eq!(log_probs[0], log_probs[1]);
}

#[test]
fn weights_round_trip_exactly() {
    let mut a = agent(&ppo_spec(), 7);
    let (_, losses) = run_episodes(&mut a, 0, 3);
    assert!(!losses.is_empty(), "no update ran");
    let mut b = agent(&ppo_spec(), 8);
    let weights = a.get_weights().unwrap();
    assert_ne!(b.get_weights().unwrap(), weights);
    b.set_weights(&weights).unwrap();
    assert_eq!(b.get_weights().unwrap(), weights);
}

#[test]
fn a_restored_checkpoint_continues_exactly_as_the_uninterrupted_run() {
    let mut ac = ppo_spec();
    ac["type"] = "actor_critic".into();
    for k in ["clip_ratio", "standardize_advantages"] {
        ac.as_object_mut().unwrap().remove(k);
    }
    for (name, spec) in [("ppo", ppo_spec()), ("actor-critic", ac)] {
        let dir = std::env::temp_dir().join(format!("rlgraph-pg-resume-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("checkpoint.safetensors");
        let mut a = agent(&spec, 7);
        run_episodes(&mut a, 0, 4);
        a.save_checkpoint(&file).unwrap();
        let continued = run_episodes(&mut a, 4, 4);
        let mut b = agent(&spec, 99);
        b.restore_checkpoint(&file).unwrap();
        let resumed = run_episodes(&mut b, 4, 4);
        assert!(!continued.1.is_empty(), "{name}: no update after the checkpoint");
        assert_eq!(continued, resumed, "{name}");
        assert_eq!(a.get_weights().unwrap(), b.get_weights().unwrap(), "{name}");
        assert_eq!((a.timesteps(), a.updates()), (b.timesteps(), b.updates()), "{name}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn bad_configs_name_the_key() {
    let dense = serde_json::json!([{"type": "dense", "units": 2}]);
    let cases = [
        (
            serde_json::json!({"type": "ppo", "network_spec": dense, "bogus": 1}),
            "config.bogus",
        ),
        (serde_json::json!({"type": "ppo"}), "config.network_spec"),
        (
            serde_json::json!({"type": "ppo", "network_spec": dense, "memory_spec": {"type": "replay"}}),
            "config.memory_spec.type",
        ),
        (
            serde_json::json!({"type": "ppo", "network_spec": dense, "clip_ratio": "wide"}),
            "config.clip_ratio",
        ),
        (
            serde_json::json!({"type": "actor_critic", "network_spec": dense, "clip_ratio": 0.2}),
            "config.clip_ratio",
        ),
        (
            serde_json::json!({"type": "ppo", "network_spec": dense, "update_spec": {"batch_size": 2000}}),
            "config.update_spec.batch_size",
        ),
        (
            serde_json::json!({"type": "ppo", "network_spec": dense, "update_spec": {"update_mode": "weekly"}}),
            "config.update_spec.update_mode",
        ),
        (
            serde_json::json!({"type": "ppo", "network_spec": dense,
                "value_function_optimizer_spec": {"type": "sgd", "learning_rate": 0.1}}),
            "config.value_function_optimizer_spec",
        ),
    ];
    for (spec, key) in cases {
        let err = PgConfig::parse(&spec).err().unwrap().to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
    let env = CartPole::new(0);
    for (spec, key) in [
        (serde_json::json!({"network_spec": dense}), "config.type"),
        (
            serde_json::json!({"type": "dqfd", "network_spec": dense}),
            "config.type",
        ),
        (
            serde_json::json!({"type": "random", "network_spec": dense}),
            "config.network_spec",
        ),
    ] {
        let err = build_agent::<Candle>(&spec, env.state_space(), env.action_space(), 0)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
}

#[test]
fn the_random_agent_is_uniform_and_seeded() {
    let env = CartPole::new(0);
    let spec = serde_json::json!({"type": "random"});
    let mut a = RandomAgent::new(&spec, env.action_space(), 5).unwrap();
    let states = vec![Value::f32(0.0); 4000];
    let actions = a.get_actions(&states, true, 0.0).unwrap();
    let ones = actions
        .iter()
        .filter(|v| matches!(v, Value::Int32(x) if x.data()[0] == 1))
        .count();
    // Binomial(4000, 0.5): the standard deviation is 31.6; 5 sigma is 158.
    assert!((ones as i64 - 2000).abs() < 158, "{ones}");
    let mut b = RandomAgent::new(&spec, env.action_space(), 5).unwrap();
    assert_eq!(b.get_actions(&states, true, 0.0).unwrap(), actions);
    assert!(a.update(0.5).unwrap().is_none());
    let continuous = Space::from(FloatBox::bounded([2], -1.0, 1.0).unwrap());
    let mut c = RandomAgent::new(&spec, &continuous, 0).unwrap();
    for v in c.get_actions(&states[..50], true, 0.0).unwrap() {
        assert!(continuous.contains(&v), "{v:?}");
    }
}

#[test]
fn execution_spec_names_the_device() {
    let env = CartPole::new(0);
    let dense = serde_json::json!([{"type": "dense", "units": 4}]);
    let cpu = serde_json::json!({"type": "ppo", "network_spec": dense, "execution_spec": {"default_device": "/cpu"}});
    assert!(build_agent::<Candle>(&cpu, env.state_space(), env.action_space(), 0).is_ok());
    let bad = serde_json::json!({"type": "ppo", "network_spec": dense, "execution_spec": {"default_device": "tpu:0"}});
    let err = PgConfig::parse(&bad).unwrap_err().to_string();
    assert!(err.contains("config.execution_spec.default_device"), "{err}");
    // Candle here is CPU-only: a CUDA device fails the build with the place named.
    let gpu = serde_json::json!({"type": "ppo", "network_spec": dense, "execution_spec": {"default_device": "cuda:0"}});
    let err = build_agent::<Candle>(&gpu, env.state_space(), env.action_space(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("cuda:0") && err.contains("candle"), "{err}");
}

#[test]
fn ppo_acts_and_learns_in_a_dict_action_space() {
    // GridWorld with forward/turn/jump actions: a Dict of three IntBoxes.
    let spec = serde_json::json!({
        "type": "ppo",
        "preprocessing_spec": [{"type": "reshape", "flatten": true, "flatten_categories": 4}],
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}],
        "memory_spec": {"type": "ring_buffer", "capacity": 64},
        "update_spec": {"update_interval": 8, "batch_size": 16, "num_iterations": 2, "sample_size": 8}
    });
    let mut env = rlgraph_envs::make("GridWorld-2x2-ftj", 0).unwrap();
    let space = env.action_space().clone();
    assert!(space.is_container());
    let mut a = build_agent::<Candle>(&spec, env.state_space(), &space, 0).unwrap();
    let mut state = env.reset(Some(0)).unwrap();
    let mut losses = vec![];
    for step in 1..=64 {
        let (action, _) = act_and_observe(a.as_mut(), env.as_mut(), &mut state, 0);
        assert!(space.contains(&action), "{action:?}");
        if step % 8 == 0 {
            losses.extend(a.update(0.5).unwrap());
        }
    }
    assert!(losses.len() >= 6 && losses.iter().all(|l| l.is_finite()), "{losses:?}");
}

#[test]
fn an_external_batch_updates_ppo_and_bad_lengths_are_named() {
    use rlgraph_core::spaces::Array;
    let mut a = agent(&ppo_spec(), 2);
    let before = a.get_weights().unwrap();
    let states = Value::Float32(Array::new([3, 4], vec![0.01; 12]).unwrap());
    let batch = |rewards: Vec<f32>| {
        Value::Dict(
            [
                ("states".to_string(), states.clone()),
                (
                    "actions".to_string(),
                    Value::Int32(Array::new([3], vec![0, 1, 0]).unwrap()),
                ),
                (
                    "rewards".to_string(),
                    Value::Float32(Array::new([rewards.len()], rewards).unwrap()),
                ),
                (
                    "terminals".to_string(),
                    Value::Bool(Array::new([3], vec![false, false, true]).unwrap()),
                ),
            ]
            .into(),
        )
    };
    let loss = a.update_from_batch(&batch(vec![1.0, 1.0, 1.0]), 0.5).unwrap();
    assert!(loss.is_finite());
    assert_ne!(a.get_weights().unwrap(), before);
    let err = a
        .update_from_batch(&batch(vec![1.0, 1.0]), 0.5)
        .unwrap_err()
        .to_string();
    assert!(err.contains("update_from_batch") && err.contains("(2)"), "{err}");
    // The random agent has nothing to learn with.
    let env = CartPole::new(0);
    let mut r = RandomAgent::new(&serde_json::json!({"type": "random"}), env.action_space(), 0).unwrap();
    assert!(r.update_from_batch(&batch(vec![1.0; 3]), 0.5).is_err());
    // Stateful preprocessors cannot run inside the agent's graph: the plain constructor
    // refuses them, naming the spec; build_agent runs them per environment copy.
    let mut spec = ppo_spec();
    spec["preprocessing_spec"] = serde_json::json!([{"type": "sequence", "sequence_length": 4, "add_rank": false}]);
    let err = PgAgent::<Candle>::new(
        PgConfig::parse(&spec).unwrap(),
        env.state_space(),
        env.action_space(),
        0,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("config.preprocessing_spec[0].type") && err.contains("build_agent"),
        "{err}"
    );
    let mut stacked = build_agent::<Candle>(&spec, env.state_space(), env.action_space(), 0).unwrap();
    let s = Value::Float32(rlgraph_core::spaces::Array::new(vec![4], vec![0.01, 0.02, 0.03, 0.04]).unwrap());
    assert_eq!(stacked.get_actions(&[s], true, 0.0).unwrap().len(), 1);
}

fn floats(x: &[f32]) -> Value {
    Value::Float32(rlgraph_core::spaces::Array::new(vec![x.len()], x.to_vec()).unwrap())
}

#[test]
fn observations_beyond_the_float_bounds_are_acted_on_and_nan_is_refused() {
    // CartPole's box (±4.8, ±0.42 rad); 9.0 is far outside it, as LunarLander-v3's heights
    // leave its declared ±2.5.
    let env = CartPole::new(0);
    let mut agent = build_agent::<Candle>(&ppo_spec(), env.state_space(), env.action_space(), 0).unwrap();
    let outside = floats(&[9.0, 0.0, -3.0, 0.0]);
    let actions = agent.get_actions(&[outside], true, 0.0).unwrap();
    assert!(env.action_space().contains(&actions[0]), "{actions:?}");
    let nan = floats(&[f32::NAN, 0.0, 0.0, 0.0]);
    let err = agent.get_actions(&[nan], true, 0.0).unwrap_err().to_string();
    assert!(err.contains("NaN") && err.contains("states"), "{err}");
    // Integer ranges and shapes are still the environment's.
    let grid = Space::from_json_str(r#"{"type": "int-box", "low": 0, "high": 4}"#).unwrap();
    assert_eq!(agents::without_float_bounds(&grid), grid);
    let open = agents::without_float_bounds(env.state_space());
    assert!(open.contains(&floats(&[9.0, 0.0, -3.0, 1e30])));
    assert_eq!(open.shape(), env.state_space().shape());
}

/// SB3's continuous PPO in RLgraph's format: a plain Normal on Pendulum's bounded torque, a
/// state-independent log-std, and running observation and reward normalization.
fn sb3_style_ppo() -> serde_json::Value {
    let mut spec = ppo_spec();
    spec["policy_spec"] = serde_json::json!({"bounded_distribution_type": "normal", "log_std_init": -0.5});
    spec["normalize_spec"] = serde_json::json!({"clip_observations": 5.0});
    spec
}

/// Runs `steps` Pendulum steps from `state`, updating every 8; returns the actions and losses.
fn pendulum_steps(
    agent: &mut dyn Agent,
    env: &mut Pendulum,
    state: &mut Value,
    steps: usize,
) -> (Vec<Value>, Vec<f64>) {
    let (mut actions, mut losses) = (vec![], vec![]);
    for t in 1..=steps {
        actions.push(act_and_observe(agent, env, state, 0).0);
        if t % 8 == 0 {
            losses.extend(agent.update(0.5).unwrap());
        }
    }
    (actions, losses)
}

#[test]
fn continuous_ppo_learns_its_log_std_and_resumes_with_its_normalizer() {
    let spec = sb3_style_ppo();
    let space = Pendulum::new(0);
    let build = || build_agent::<Candle>(&spec, space.state_space(), space.action_space(), 3).unwrap();
    let log_std = |a: &dyn Agent| {
        let weights = a.get_weights().unwrap();
        let (_, t) = weights
            .iter()
            .find(|(k, _)| k.ends_with("log-std"))
            .expect("a log-std variable");
        match &t.data {
            rlgraph_core::HostData::F32(x) => x.clone(),
            other => panic!("{other:?}"),
        }
    };
    let mut a = build();
    assert_eq!(log_std(a.as_ref()), vec![-0.5], "it starts at log_std_init");
    let mut env = Pendulum::new(0);
    let mut state = env.reset(Some(0)).unwrap();
    let (actions, losses) = pendulum_steps(a.as_mut(), &mut env, &mut state, 64);
    assert!(!losses.is_empty() && losses.iter().all(|l| l.is_finite()), "{losses:?}");
    assert_ne!(log_std(a.as_ref()), vec![-0.5], "the optimizer trains the log-std");
    // A plain Normal's samples leave the bounds (Pendulum clips them, as ClipAction would).
    let outside = actions.iter().any(|v| !space.action_space().contains(v));
    assert!(
        outside || actions.len() < 64,
        "64 samples of std 0.6 around the mean all stayed in [-2, 2]?"
    );

    let dir = std::env::temp_dir().join(format!("rlgraph-normalized-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("checkpoint.safetensors");
    a.save_checkpoint(&file).unwrap();
    let mut env_b = Pendulum::new(0);
    env_b.restore_snapshot(&env.snapshot().unwrap()).unwrap();
    let mut state_b = state.clone();
    let continued = pendulum_steps(a.as_mut(), &mut env, &mut state, 32);
    let mut b = build();
    b.restore_checkpoint(&file).unwrap();
    let resumed = pendulum_steps(b.as_mut(), &mut env_b, &mut state_b, 32);
    assert_eq!(
        continued, resumed,
        "the normalizer's estimates and returns come back with the checkpoint"
    );
    std::fs::remove_dir_all(&dir).ok();

    // Layouts that build their roles without build_agent (GA3C, distributed) say they
    // cannot normalize, rather than drop the key.
    let err = PgConfig::parse(&spec).err().unwrap().to_string();
    assert!(
        err.contains("config.normalize_spec") && err.contains("build_agent"),
        "{err}"
    );
    let mut bad = sb3_style_ppo();
    bad["normalize_spec"] = serde_json::json!({"observations": true, "clip": 3});
    let err = build_agent::<Candle>(&bad, space.state_space(), space.action_space(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("config.normalize_spec") && err.contains("clip"), "{err}");
    let mut bad = sb3_style_ppo();
    bad["policy_spec"]["bounded_distribution_type"] = "gaussian".into();
    let err = build_agent::<Candle>(&bad, space.state_space(), space.action_space(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("config.policy_spec.bounded_distribution_type"), "{err}");
}

#[test]
fn a_normal_on_actions_bounded_per_element_learns_from_samples_beyond_the_bounds() {
    // Bounds that differ per element have no squashing: the policy is a plain Normal, whose
    // samples leave the box, and the learner takes them as sampled.
    let actions = Space::from(FloatBox::per_element([2], vec![-0.01, 0.0], vec![0.01, 0.02]).unwrap());
    let states = CartPole::new(0).state_space().clone();
    let mut agent = build_agent::<Candle>(&ppo_spec(), &states, &actions, 0).unwrap();
    let state = floats(&[0.1, 0.0, -0.1, 0.0]);
    let (mut outside, mut losses) = (0, vec![]);
    for t in 1..=64 {
        let action = agent
            .get_actions(std::slice::from_ref(&state), true, 0.5)
            .unwrap()
            .remove(0);
        outside += usize::from(!actions.contains(&action));
        let transition = agents::Transition {
            state: state.clone(),
            action,
            reward: 1.0,
            terminated: t % 16 == 0,
            truncated: false,
            next_state: state.clone(),
        };
        agent.observe(0, transition).unwrap();
        if t % 8 == 0 {
            losses.extend(agent.update(0.5).unwrap());
        }
    }
    assert!(outside > 32, "a unit Normal leaves a box 0.02 wide: {outside} of 64");
    assert!(!losses.is_empty() && losses.iter().all(|l| l.is_finite()), "{losses:?}");
}
