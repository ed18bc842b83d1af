//! PPO on 1,024 device-resident CartPoles (`configs/ppo-cartpole-tensor.json`) reaches a mean
//! return of 475 over the last 100 finished episodes, with observations that never leave the
//! device. Candle on one CPU thread is deterministic for a seed, so the run (seed 0: solved
//! after 36 rollouts, about 590,000 frames) is the same on every machine; the 3M-frame
//! budget only bounds a regression.

use agents::{PgAgent, PgConfig};
use backend_candle::Candle;
use executors::{DeviceWorker, OnDivergence, Worker};
use rlgraph_core::Device;

fn config() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/ppo-cartpole-tensor.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("config")).expect("JSON")
}

/// A worker on `copies` tensor CartPoles for the agent `json` describes, made through the
/// registry as `rlgraph train --tensor-envs` makes it.
fn registry_worker(json: &serde_json::Value, copies: usize) -> DeviceWorker<Candle> {
    let algorithm = agents::tensor_algorithm::<Candle>(json)
        .expect("config")
        .expect("trains on device");
    let envs = rlgraph_tensor_envs::make::<Candle>("CartPole-v1", copies, 0, algorithm.device()).expect("envs");
    let agent = algorithm
        .agent(envs.state_space(), envs.action_space(), 0)
        .expect("agent");
    DeviceWorker::new(agent, envs)
}

#[test]
fn ppo_solves_tensor_cartpole() {
    let mut worker = registry_worker(&config(), 1024).with_target_return(475.0);
    assert_eq!(worker.horizon(), 16, "16,384 frames per rollout over 1,024 copies");
    let stats = worker.execute_timesteps(3_000_000, |_| {}).expect("trains");
    assert!(
        stats.solved_at_timestep.is_some(),
        "not solved in {} steps: last-10 mean {}",
        stats.timesteps_executed,
        stats.mean_episode_reward_last_10_episodes
    );
    // Each episode is counted at the end of the vector step it ended in, in that order: after
    // at least as many vector steps as it was long (its return, on CartPole).
    let episodes = &worker.tally().episodes;
    let ends: Vec<u64> = episodes.ends().iter().map(|e| e.expect("known")).collect();
    assert!(ends.windows(2).all(|w| w[0] <= w[1]));
    for (at, ret) in ends.iter().zip(episodes.returns()) {
        assert!(
            at % 1024 == 0 && (at / 1024) as f64 >= *ret,
            "ended at {at} with return {ret}"
        );
    }
}

#[test]
fn the_registry_offers_ppo_alone_and_refuses_what_it_cannot_train_by_key() {
    let refused = |json: &serde_json::Value| match agents::tensor_algorithm::<Candle>(json) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{json} was not refused"),
    };
    let mut ac = config();
    ac["type"] = "actor_critic".into();
    for ppo_only in ["clip_ratio", "standardize_advantages"] {
        ac.as_object_mut().expect("object").remove(ppo_only);
    }
    // Actor-critic offers no device training: the layout finds nothing, and says so by type.
    assert!(matches!(agents::tensor_algorithm::<Candle>(&ac), Ok(None)));
    // Of the shipped algorithms, PPO alone (other tests of this binary register their own).
    let offering = agents::types_offering::<Candle>(agents::Layout::Tensors);
    assert!(
        offering[0] == "ppo" && !offering.contains(&"actor_critic".to_string()),
        "{offering:?}"
    );
    let mut recurrent = config();
    recurrent["network_spec"] = serde_json::json!([
        {"type": "lstm", "units": 8, "scope": "lstm"},
        {"type": "dense", "units": 16, "activation": "relu", "scope": "hidden"}
    ]);
    let e = refused(&recurrent);
    assert!(e.contains("config.network_spec") && e.contains("memoryless"), "{e}");
    let dqn: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/dqn-cartpole.json")).expect("config"),
    )
    .expect("JSON");
    assert!(agents::tensor_algorithm::<Candle>(&dqn)
        .expect("a good config")
        .is_none());
}

