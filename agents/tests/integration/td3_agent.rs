//! TD3, the algorithm shipped on `register_algorithm` alone: built by its `type` like any
//! other, its warm-up and exploration noise, delayed policy updates with Polyak targets,
//! exact checkpoint resume, and its settings' errors.

use crate::common;

use agents::{build_agent, check_config, config_schema, Agent, Td3Agent, Td3Config};
use backend_candle::Candle;
use common::pendulum_steps as run;
use rlgraph_core::spaces::{IntBox, Space, Value};
use rlgraph_envs::{Env, Pendulum};
use serde_json::{json, Value as Json};

fn spec() -> Json {
    json!({
        "type": "td3",
        "memory_spec": {"type": "replay", "capacity": 2000},
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "value_function_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "update_spec": {"steps_before_update": 16, "batch_size": 16, "sync_tau": 0.25},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001}
    })
}

fn agent(spec: &Json, seed: u64) -> Td3Agent<Candle> {
    let env = Pendulum::new(0);
    Td3Agent::new(
        Td3Config::parse(spec).unwrap(),
        env.state_space(),
        env.action_space(),
        seed,
    )
    .unwrap()
}

/// The single action element of each action.
fn firsts(actions: Vec<Value>) -> Vec<f64> {
    actions
        .iter()
        .map(|a| rlgraph_core::convert::value_to_host(a).unwrap().data.to_f64()[0])
        .collect()
}

fn mean_and_variance(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (mean, xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n)
}

fn floats(v: &rlgraph_core::HostTensor) -> Vec<f64> {
    v.data.to_f64()
}

#[test]
fn the_first_steps_act_uniformly_then_the_policy_explores_with_its_noise() {
    let mut a = agent(&spec(), 0);
    let state = Pendulum::new(0).reset(Some(0)).unwrap();
    let same = vec![state.clone(); 2000];
    // Uniform on [-2, 2]: mean 0, variance 16/12; 2,000 draws put the sample mean within
    // 0.08 and the variance within 0.1 of those (three standard errors).
    let (mean, var) = mean_and_variance(&firsts(a.get_actions(&same, true, 0.0).unwrap()));
    assert!(
        mean.abs() < 0.08 && (var - 16.0 / 12.0).abs() < 0.1,
        "warm-up: {mean} {var}"
    );
    run(&mut a, 0, 16, false);
    // After `steps_before_update` steps: the policy's action plus N(0, 0.1 * 2), the noise in
    // half-widths of the range.
    let greedy = firsts(a.get_actions(std::slice::from_ref(&state), false, 0.0).unwrap())[0];
    assert!(
        greedy.abs() < 1.4,
        "an untrained policy's action is well inside the range: {greedy}"
    );
    let (mean, var) = mean_and_variance(&firsts(a.get_actions(&same, true, 0.0).unwrap()));
    assert!((mean - greedy).abs() < 0.015, "{mean} vs {greedy}");
    assert!((var.sqrt() - 0.2).abs() < 0.01, "noise sd {}", var.sqrt());
}

#[test]
fn the_policy_and_targets_move_every_policy_delay_updates() {
    let tau = 0.25;
    let mut a = agent(&spec(), 1);
    // 15 steps hold less than a batch: no update yet.
    assert!(run(&mut a, 0, 15, true).1.is_empty());
    let w0 = a.get_weights().unwrap();
    let keys = |part: &str| -> Vec<String> { w0.keys().filter(|k| k.contains(part)).cloned().collect() };
    let (target_critics, target_policy) = (keys("/target-critics/"), keys("/target-policy/"));
    assert!(
        !target_critics.is_empty() && !target_policy.is_empty(),
        "{:?}",
        w0.keys()
    );
    for k in target_critics.iter().chain(&target_policy) {
        let source = k.replace("target-", "");
        assert_eq!(w0[k], w0[&source], "targets start as copies: {k}");
    }
    // Update 1 steps the critics only.
    assert_eq!(run(&mut a, 1, 1, true).1.len(), 1);
    let w1 = a.get_weights().unwrap();
    for k in target_critics.iter().chain(&target_policy) {
        assert_eq!(w0[k], w1[k], "{k} waits for the policy update");
        let source = k.replace("target-", "");
        match k.contains("/target-critics/") {
            true => assert_ne!(w0[&source], w1[&source], "{source} learned"),
            false => assert_eq!(w0[&source], w1[&source], "{source} waits for update 2"),
        }
    }
    // Update 2 steps the policy too, then moves every target by tau toward its source.
    run(&mut a, 2, 1, true);
    let w2 = a.get_weights().unwrap();
    for k in target_critics.iter().chain(&target_policy) {
        let source = k.replace("target-", "");
        assert_ne!(w1[&source], w2[&source], "{source} learned");
        let want = floats(&w1[k])
            .iter()
            .zip(floats(&w2[&source]))
            .map(|(old, new)| tau * new + (1.0 - tau) * old)
            .collect::<Vec<_>>();
        for (got, want) in floats(&w2[k]).iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{k}: {got} vs {want}");
        }
    }
}

