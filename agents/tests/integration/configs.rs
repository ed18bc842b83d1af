//! Agent configs read through serde: the shared keys behave the same for every agent, `null`
//! means "RLgraph's default", and every error names the full key path.

use agents::{DqnConfig, ImpalaConfig, PgConfig, SacConfig};
use serde_json::{json, Value as Json};

/// The error of a parse, as text.
fn err<T>(r: Result<T, rlgraph_core::CoreError>) -> Option<String> {
    r.err().map(|e| e.to_string())
}

/// A config parser that returns only its error.
type Parse = fn(&Json) -> Option<String>;

/// Each agent's parser, with a config it accepts.
fn every_agent() -> Vec<(&'static str, Parse, Json)> {
    let dense = json!([{"type": "dense", "units": 4}]);
    vec![
        (
            "dqn",
            |j| err(DqnConfig::parse(j)),
            json!({"type": "dqn", "network_spec": dense}),
        ),
        (
            "ppo",
            |j| err(PgConfig::parse(j)),
            json!({"type": "ppo", "network_spec": dense}),
        ),
        (
            "sac",
            |j| err(SacConfig::parse(j)),
            json!({"type": "sac", "network_spec": dense, "value_function_spec": dense}),
        ),
        (
            "impala",
            |j| err(ImpalaConfig::parse(j)),
            json!({"type": "single-impala", "network_spec": dense}),
        ),
    ]
}

/// `base` with `key` set to `value`.
fn with(base: &Json, key: &str, value: Json) -> Json {
    let mut j = base.clone();
    j[key] = value;
    j
}

#[test]
fn shared_keys_fail_at_the_same_path_for_every_agent() {
    let cases = [
        ("update_spec", json!({"sync_tau": 2.0}), "config.update_spec.sync_tau"),
        ("update_spec", json!({"batch_size": 0}), "config.update_spec.batch_size"),
        ("update_spec", json!({"batch_sise": 8}), "config.update_spec.batch_sise"),
        ("update_spec", json!([1, 2]), "config.update_spec"),
        (
            "execution_spec",
            json!({"default_device": "tpu"}),
            "config.execution_spec.default_device",
        ),
        (
            "execution_spec",
            json!({"gpu_spec": {"cuda_visible_devices": "0"}}),
            "config.execution_spec.gpu_spec.cuda_visible_devices",
        ),
        (
            "summary_spec",
            json!({"summary_regexp": "x"}),
            "config.summary_spec.summary_regexp",
        ),
        ("discount", json!("high"), "config.discount"),
        ("network_spec", json!(3), "config.network_spec"),
        ("network_spec", json!({"layers": [], "bogus": 1}), "config.network_spec"),
        ("preprocessing_spec", json!({}), "config.preprocessing_spec"),
        (
            "optimizer_spec",
            json!({"type": "adam", "learning_rate": "fast"}),
            "config.optimizer_spec.learning_rate",
        ),
        ("bogus_key", json!(1), "config.bogus_key"),
        // Nonsense that used to be accepted: a discount outside [0, 1], a negative learning
        // rate (also at the end of a schedule).
        ("discount", json!(-3), "config.discount"),
        ("discount", json!(1.5), "config.discount"),
        (
            "optimizer_spec",
            json!({"type": "adam", "learning_rate": -1}),
            "config.optimizer_spec.learning_rate",
        ),
        (
            "optimizer_spec",
            json!({"type": "sgd", "learning_rate": ["linear", 0.1, -0.1]}),
            "config.optimizer_spec.learning_rate",
        ),
    ];
    for (agent, parse, base) in every_agent() {
        assert_eq!(parse(&base), None, "{agent} refuses its base config");
        for (key, value, path) in &cases {
            let err =
                parse(&with(&base, key, value.clone())).unwrap_or_else(|| panic!("{agent} accepts {key}: {value}"));
            assert!(err.contains(path), "{agent}, {key}: {value}: {err}");
            assert_eq!(err.lines().count(), 1, "{agent}: {err}");
        }
    }
}

