//! Agents composed from Rust values with `AgentBuilder`: a network, preprocessors, an
//! optimizer, an exploration schedule and a replay memory given as values train exactly as
//! the same agent from JSON does, a user's own component works in either place, and what
//! does not fit is refused by name, on candle and on tch.

use agents::{transition_space, Agent, DqnAgent, PgAgent, Transition};
use rlgraph_components::{dense, Activation, DenseSpec, OptimizerSpec, TimeDependent};
use rlgraph_core::spaces::{Array, FloatBox, IntBox, Space, Value};
use rlgraph_core::{Backend, Component, GraphFn, Param};
use rlgraph_envs::{CartPole, Env};
use rlgraph_memories::{PrioritizedReplay, ReplayMemory};
use rlgraph_tests::both_backends;
use serde_json::json;

/// A user's own stateless preprocessor: `factor * x`, elementwise.
fn scale<B: Backend>(name: &str, factor: f64) -> Component<B> {
    Component::new(name)
        .api("call", vec![Param::new("inputs")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .graph_fn(GraphFn::tensors("apply", move |_, xs| Ok(vec![B::affine(xs[0], factor, 0.0)?])).infer_same())
}

/// A tanh dense layer of `units`, named as the JSON path names the first layer of a network.
fn tanh_dense<B: Backend>(name: &str, units: usize) -> Component<B> {
    dense::<B>(
        name,
        DenseSpec {
            activation: Activation::Tanh,
            ..DenseSpec::new(units)
        },
    )
}

/// The DQN config both agents share; `with_json_parts` adds the sections the builder gives
/// as values.
fn dqn_config(with_json_parts: bool) -> serde_json::Value {
    let mut c = json!({
        "type": "dqn",
        "discount": 0.97,
        "update_spec": {"update_interval": 4, "batch_size": 8, "steps_before_update": 16, "sync_interval": 20}
    });
    if with_json_parts {
        let o = c.as_object_mut().unwrap();
        o.insert(
            "network_spec".into(),
            json!([{"type": "dense", "units": 8, "activation": "tanh"}]),
        );
        o.insert(
            "preprocessing_spec".into(),
            json!([{"type": "multiply", "factor": 0.5}]),
        );
        o.insert("optimizer_spec".into(), json!({"type": "adam", "learning_rate": 0.01}));
        o.insert(
            "exploration_spec".into(),
            json!({"epsilon_spec": {"decay_spec": ["linear", 1.0, 0.1]}}),
        );
        o.insert(
            "memory_spec".into(),
            json!({"type": "prioritized_replay", "capacity": 64, "alpha": 0.6, "beta": 0.4}),
        );
    }
    c
}

/// `steps` CartPole steps of `agent` from seed 3: acting with exploration, observing,
/// updating as its schedule says.
fn train(agent: &mut dyn Agent, steps: usize) {
    train_on(agent, &mut CartPole::new(3), steps);
}

/// `steps` steps of `agent` on `env` from seed 3, as [`train`].
fn train_on(agent: &mut dyn Agent, env: &mut dyn Env, steps: usize) {
    let mut s = env.reset(Some(3)).unwrap();
    for t in 0..steps {
        let time = t as f64 / steps as f64;
        let a = agent
            .get_actions(std::slice::from_ref(&s), true, time)
            .unwrap()
            .remove(0);
        let step = env.step(&a).unwrap();
        let transition = Transition {
            state: s,
            action: a,
            reward: step.reward,
            terminated: step.terminated,
            truncated: step.truncated,
            next_state: step.observation.clone(),
        };
        agent.observe(0, transition).unwrap();
        agent.update(time).unwrap();
        s = match step.terminated || step.truncated {
            true => env.reset(None).unwrap(),
            false => step.observation,
        };
    }
}

fn cartpole_spaces() -> (Space, Space) {
    let env = CartPole::new(0);
    (env.state_space().clone(), env.action_space().clone())
}

#[track_caller]
fn error<T>(r: rlgraph_core::Result<T>) -> String {
    match r {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

both_backends! {
    fn a_dqn_composed_from_values_trains_exactly_as_the_same_dqn_from_json<B>() {
        let (s, a) = cartpole_spaces();
        let mut from_json = DqnAgent::<B>::new(agents::DqnConfig::parse(&dqn_config(true)).unwrap(), &s, &a, 11).unwrap();
        let memory = PrioritizedReplay::new("my-replay", &transition_space(&s, &a).unwrap(), 64, 0.6, 0.4).unwrap();
        let mut from_values = DqnAgent::<B>::builder(dqn_config(false))
            // The JSON path names an unscoped first layer `dense-0`; the same name draws the
            // same initial weights from the same seed.
            .network(vec![tanh_dense::<B>("dense-0", 8)])
            .preprocessors(vec![scale::<B>("halve", 0.5)])
            .optimizer(OptimizerSpec::adam(0.01))
            .exploration(TimeDependent::Linear { from: 1.0, to: 0.1 })
            .memory(memory)
            .build(&s, &a, 11)
            .unwrap();
        assert_eq!(from_values.get_weights().unwrap(), from_json.get_weights().unwrap());
        train(&mut from_json, 300);
        train(&mut from_values, 300);
        assert!(from_json.updates() > 50, "{} updates", from_json.updates());
        assert_eq!(from_values.updates(), from_json.updates());
        assert_eq!(from_values.memory_size(), 64);
        assert!(from_values.priorities().is_some(), "the given prioritized memory is the one in use");
        let (w_values, w_json) = (from_values.get_weights().unwrap(), from_json.get_weights().unwrap());
        assert!(w_values.keys().any(|k| k.contains("dense-0")), "{:?}", w_values.keys());
        assert_eq!(w_values, w_json);
        // Saved and restored into a fresh agent of the same values, it acts the same.
        let dir = std::env::temp_dir().join(format!("rlgraph-from-values-{}-{}", B::NAME, std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        from_values.save_checkpoint(dir.join("ckpt")).unwrap();
        let mut restored = DqnAgent::<B>::builder(dqn_config(false))
            .network(vec![tanh_dense::<B>("dense-0", 8)])
            .preprocessors(vec![scale::<B>("halve", 0.5)])
            .optimizer(OptimizerSpec::adam(0.01))
            .memory(PrioritizedReplay::new("my-replay", &transition_space(&s, &a).unwrap(), 64, 0.6, 0.4).unwrap())
            .build(&s, &a, 99)
            .unwrap();
        restored.restore_checkpoint(dir.join("ckpt")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let probe = Value::Float32(Array::new([4], vec![0.05, -0.2, 0.03, 0.4]).unwrap());
        let probe = std::slice::from_ref(&probe);
        assert_eq!(restored.q_values(probe).unwrap(), from_values.q_values(probe).unwrap());
    }

    fn a_users_preprocessor_runs_inside_the_ppo_graph<B>() {
        // Same seed and layer names: the network sees `-x` under the flip exactly where the
        // plain agent sees `-x` given, so their greedy actions and state values agree.
        let (s, a) = cartpole_spaces();
        let ppo = json!({"type": "ppo", "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}]});
        let mut plain = PgAgent::<B>::new(agents::PgConfig::parse(&ppo).unwrap(), &s, &a, 5).unwrap();
        let mut flipped = PgAgent::<B>::builder(json!({"type": "ppo"}))
            .network(vec![tanh_dense::<B>("dense-0", 8)])
            .preprocessors(vec![scale::<B>("flip", -1.0)])
            .build(&s, &a, 5)
            .unwrap();
        let states: Vec<Value> = [[0.1, 0.5, -0.2, 1.0], [-0.3, 0.0, 0.2, -2.0], [0.0, 1.5, 0.1, 0.3]]
            .iter()
            .map(|x| Value::Float32(Array::new([4], x.to_vec()).unwrap()))
            .collect();
        let negated: Vec<Value> = states
            .iter()
            .map(|v| match v {
                Value::Float32(x) => Value::Float32(Array::new([4], x.data().iter().map(|e| -e).collect()).unwrap()),
                _ => unreachable!(),
            })
            .collect();
        // `evaluate(states, actions)`: the actions' log-likelihoods and the state values.
        let actions = Value::Int32(Array::new([3], vec![0, 1, 1]).unwrap());
        let graph = |agent: &mut PgAgent<B>, xs: &[Value]| {
            let batch = agents::stack(xs).unwrap();
            agent.graph_mut().unwrap().execute("evaluate", &[batch, actions.clone()]).unwrap()
        };
        let v_flipped = graph(&mut flipped, &states);
        let v_plain = graph(&mut plain, &negated);
        assert_eq!(v_flipped, v_plain);
        let v_unflipped = graph(&mut plain, &states);
        assert_ne!(v_flipped, v_unflipped, "the preprocessor changed nothing");
    }

    fn what_does_not_fit_is_refused_by_name_and_says_what_to_do<B>() {
        let (s, a) = cartpole_spaces();
        let no_call = Component::<B>::new("no-call").api("forward", vec![Param::new("inputs")], |_, args| Ok(vec![args.get(0)?]));
        let e = error(DqnAgent::<B>::builder(dqn_config(false)).network(vec![no_call]).build(&s, &a, 0));
        assert!(e.contains("builder.network[0]") && e.contains("\"no-call\"") && e.contains("forward") && e.contains("`call`"), "{e}");

        let twice = vec![tanh_dense::<B>("hidden", 8), tanh_dense::<B>("hidden", 8)];
        let e = error(DqnAgent::<B>::builder(dqn_config(false)).network(twice).build(&s, &a, 0));
        assert!(e.contains("builder.network[1]") && e.contains("builder.network[0]") && e.contains("copy_as"), "{e}");

        let e = error(DqnAgent::<B>::builder(dqn_config(true)).network(vec![tanh_dense::<B>("h", 8)]).build(&s, &a, 0));
        assert!(e.contains("config.network_spec") && e.contains("given twice") && e.contains("AgentBuilder::network"), "{e}");

        // A memory over other records: its space and the one to build it over are named.
        let wrong = ReplayMemory::new("m", &transition_space(&Space::from(FloatBox::new([3])), &a).unwrap(), 10).unwrap();
        let e = error(DqnAgent::<B>::builder(json!({"type": "dqn"})).network(vec![tanh_dense::<B>("h", 8)]).memory(wrong).build(&s, &a, 0));
        assert!(e.contains("builder.memory") && e.contains("transition_space"), "{e}");

        let e = error(DqnAgent::<B>::builder(json!({"type": "dqn"}))
            .network(vec![tanh_dense::<B>("h", 8)])
            .exploration(TimeDependent::Linear { from: 1.5, to: 0.1 })
            .build(&s, &a, 0));
        assert!(e.contains("builder.exploration") && e.contains("probability"), "{e}");

        let e = error(PgAgent::<B>::builder(json!({"type": "ppo"}))
            .network(vec![tanh_dense::<B>("h", 8)])
            .exploration(TimeDependent::Constant(0.1))
            .build(&s, &a, 0));
        assert!(e.contains("builder.exploration") && e.contains("sampling its policy"), "{e}");

        // A part the algorithm has no place for is refused before the JSON is read.
        let e = error(DqnAgent::<B>::builder(json!({"type": "dqn"}))
            .network(vec![tanh_dense::<B>("h", 8)])
            .value_network(vec![tanh_dense::<B>("v", 8)])
            .build(&s, &a, 0));
        assert!(e.contains("builder.value_network") && e.contains("policy_spec"), "{e}");

        // Ape-X computes priorities as records arrive: a uniform memory is refused.
        let uniform = ReplayMemory::new("m", &transition_space(&s, &a).unwrap(), 10).unwrap();
        let e = error(DqnAgent::<B>::builder(json!({"type": "apex"})).network(vec![tanh_dense::<B>("h", 8)]).memory(uniform).build(&s, &a, 0));
        assert!(e.contains("builder.memory") && e.contains("PrioritizedReplay"), "{e}");

        // What the JSON path handles by reading the spec is refused as a value.
        let lstm = rlgraph_components::from_spec::<B>(&json!({"type": "lstm", "units": 4}), "lstm").unwrap();
        let e = error(PgAgent::<B>::builder(json!({"type": "ppo"})).network(vec![tanh_dense::<B>("h", 8), lstm]).build(&s, &a, 0));
        assert!(e.contains("builder.network[1]") && e.contains("network_spec"), "{e}");
        let standardize = rlgraph_components::from_spec::<B>(&json!({"type": "moving_standardize"}), "p").unwrap();
        let e = error(PgAgent::<B>::builder(json!({"type": "ppo"}))
            .network(vec![tanh_dense::<B>("h", 8)])
            .preprocessors(vec![standardize])
            .build(&s, &a, 0));
        assert!(e.contains("builder.preprocessors[0]") && e.contains("build_agent"), "{e}");
        let e = error(PgAgent::<B>::builder(json!({"type": "ppo"})).network(vec![tanh_dense::<B>("h", 8)]).preprocessors(vec![]).build(&s, &a, 0));
        assert!(e.contains("builder.preprocessors") && e.contains("no preprocessor given"), "{e}");

        // PPO steps both networks with one optimizer: given as a value, not also in JSON.
        let e = error(PgAgent::<B>::builder(json!({"type": "ppo", "value_function_optimizer_spec": {"type": "adam"}}))
            .network(vec![tanh_dense::<B>("h", 8)])
            .optimizer(OptimizerSpec::adam(0.01))
            .build(&s, &a, 0));
        assert!(e.contains("config.value_function_optimizer_spec") && e.contains("leave this key out"), "{e}");
    }

    fn a_given_memory_is_the_one_the_agent_fills<B>() {
        // Records already in it are there when the agent starts, and the agent adds to them.
        let (s, a) = cartpole_spaces();
        let mut memory = ReplayMemory::new("mine", &transition_space(&s, &a).unwrap(), 50).unwrap();
        let state = Value::Float32(Array::new([4], vec![0.0; 4]).unwrap());
        let record = Transition {
            state: state.clone(),
            action: Value::i32(1),
            reward: 1.0,
            terminated: false,
            truncated: false,
            next_state: state,
        };
        memory.insert_records(&agents::transitions_batch(&vec![record; 7]).unwrap()).unwrap();
        let mut agent = DqnAgent::<B>::builder(json!({"type": "dqn", "update_spec": {"steps_before_update": 1000}}))
            .network(vec![tanh_dense::<B>("h", 8)])
            .memory(memory)
            .build(&s, &a, 0)
            .unwrap();
        assert_eq!(agent.memory_size(), 7);
        assert!(agent.priorities().is_none(), "uniform, as given");
        train(&mut agent, 20);
        assert_eq!(agent.memory_size(), 27);
    }

    fn a_sac_composed_from_values_trains_exactly_as_the_same_sac_from_json<B>() {
        // The given optimizer steps the policy, the entropy weight and, with no
        // value_function_optimizer_spec in the JSON, the critics, as `optimizer_spec` does.
        let env = rlgraph_envs::Pendulum::new(0);
        let (s, a) = (env.state_space().clone(), env.action_space().clone());
        let common = json!({
            "type": "sac",
            "memory_spec": {"type": "replay", "capacity": 500},
            "update_spec": {"update_interval": 1, "batch_size": 16, "steps_before_update": 40, "sync_tau": 0.01}
        });
        let mut spec = common.clone();
        spec["network_spec"] = json!([{"type": "dense", "units": 16, "activation": "tanh"}]);
        spec["value_function_spec"] = json!([{"type": "dense", "units": 16, "activation": "tanh"}]);
        spec["optimizer_spec"] = json!({"type": "adam", "learning_rate": 0.003});
        let mut from_json = agents::SacAgent::<B>::new(agents::SacConfig::parse(&spec).unwrap(), &s, &a, 4).unwrap();
        let mut from_values = agents::SacAgent::<B>::builder(common)
            .network(vec![tanh_dense::<B>("dense-0", 16)])
            .value_network(vec![tanh_dense::<B>("dense-0", 16)])
            .optimizer(OptimizerSpec::adam(0.003))
            .build(&s, &a, 4)
            .unwrap();
        assert_eq!(from_values.get_weights().unwrap(), from_json.get_weights().unwrap());
        train_on(&mut from_json, &mut rlgraph_envs::Pendulum::new(3), 120);
        train_on(&mut from_values, &mut rlgraph_envs::Pendulum::new(3), 120);
        assert!(from_json.updates() >= 80, "{} updates", from_json.updates());
        assert_eq!(from_values.get_weights().unwrap(), from_json.get_weights().unwrap());
    }

    fn a_network_given_as_values_gets_the_space_checks_a_json_one_gets<B>() {
        // Integer states into a dense layer: the same refusal, with the same advice, both ways.
        let states = Space::from(IntBox::new(4).unwrap());
        let a = Space::from(IntBox::new(2).unwrap());
        let json_error = error(DqnAgent::<B>::new(
            agents::DqnConfig::parse(&json!({"type": "dqn", "network_spec": [{"type": "dense", "units": 8, "activation": "tanh", "scope": "hidden"}]})).unwrap(),
            &states,
            &a,
            0,
        ));
        let value_error = error(DqnAgent::<B>::builder(json!({"type": "dqn"})).network(vec![tanh_dense::<B>("hidden", 8)]).build(&states, &a, 0));
        assert!(value_error.contains("flatten_categories"), "{value_error}");
        assert_eq!(value_error, json_error);
    }

    fn sac_and_impala_take_their_networks_as_values<B>() {
        // SAC: the policy's layers and each critic's copy of the value layers sit where the
        // names given say; the actor acts inside the action bounds.
        let states = Space::from(FloatBox::new([3]));
        let actions = Space::from(FloatBox::bounded([1], -2.0, 2.0).unwrap());
        let mut sac = agents::SacAgent::<B>::builder(json!({"type": "sac"}))
            .network(vec![tanh_dense::<B>("my-policy-layer", 8)])
            .value_network(vec![tanh_dense::<B>("my-critic-layer", 8)])
            .build(&states, &actions, 1)
            .unwrap();
        let names: Vec<String> = sac.get_weights().unwrap().into_keys().collect();
        for part in [
            "sac-agent/policy/neural-network/my-policy-layer/kernel",
            "sac-agent/critics/q1/neural-network/my-critic-layer/kernel",
            "sac-agent/critics/q2/neural-network/my-critic-layer/kernel",
        ] {
            assert!(names.iter().any(|n| n == part), "{part} not in {names:?}");
        }
        let x = Value::Float32(Array::new([3], vec![0.1, -0.4, 0.9]).unwrap());
        let a = sac.get_actions(&[x], true, 0.0).unwrap();
        assert!(actions.contains(&a[0]), "{a:?}");
        // IMPALA: the same for its policy and value function.
        let (s, a) = cartpole_spaces();
        let impala = agents::ImpalaAgent::<B>::builder(json!({"type": "single-impala"}))
            .network(vec![tanh_dense::<B>("my-torso", 8)])
            .value_network(vec![tanh_dense::<B>("my-value-layer", 4)])
            .build(&s, &a, 1)
            .unwrap();
        let names: Vec<String> = impala.get_weights().unwrap().into_keys().collect();
        for part in ["policy/neural-network/my-torso/kernel", "value-function/neural-network/my-value-layer/kernel"] {
            assert!(names.iter().any(|n| n.contains(part)), "{part} not in {names:?}");
        }
        let e = error(agents::ImpalaAgent::<B>::builder(json!({"type": "single-impala"}))
            .network(vec![tanh_dense::<B>("my-torso", 8)])
            .memory(ReplayMemory::new("m", &transition_space(&s, &a).unwrap(), 10).unwrap())
            .build(&s, &a, 1));
        assert!(e.contains("builder.memory") && e.contains("queue_capacity"), "{e}");
    }
}