#[test]
fn a_restored_checkpoint_continues_exactly_across_the_warm_up() {
    let dir = std::env::temp_dir().join(format!("rlgraph-td3-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("checkpoint.safetensors");
    let mut a = agent(&spec(), 7);
    // Saved inside the warm-up; the runs compared cross into the policy's exploring.
    run(&mut a, 0, 10, true);
    a.save_checkpoint(&file).unwrap();
    let continued = run(&mut a, 1, 30, true);
    let mut b = agent(&spec(), 99);
    b.restore_checkpoint(&file).unwrap();
    let resumed = run(&mut b, 1, 30, true);
    assert_eq!(continued, resumed);
    assert_eq!(a.get_weights().unwrap(), b.get_weights().unwrap());
    assert_eq!((a.timesteps(), a.updates()), (b.timesteps(), b.updates()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn it_is_built_by_its_type_and_its_settings_are_checked_by_name() {
    let env = Pendulum::new(0);
    let (s, a) = (env.state_space(), env.action_space());
    let mut built = build_agent::<Candle>(&spec(), s, a, 0).unwrap();
    assert_eq!(run(built.as_mut(), 0, 20, true).1.len(), 5);
    check_config(&spec()).unwrap();
    let schema = config_schema().to_string();
    assert!(
        schema.contains("td3") && schema.contains("target_policy_noise"),
        "the schema lists TD3's keys"
    );
    let refused = |edit: &dyn Fn(&mut Json), at: &str| {
        let mut bad = spec();
        edit(&mut bad);
        let err = check_config(&bad).expect_err(at).to_string();
        assert!(err.contains(at), "{at}: {err}");
        let err = build_agent::<Candle>(&bad, s, a, 0).err().unwrap().to_string();
        assert!(err.contains(at), "{at}: {err}");
    };
    refused(&|c| c["exploraton_noise"] = json!(0.1), "config.exploraton_noise");
    refused(
        &|c| c["update_spec"]["sync_interval"] = json!(2),
        "config.update_spec: sync_interval",
    );
    refused(&|c| c["double_q"] = json!(false), "config.double_q");
    refused(&|c| c["discount"] = json!(1.5), "config.discount");
    refused(
        &|c| c["optimizer_spec"]["learning_rate"] = json!(-1.0),
        "config.optimizer_spec: learning_rate",
    );
    refused(
        &|c| c["target_policy_noise"] = json!(-0.2),
        "config.target_policy_noise",
    );
    refused(&|c| c["policy_delay"] = json!(0), "config.policy_delay");
    refused(
        &|c| c["memory_spec"]["type"] = json!("prioritized_replay"),
        "config.memory_spec: TD3 replays uniformly",
    );
    refused(
        &|c| c["network_spec"][0]["unit"] = json!(4),
        "config.network_spec: [0].unit: unknown key",
    );
    let discrete = Space::from(IntBox::new(3).unwrap());
    let err = build_agent::<Candle>(&spec(), s, &discrete, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("action_space") && err.contains("TD3"), "{err}");
    // Its name is taken, as every shipped algorithm's is.
    let err = agents::register_algorithm::<Candle, Json>("TD3", |_, _, _, _| unreachable!())
        .unwrap_err()
        .to_string();
    assert!(err.contains("shipped algorithm \"td3\" answers to this name"), "{err}");
}