#[test]
fn null_means_rlgraphs_default() {
    let dense = json!([{"type": "dense", "units": 4}]);
    let written = DqnConfig::parse(&json!({"type": "dqn", "network_spec": dense, "discount": null,
        "double_q": null, "update_spec": null, "memory_spec": {"type": null, "capacity": null}}))
    .unwrap();
    // RLgraph's DQN defaults: discount 0.98, double Q on, batch 64, replay of 1000.
    assert_eq!(written.discount, 0.98);
    assert!(written.double_q);
    assert_eq!(written.update.batch_size, 64);
    assert_eq!(written.update.steps_before_update, 64);
    assert_eq!(written.capacity, 1000);
}

#[test]
fn nested_keys_are_named_in_full() {
    let dense = json!([{"type": "dense", "units": 4}]);
    let err = DqnConfig::parse(&json!({"type": "dqn", "network_spec": dense,
        "exploration_spec": {"epsilon_spec": {"decay_spec": 0.1, "bogus": 1}}}))
    .unwrap_err()
    .to_string();
    assert!(err.contains("config.exploration_spec.epsilon_spec.bogus"), "{err}");
    let err = DqnConfig::parse(&json!({"type": "dqn", "network_spec": dense,
        "exploration_spec": {"epsilon_spec": {}}}))
    .unwrap_err()
    .to_string();
    assert!(err.contains("decay_spec"), "{err}");
    let err = DqnConfig::parse(&json!({"type": "dqn", "network_spec": dense,
        "policy_spec": {"units_state_value_stream": -1}}))
    .unwrap_err()
    .to_string();
    assert!(err.contains("config.policy_spec.units_state_value_stream"), "{err}");
}

