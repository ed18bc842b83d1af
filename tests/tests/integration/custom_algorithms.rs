//! An algorithm of one's own, registered by `type` name: built by `build_agent` from a config
//! with typed settings on candle and on tch, checked when the config loads, described by the
//! config schema, and refused by name where it is misspelt or its name is taken; and what each
//! algorithm offers the distributed roles, a registered one's included.

use agents::{
    acting_plan, agent_types, algorithm_of, build_agent, check_config, distributed_algorithm, register_algorithm,
    register_distributed_algorithm, registered_algorithms, segment_algorithm, tensor_algorithm, types_offering,
    DistributedAlgorithm, Experience, Layout,
};
use rlgraph_core::spaces::{Array, FloatBox, IntBox, Space, Value};
use rlgraph_core::Backend;
use rlgraph_tests::both_backends;
use serde_json::json;

/// The settings of `tiny-dqn`: a preset of DQN with one hidden layer of `hidden` units.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TinyDqn {
    /// Units of the one hidden layer.
    hidden: usize,
}

/// The preset's agent: DQN with the given hidden layer, built on `B`.
fn tiny_dqn<B: Backend>(
    s: TinyDqn,
    states: &Space,
    actions: &Space,
    seed: u64,
) -> rlgraph_core::Result<Box<dyn agents::Agent + Send>> {
    let config = agents::DqnConfig::parse(&json!({
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": s.hidden, "activation": "tanh", "scope": "hidden"}],
        "memory_spec": {"type": "replay", "capacity": 64},
        "update_spec": {"update_interval": 4, "batch_size": 8, "steps_before_update": 8}
    }))?;
    Ok(Box::new(agents::DqnAgent::<B>::new(config, states, actions, seed)?))
}

/// Registers `tiny-dqn` on `B` once for the process (each test may be the first).
fn registered<B: Backend>() {
    match register_algorithm::<B, TinyDqn>("tiny-dqn", tiny_dqn::<B>) {
        Ok(()) => {}
        Err(e) if e.to_string().contains("already registered") => {}
        Err(e) => panic!("{e}"),
    }
    assert!(registered_algorithms().contains(&"tiny-dqn".to_string()));
}

fn spaces() -> (Space, Space) {
    (Space::from(FloatBox::new([4])), Space::from(IntBox::new(3).unwrap()))
}

both_backends! {
    fn a_registered_algorithm_is_built_from_its_config_with_its_settings<B>() {
        registered::<B>();
        let (states, actions) = spaces();
        let config = json!({"type": "Tiny_DQN", "hidden": 5, "$schema": "config.schema.json"});
        // The type is matched as RLgraph matches it; the algorithm goes by its own spelling.
        assert_eq!(algorithm_of(&config).unwrap(), "tiny-dqn");
        check_config(&config).unwrap();
        let mut agent = build_agent::<B>(&config, &states, &actions, 0).unwrap();
        // The setting reached the network: 4 inputs to 5 hidden units, 5 to 3 Q-values.
        let weights = agent.get_weights().unwrap();
        let shape = |name: &str| weights[&format!("dqn-agent/policy/{name}")].shape.clone();
        assert_eq!(shape("neural-network/hidden/kernel"), [4, 5]);
        assert_eq!(shape("action-adapter/kernel"), [5, 3]);
        let obs = Value::Float32(Array::new([4], vec![0.1, 0.0, -0.1, 0.2]).unwrap());
        let acted = agent.get_actions(&[obs], false, 0.0).unwrap();
        assert!(acted.len() == 1 && actions.contains(&acted[0]), "{acted:?}");
    }

    fn a_registered_algorithms_config_is_checked_by_key_path_and_names_are_guarded<B>() {
        registered::<B>();
        let (states, actions) = spaces();
        for (config, path, what) in [
            (json!({"type": "tiny-dqn", "hiden": 5}), "config.hiden", "unknown field"),
            (json!({"type": "tiny-dqn", "hidden": "many"}), "config.hidden", "invalid type"),
            (json!({"type": "tiny-dqn"}), "config", "missing field `hidden`"),
        ] {
            let e = check_config(&config).unwrap_err().to_string();
            assert!(e.contains(path) && e.contains(what), "{config}: {e}");
            let e = build_agent::<B>(&config, &states, &actions, 0).err().unwrap().to_string();
            assert!(e.contains(path) && e.contains(what), "{config}: {e}");
        }
        // Once per backend; a shipped algorithm's name or alias cannot be taken.
        let e = register_algorithm::<B, TinyDqn>("TINY_DQN", tiny_dqn::<B>).unwrap_err().to_string();
        assert!(e.contains("already registered") && e.contains(B::NAME), "{e}");
        for (taken, owner) in [("apex", "\"dqn\""), ("Single-IMPALA", "\"single-impala\""), ("a2c", "\"actor_critic\""), ("TD3", "\"td3\"")] {
            let e = register_algorithm::<B, TinyDqn>(taken, tiny_dqn::<B>).unwrap_err().to_string();
            assert!(e.contains(&format!("register_algorithm({taken:?})")) && e.contains(owner), "{taken}: {e}");
        }
        let e = register_algorithm::<B, TinyDqn>("-", tiny_dqn::<B>).unwrap_err().to_string();
        assert!(e.contains("needs a name"), "{e}");
        // A type no one answers to lists the registered ones beside the built-in ones.
        let e = check_config(&json!({"type": "tiny-ppo"})).unwrap_err().to_string();
        assert!(e.contains("register_algorithm") && e.contains("tiny-dqn") && e.contains("single-impala"), "{e}");
    }
}

