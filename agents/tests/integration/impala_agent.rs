//! The single-process IMPALA agent: rollouts through the FIFO queue, exact checkpoint resume
//! with rollouts in flight, and config errors that name the key.

use agents::{Agent, ImpalaAgent, ImpalaConfig, Transition};
use backend_candle::Candle;
use rlgraph_envs::{make, Env};

fn spec() -> serde_json::Value {
    serde_json::json!({
        "type": "single-impala",
        "worker_sample_size": 5,
        "fifo_queue_spec": {"capacity": 4},
        "preprocessing_spec": [{"type": "reshape", "flatten": true, "flatten_categories": 4}],
        "network_spec": {"layers": [{"type": "dense", "units": 8, "activation": "tanh"}]},
        "update_spec": {"batch_size": 2},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.01}
    })
}

fn agent(seed: u64) -> ImpalaAgent<Candle> {
    let env = make("GridWorld-2x2", 0).unwrap();
    ImpalaAgent::new(
        ImpalaConfig::parse(&spec()).unwrap(),
        env.state_space(),
        env.action_space(),
        seed,
    )
    .unwrap()
}

/// Steps two copies of the 2x2 grid world `steps` times from resets with `seed`, updating
/// after every step; returns the rewards and losses.
fn run(agent: &mut ImpalaAgent<Candle>, seed: u64, steps: usize) -> (Vec<f64>, Vec<f64>) {
    let mut envs: Vec<Box<dyn Env>> = (0..2).map(|i| make("GridWorld-2x2", i).unwrap()).collect();
    let mut states: Vec<_> = envs
        .iter_mut()
        .enumerate()
        .map(|(i, e)| e.reset(Some(seed + i as u64)).unwrap())
        .collect();
    let (mut rewards, mut losses) = (vec![], vec![]);
    for _ in 0..steps {
        let actions = agent.get_actions(&states, true, 0.5).unwrap();
        for (i, (env, action)) in envs.iter_mut().zip(actions).enumerate() {
            let step = env.step(&action).unwrap();
            rewards.push(step.reward);
            let next = if step.terminated || step.truncated {
                env.reset(None).unwrap()
            } else {
                step.observation.clone()
            };
            let t = Transition {
                state: std::mem::replace(&mut states[i], next),
                action,
                reward: step.reward,
                terminated: step.terminated,
                truncated: step.truncated,
                next_state: step.observation,
            };
            agent.observe(i, t).unwrap();
        }
        losses.extend(agent.update(0.5).unwrap());
    }
    (rewards, losses)
}

#[test]
fn rollouts_queue_up_and_the_learner_takes_them_in_batches() {
    let mut a = agent(1);
    // Four steps of two copies: no rollout of five steps is complete.
    run(&mut a, 0, 4);
    assert_eq!((a.queued_rollouts(), a.updates()), (0, 0));
    // The fifth step completes one rollout per copy: two, a full batch, learned at once.
    let mut b = agent(1);
    let (_, losses) = run(&mut b, 0, 5);
    assert_eq!((b.queued_rollouts(), b.updates(), losses.len()), (0, 1, 1));
    assert!(losses[0].is_finite());
}

#[test]
fn a_restored_checkpoint_continues_exactly_with_rollouts_in_flight() {
    let dir = std::env::temp_dir().join(format!("rlgraph-impala-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("checkpoint.safetensors");
    let mut a = agent(7);
    // 23 steps: four updates done and three steps of the next rollouts pending.
    run(&mut a, 0, 23);
    a.save_checkpoint(&file).unwrap();
    let continued = run(&mut a, 100, 20);
    let mut b = agent(99);
    b.restore_checkpoint(&file).unwrap();
    let resumed = run(&mut b, 100, 20);
    assert!(!continued.1.is_empty());
    assert_eq!(continued, resumed);
    assert_eq!(a.get_weights().unwrap(), b.get_weights().unwrap());
    assert_eq!((a.timesteps(), a.updates()), (b.timesteps(), b.updates()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unsupported_settings_are_named() {
    for (key, value) in [
        ("num_workers", serde_json::json!(4)),
        ("environment_spec", serde_json::json!({"type": "open-ai-gym"})),
        ("feed_previous_action_through_nn", serde_json::json!(true)),
        ("frameskip", serde_json::json!(4)),
    ] {
        let mut s = spec();
        s[key] = value;
        let err = ImpalaConfig::parse(&s).unwrap_err().to_string();
        assert!(err.contains(&format!("config.{key}")), "{key}: {err}");
    }
}

#[test]
fn reward_clipping_reads_rlgraphs_values() {
    // RLgraph's IMPALAAgent: reward_clipping "clamp_one" by default, None for none.
    use rlgraph_components::losses::RewardClipping;
    let with = |value: Option<serde_json::Value>| {
        let mut s = spec();
        if let Some(v) = value {
            s["reward_clipping"] = v;
        }
        ImpalaConfig::parse(&s).map(|c| c.reward_clipping)
    };
    assert_eq!(with(None).unwrap(), RewardClipping::ClampOne);
    assert_eq!(with(Some(serde_json::Value::Null)).unwrap(), RewardClipping::Off);
    assert_eq!(
        with(Some(serde_json::json!("soft_asymmetric"))).unwrap(),
        RewardClipping::SoftAsymmetric
    );
    let err = with(Some(serde_json::json!("clip"))).unwrap_err().to_string();
    assert!(err.contains("config.reward_clipping"), "{err}");
    // Soft asymmetric by its formula: 5 tanh(r / 5), and 0.3 times that below zero.
    assert!((RewardClipping::SoftAsymmetric.apply(5.0) - 5.0 * 1f64.tanh()).abs() < 1e-12);
    assert!((RewardClipping::SoftAsymmetric.apply(-5.0) + 1.5 * 1f64.tanh()).abs() < 1e-12);
    assert_eq!(RewardClipping::ClampOne.apply(-3.0), -1.0);
}

#[test]
fn a_step_of_a_copy_given_no_action_is_refused_and_changes_nothing() {
    let mut a = agent(0);
    let mut env = make("GridWorld-2x2", 0).unwrap();
    let state = env.reset(Some(0)).unwrap();
    let action = a
        .get_actions(std::slice::from_ref(&state), true, 0.5)
        .unwrap()
        .remove(0);
    let step = env.step(&action).unwrap();
    let t = Transition {
        state,
        action,
        reward: step.reward,
        terminated: step.terminated,
        truncated: step.truncated,
        next_state: step.observation,
    };
    // Only copy 0 was given an action.
    let e = a.observe(1, t.clone()).unwrap_err().to_string();
    assert!(e.contains("impala-agent/observe") && e.contains("copy 1"), "{e}");
    assert_eq!(a.timesteps(), 0, "nothing was counted");
    a.observe(0, t).unwrap();
    assert_eq!(a.timesteps(), 1);
}