#[test]
fn actor_critic_is_refused_by_name() {
    let mut json = config();
    json["type"] = "actor_critic".into();
    for ppo_only in ["clip_ratio", "standardize_advantages"] {
        json.as_object_mut().expect("object").remove(ppo_only);
    }
    let envs = rlgraph_tensor_envs::make::<Candle>("CartPole-v1", 4, 0, Device::Cpu).expect("envs");
    let agent = PgAgent::<Candle>::new(
        PgConfig::parse(&json).expect("config"),
        envs.state_space(),
        envs.action_space(),
        0,
    )
    .expect("agent");
    let e = DeviceWorker::new(Box::new(agent), envs)
        .execute_timesteps(100, |_| {})
        .expect_err("refused")
        .to_string();
    assert!(e.contains("actor-critic"), "{e}");
}

/// PPO on 8 tensor CartPoles with Adam at learning rate 1e300, one 64-frame rollout per
/// update, learned in 4 minibatches.
fn diverging_worker(on_divergence: OnDivergence) -> DeviceWorker<Candle> {
    let mut json = config();
    json["optimizer_spec"] = serde_json::json!({"type": "adam", "learning_rate": 1e300});
    json["memory_spec"]["capacity"] = 64.into();
    json["update_spec"] = serde_json::json!({"update_mode": "time_steps", "do_updates": true,
        "update_interval": 64, "batch_size": 64, "num_iterations": 4, "sample_size": 16});
    let envs = rlgraph_tensor_envs::make::<Candle>("CartPole-v1", 8, 0, Device::Cpu).expect("envs");
    let agent = PgAgent::<Candle>::new(
        PgConfig::parse(&json).expect("config"),
        envs.state_space(),
        envs.action_space(),
        0,
    )
    .expect("agent");
    DeviceWorker::new(Box::new(agent), envs).with_divergence(on_divergence)
}

#[test]
fn a_diverging_update_stops_naming_the_step_unless_told_to_go_on() {
    // Adam's first step moves every weight by the learning rate, 1e300, which is infinite in
    // float32: the first update's later minibatches see infinite weights, so that update's
    // loss (at step 64, after the first rollout) is not finite.
    let e = diverging_worker(OnDivergence::Stop)
        .execute_timesteps(640, |_| {})
        .expect_err("stops")
        .to_string();
    assert!(e.contains("training diverged at step 64:"), "{e}");
    assert!(e.contains("variable '"), "names the variable: {e}");
    let stats = diverging_worker(OnDivergence::Warn)
        .execute_timesteps(640, |_| {})
        .expect("goes on");
    assert_eq!(stats.diverged_at_timestep, Some(64));
    assert_eq!(stats.timesteps_executed, 640);
    assert_eq!(stats.to_json()["diverged_at_timestep"], 64);
}

#[test]
fn an_algorithm_registered_from_outside_trains_on_tensor_copies_once_it_says_how() {
    // A user's algorithm, here PPO's graphs under a name of the user's, its settings the
    // config's other keys.
    let kind = "outside-ppo";
    let as_ppo = |settings: serde_json::Value| {
        let mut json = settings;
        json["type"] = "ppo".into();
        json
    };
    agents::register_algorithm::<Candle, serde_json::Value>(kind, move |settings, states, actions, seed| {
        let config = PgConfig::parse(&as_ppo(settings))?;
        Ok(Box::new(PgAgent::<Candle>::new(config, states, actions, seed)?))
    })
    .expect("registered");
    let mut json = config();
    json["type"] = kind.into();
    assert!(agents::tensor_algorithm::<Candle>(&json)
        .expect("a good config")
        .is_none());
    agents::register_tensor_algorithm::<Candle, serde_json::Value>(kind, move |settings| {
        Ok(Box::new(PgConfig::parse(&as_ppo(settings))?))
    })
    .expect("registered");
    let stats = registry_worker(&json, 8)
        .execute_timesteps(4096, |_| {})
        .expect("trains");
    assert!(stats.updates > 0 && stats.timesteps_executed >= 4096, "{stats:?}");
}