#[test]
fn an_unknown_key_lists_the_known_ones() {
    let err = PgConfig::parse(&json!({"type": "ppo", "network_spec": [], "clip_ration": 0.2}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("config.clip_ration"), "{err}");
    assert!(err.contains("clip_ratio") && err.contains("update_spec"), "{err}");
}

#[test]
fn another_agents_config_fails_on_its_type() {
    let ppo = json!({"type": "ppo", "network_spec": [{"type": "dense", "units": 4}],
        "clip_ratio": 0.2, "gae_lambda": 0.95});
    let err = DqnConfig::parse(&ppo).unwrap_err().to_string();
    assert!(err.contains("config.type") && err.contains("\"ppo\""), "{err}");
}

#[test]
fn layers_read_as_a_list_or_in_rlgraphs_object_form() {
    let layers = json!([{"type": "dense", "units": 4, "activation": "relu"}]);
    let listed = DqnConfig::parse(&json!({"type": "dqn", "network_spec": layers})).unwrap();
    let scoped = DqnConfig::parse(&json!({"type": "dqn",
        "network_spec": {"layers": layers, "scope": "q"}}))
    .unwrap();
    assert_eq!(listed.network_spec, scoped.network_spec);
    assert_eq!(listed.network_spec, layers.as_array().unwrap().clone());
}

#[test]
fn dqn_settings_elsewhere_are_refused() {
    let dense = json!([{"type": "dense", "units": 4}]);
    for (agent, parse, base) in every_agent() {
        let observed = with(&base, "observe_spec", json!({"n_step": 3}));
        match parse(&observed) {
            None => assert_eq!(agent, "dqn", "only DQN reads n_step"),
            Some(err) => assert!(err.contains("config.observe_spec.n_step"), "{agent}: {err}"),
        }
    }
    let n = DqnConfig::parse(&json!({"type": "dqn", "network_spec": dense, "observe_spec": {"n_step": 3}})).unwrap();
    assert_eq!(n.n_step, 3);
    let err = PgConfig::parse(&json!({"type": "ppo", "network_spec": dense,
        "memory_spec": {"type": "ring_buffer", "alpha": 0.6}}))
    .unwrap_err()
    .to_string();
    assert!(err.contains("config.memory_spec.alpha"), "{err}");
}

#[test]
fn each_agents_own_nonsense_is_refused_by_key() {
    let dense = json!([{"type": "dense", "units": 4}]);
    let dqn = json!({"type": "dqn", "network_spec": dense});
    let epsilon = |decay: Json| with(&dqn, "exploration_spec", json!({"epsilon_spec": {"decay_spec": decay}}));
    for decay in [json!(["linear", 1.5, 0.1]), json!(["linear", 1.0, -0.1]), json!(2.0)] {
        let e = err(DqnConfig::parse(&epsilon(decay.clone()))).unwrap_or_else(|| panic!("accepts epsilon {decay}"));
        assert!(
            e.contains("config.exploration_spec.epsilon_spec.decay_spec") && e.contains("from 0 to 1"),
            "{e}"
        );
    }
    assert_eq!(err(DqnConfig::parse(&epsilon(json!(["linear", 1.0, 0.0])))), None);
    let sac = json!({"type": "sac", "network_spec": dense, "value_function_spec": dense});
    let e = err(PgConfig::parse(
        &json!({"type": "ppo", "network_spec": dense, "clip_ratio": -1}),
    ))
    .unwrap();
    assert!(e.contains("config.clip_ratio"), "{e}");
    for key in ["gumbel_softmax_temperature", "initial_alpha"] {
        let e = err(SacConfig::parse(&with(&sac, key, json!(0)))).unwrap_or_else(|| panic!("accepts {key}: 0"));
        assert!(e.contains(&format!("config.{key}")) && e.contains("above 0"), "{e}");
    }
}

/// A section's typo key and wrong types, each with the full key path its error must name.
fn section_cases() -> Vec<(&'static str, Json, &'static str)> {
    vec![
        (
            "network_spec",
            json!([{"type": "dense", "unitz": 4}]),
            "config.network_spec[0].unitz",
        ),
        (
            "network_spec",
            json!([{"type": "dense", "units": "4"}]),
            "config.network_spec[0].units",
        ),
        (
            "network_spec",
            json!([{"type": "dense", "units": 0}]),
            "config.network_spec[0].units",
        ),
        (
            "network_spec",
            json!({"layers": [{"type": "dense", "units": 4}, {"type": "conv2d", "filters": 2, "kernel_size": 3, "stride": 1}]}),
            "config.network_spec[1].stride",
        ),
        (
            "network_spec",
            json!([{"type": "dense", "units": 4, "activation": "swishy"}]),
            "config.network_spec[0].activation",
        ),
        (
            "network_spec",
            json!([{"type": "densely", "units": 4}]),
            "config.network_spec[0].type",
        ),
        (
            "preprocessing_spec",
            json!([{"type": "clip", "min": 1, "max": -1}]),
            "config.preprocessing_spec[0].min",
        ),
        (
            "preprocessing_spec",
            json!([{"type": "divide", "divisor": 0}]),
            "config.preprocessing_spec[0].divisor",
        ),
        (
            "preprocessing_spec",
            json!([{"type": "multiply", "factor": 2}, {"type": "divide", "divisr": 2}]),
            "config.preprocessing_spec[1].divisr",
        ),
        (
            "preprocessing_spec",
            json!([{"type": "sequence", "sequence_length": "four"}]),
            "config.preprocessing_spec[0].sequence_length",
        ),
        (
            "optimizer_spec",
            json!({"type": "adam", "learning_rat": 0.1}),
            "config.optimizer_spec.learning_rat",
        ),
        (
            "optimizer_spec",
            json!({"type": "adam", "learning_rate": "fast"}),
            "config.optimizer_spec.learning_rate",
        ),
        (
            "memory_spec",
            json!({"type": "replay", "capacty": 10}),
            "config.memory_spec.capacty",
        ),
        (
            "memory_spec",
            json!({"type": "replay", "capacity": -1}),
            "config.memory_spec.capacity",
        ),
    ]
}

#[test]
fn a_section_with_a_typo_or_a_wrong_type_is_refused_when_the_config_loads() {
    for (agent, parse, base) in every_agent() {
        assert_eq!(parse(&base), None, "{agent}");
        for (key, value, path) in section_cases() {
            // Only the agents that read a memory_spec have one to get wrong.
            if key == "memory_spec" && !matches!(agent, "dqn" | "sac") {
                continue;
            }
            let e =
                parse(&with(&base, key, value.clone())).unwrap_or_else(|| panic!("{agent}: accepts {key}: {value}"));
            assert!(e.contains(path), "{agent}: {key}: {value}: {e}");
        }
        // The policy's output layer too, where an agent reads one.
        if matches!(agent, "dqn" | "ppo") {
            for (adapter, path) in [
                (
                    json!({"activaton": "tanh"}),
                    "config.policy_spec.action_adapter_spec.activaton",
                ),
                (
                    json!({"pre_network_spec": [{"type": "dense", "units": "4"}]}),
                    "config.policy_spec.action_adapter_spec.pre_network_spec[0].units",
                ),
            ] {
                let policy = json!({"action_adapter_spec": adapter});
                let e = parse(&with(&base, "policy_spec", policy.clone()))
                    .unwrap_or_else(|| panic!("{agent}: accepts {policy}"));
                assert!(e.contains(path), "{agent}: {policy}: {e}");
            }
        }
        // The value network is read the same way, where an agent has one.
        if agent == "dqn" {
            continue;
        }
        let vf = json!([{"type": "dense", "units": 4, "use_biass": true}]);
        let e = parse(&with(&base, "value_function_spec", vf)).unwrap_or_else(|| panic!("{agent}: accepts use_biass"));
        assert!(e.contains("config.value_function_spec[0].use_biass"), "{agent}: {e}");
    }
    // DQN's exploration schedule, at load too.
    let dqn = json!({"type": "dqn", "network_spec": [{"type": "dense", "units": 4}]});
    for (value, path) in [
        (
            json!({"epsilon_spec": {"decay_spec": {"type": "linear_decay", "from": 1.0, "too": 0.1}}}),
            "config.exploration_spec.epsilon_spec.decay_spec",
        ),
        (
            json!({"epsilon_spec": {"decay_spek": {}}}),
            "config.exploration_spec.epsilon_spec",
        ),
    ] {
        let e = err(DqnConfig::parse(&with(&dqn, "exploration_spec", value.clone())))
            .unwrap_or_else(|| panic!("accepts {value}"));
        assert!(e.contains(path), "{value}: {e}");
    }
}

#[test]
fn build_agent_refuses_them_before_building_anything() {
    use rlgraph_core::spaces::{FloatBox, IntBox, Space};
    let states = Space::from(FloatBox::new([4]));
    let actions = Space::from(IntBox::new(2).unwrap());
    let dense = json!([{"type": "dense", "units": 4}]);
    for base in [
        json!({"type": "dqn", "network_spec": dense}),
        json!({"type": "ppo", "network_spec": dense}),
    ] {
        assert!(agents::build_agent::<backend_candle::Candle>(&base, &states, &actions, 0).is_ok());
        for (key, value, path) in section_cases() {
            let e =
                agents::build_agent::<backend_candle::Candle>(&with(&base, key, value.clone()), &states, &actions, 0)
                    .err()
                    .unwrap_or_else(|| panic!("{base}: accepts {key}: {value}"))
                    .to_string();
            assert!(e.contains(path), "{key}: {value}: {e}");
        }
    }
}

#[test]
fn a_type_that_is_not_a_string_is_named_as_such() {
    let e = agents::algorithm_of(&json!({"type": 5})).err().unwrap().to_string();
    assert!(
        e.contains("config.type") && e.contains("expected a string") && e.contains("got 5"),
        "{e}"
    );
}