#[test]
fn an_algorithm_registered_on_one_backend_is_refused_on_the_other_by_name() {
    register_algorithm::<rlgraph_tests::Candle, TinyDqn>("tiny-dqn-candle-only", tiny_dqn::<rlgraph_tests::Candle>)
        .unwrap();
    let (states, actions) = spaces();
    let config = json!({"type": "tiny-dqn-candle-only", "hidden": 2});
    assert!(build_agent::<rlgraph_tests::Candle>(&config, &states, &actions, 0).is_ok());
    let e = build_agent::<rlgraph_tests::Tch>(&config, &states, &actions, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("not on tch") && e.contains("register_algorithm::<tch"),
        "{e}"
    );
}

#[test]
fn the_config_schema_describes_a_registered_algorithms_settings() {
    registered::<rlgraph_tests::Candle>();
    let schema = agents::config_schema();
    let def = &schema["$defs"]["registered_tiny_dqn"];
    assert_eq!(def["title"], "tiny-dqn (registered)");
    assert_eq!(def["additionalProperties"], false, "{def}");
    assert_eq!(def["required"], json!(["hidden"]), "{def}");
    for key in ["hidden", "type", "$schema"] {
        assert!(def["properties"].get(key).is_some(), "{key}: {def}");
    }
    // The rule that picks the definition matches the type as RLgraph spells types.
    let rule = schema["allOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["then"]["$ref"] == "#/$defs/registered_tiny_dqn")
        .expect("a rule for the registered type");
    assert_eq!(
        rule["if"]["properties"]["type"]["pattern"],
        "^[-_]*(?:[tT][-_]*[iI][-_]*[nN][-_]*[yY][-_]*[dD][-_]*[qQ][-_]*[nN])[-_]*$"
    );
}

/// A config of `configs/`.
fn shipped_config(name: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The settings of `tiny-apex`: DQN's, with `n_step` of one's choosing.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TinyApex {
    /// Steps each transition's return sums.
    n_step: usize,
}

/// `tiny-apex`'s DQN config.
fn tiny_apex_config(s: &TinyApex) -> rlgraph_core::Result<agents::DqnConfig> {
    agents::DqnConfig::parse(&json!({
        "type": "apex",
        "n_step": s.n_step,
        "discount": 0.5,
        "network_spec": [{"type": "dense", "units": 4, "activation": "tanh", "scope": "hidden"}],
        "memory_spec": {"type": "prioritized_replay", "capacity": 64},
        "update_spec": {"update_interval": 4, "batch_size": 8, "steps_before_update": 8}
    }))
}

both_backends! {
    fn each_algorithm_says_where_its_actors_send_experience_and_a_registered_one_joins_them<B>() {
        let experience = |config: &serde_json::Value| {
            distributed_algorithm::<B>(config).unwrap().map(|a| a.experience())
        };
        // The shipped configs' own settings.
        match experience(&shipped_config("apex-cartpole.json")) {
            Some(Experience::Replay(f)) => {
                assert_eq!((f.n_step, f.discount, f.update.batch_size), (3, 0.99, 32));
                assert_eq!((f.update.update_interval, f.update.steps_before_update), (4, 500));
            }
            other => panic!("Ape-X feeds replay shards: {other:?}"),
        }
        match experience(&shipped_config("impala-gridworld-2x2.json")) {
            Some(Experience::Rollouts(f)) => {
                assert_eq!((f.length, f.batch_size, f.queue_capacity, f.memory_units), (8, 4, 8, None));
            }
            other => panic!("IMPALA streams rollouts: {other:?}"),
        }
        // The off-policy algorithms send one-step transitions; TD3 is shipped on the registry.
        for (name, discount) in [("sac-pendulum.json", 0.99), ("benchmarks/classic/td3-pendulum.json", 0.98)] {
            match experience(&shipped_config(name)) {
                Some(Experience::Replay(f)) => assert_eq!((f.n_step, f.discount), (1, discount), "{name}"),
                other => panic!("{name} feeds replay shards: {other:?}"),
            }
        }
        assert_eq!(experience(&shipped_config("ppo-cartpole.json")), None);
        registered::<B>();
        assert_eq!(experience(&json!({"type": "tiny-dqn", "hidden": 3})), None, "registered without it");

        // A registered algorithm offers the roles its own, made from its settings.
        let registration = register_algorithm::<B, TinyApex>("tiny-apex", |s, states, actions, seed| {
            Ok(Box::new(agents::DqnAgent::<B>::new(tiny_apex_config(&s)?, states, actions, seed)?) as _)
        })
        .and_then(|()| {
            register_distributed_algorithm::<B, TinyApex>("tiny-apex", |s| {
                Ok(Box::new(tiny_apex_config(&s)?) as Box<dyn DistributedAlgorithm<B>>)
            })
        });
        match registration {
            Ok(()) => {}
            Err(e) if e.to_string().contains("already registered") => {}
            Err(e) => panic!("{e}"),
        }
        let config = json!({"type": "tiny-apex", "n_step": 2});
        let algorithm = distributed_algorithm::<B>(&config).unwrap().unwrap();
        match algorithm.experience() {
            Experience::Replay(f) => assert_eq!((f.n_step, f.discount), (2, 0.5)),
            other => panic!("{other:?}"),
        }
        // Its actor prioritizes what it sends: one priority per record.
        let (states, actions) = spaces();
        let mut actor = algorithm.actor(&states, &actions, 1).unwrap();
        let step = |r: f32| agents::Transition {
            state: Value::Float32(Array::new([4], vec![0.1, 0.2, 0.3, r]).unwrap()),
            action: Value::i32(1),
            reward: f64::from(r),
            terminated: false,
            truncated: false,
            next_state: Value::Float32(Array::new([4], vec![0.0, 0.2, 0.3, r]).unwrap()),
        };
        let records = agents::transitions_batch(&[step(1.0), step(-1.0)]).unwrap();
        let priorities = algorithm.priorities(&mut actor, &records).unwrap().unwrap();
        assert_eq!(priorities.len(), 2);
        assert!(priorities.iter().all(|p| p.is_finite() && *p >= 0.0), "{priorities:?}");
        // A shard holds the memory its config asks for.
        assert_eq!(algorithm.replay(&states, &actions).unwrap().size(), 0);
        // Its settings are read as its builder reads them; a second registration, or one for
        // a name no algorithm has, changes nothing.
        let e = distributed_algorithm::<B>(&json!({"type": "tiny-apex", "n_stp": 2})).err().unwrap().to_string();
        assert!(e.contains("config.n_stp"), "{e}");
        let again = register_distributed_algorithm::<B, TinyApex>("tiny-apex", |s| {
            Ok(Box::new(tiny_apex_config(&s)?) as Box<dyn DistributedAlgorithm<B>>)
        });
        assert!(again.unwrap_err().to_string().contains("already registered"));
        let nobody = register_distributed_algorithm::<B, TinyApex>("tiny-nobody", |s| {
            Ok(Box::new(tiny_apex_config(&s)?) as Box<dyn DistributedAlgorithm<B>>)
        });
        let e = nobody.unwrap_err().to_string();
        assert!(e.contains("register_distributed_algorithm(\"tiny-nobody\")") && e.contains("register_algorithm first"), "{e}");
    }
}

both_backends! {
    fn the_type_lists_the_messages_print_are_the_types_each_layout_runs<B>() {
        // One shipped config of each shipped type, in the order the messages list them, with
        // what it runs under: GA3C, the device worker, distributed roles, the ONNX exporter.
        let (t, f) = (true, false);
        let configs = [
            ("dqn", "dqn-cartpole.json", [f, f, t, t]),
            ("apex", "apex-cartpole.json", [f, f, t, t]),
            ("ppo", "ppo-cartpole.json", [t, t, f, t]),
            ("actor_critic", "actor-critic-cartpole.json", [t, f, f, t]),
            ("sac", "sac-pendulum.json", [f, f, t, f]),
            ("single-impala", "impala-gridworld-2x2.json", [t, f, t, t]),
            ("random", "random-cartpole.json", [f, f, f, f]),
            ("td3", "benchmarks/classic/td3-pendulum.json", [f, f, t, f]),
        ];
        let types = agent_types();
        let listed: Vec<&str> = types.split(", ").collect();
        assert_eq!(configs.map(|(kind, ..)| kind), listed[..configs.len()]);
        assert_eq!(&registered_algorithms()[..3], ["dqn", "ppo", "actor_critic"]);
        for (kind, file, runs) in configs {
            let config = shipped_config(file);
            let spelled = |t: &str| t.to_lowercase().replace(['-', '_'], "");
            assert_eq!(spelled(config["type"].as_str().unwrap()), spelled(kind), "{file}");
            // A layout that cannot run a config refuses it (None, or an error naming the key).
            let offers = [
                matches!(segment_algorithm::<B>(&config), Ok(Some(_))),
                matches!(tensor_algorithm::<B>(&config), Ok(Some(_))),
                matches!(distributed_algorithm::<B>(&config), Ok(Some(_))),
                matches!(acting_plan(&config), Ok(Some(_))),
            ];
            assert_eq!(offers, runs, "{kind}: GA3C, the device worker, distributed roles, export");
            let listed = [Layout::Segments, Layout::Tensors, Layout::Distributed, Layout::Export]
                .map(|layout| types_offering::<B>(layout).contains(&kind.to_string()));
            assert_eq!(listed, runs, "{kind}: the types the messages list");
        }
    }
}
