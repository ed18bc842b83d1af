//! Recurrent policies (an `lstm` layer in `network_spec`): the learner unrolls each copy's
//! steps from the memory its actor acted from and reaches, step for step, the numbers the
//! actor reached carrying that memory (PPO's sequences, IMPALA's rollouts); the memories ride
//! in checkpoints; configs the agent cannot carry a memory for are refused by name.

use agents::{
    impala_actor, pg_actor, stack, Agent, CarriedMemory, GraphLearner, ImpalaConfig, ImpalaLearner, Learner, PgAgent,
    PgConfig, PgLearner, Rollout, RolloutAdder, Transition,
};
use backend_candle::Candle;
use rlgraph_core::spaces::{Array, Value};
use rlgraph_envs::{CartPoleNoVel, Env};
use serde_json::json;

fn config(extra: serde_json::Value) -> PgConfig {
    let mut spec = json!({
        "type": "ppo",
        "sample_episodes": false,
        "memory_spec": {"type": "ring_buffer", "capacity": 64},
        "network_spec": [
            {"type": "dense", "units": 3, "activation": "tanh", "scope": "embed"},
            {"type": "lstm", "units": 4, "scope": "lstm"},
            {"type": "dense", "units": 4, "activation": "relu", "scope": "head"}
        ],
        "update_spec": {"update_interval": 12, "batch_size": 12, "num_iterations": 2, "sample_size": 6}
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    PgConfig::parse(&spec).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        other => panic!("not floats: {other:?}"),
    }
}

/// A state of CartPoleNoVel made up from `k`.
fn state(k: usize) -> Value {
    Value::Float32(Array::new([2], vec![(k as f32 * 0.37).sin(), (k as f32 * 0.11).cos() * 0.1]).unwrap())
}

#[test]
fn the_learner_unrolls_to_what_the_actor_reached_step_by_step() {
    let env = CartPoleNoVel::new(0);
    let (s, a) = (env.state_space().clone(), env.action_space().clone());
    let config = config(json!({}));
    let mut learner = PgLearner::<Candle>::new(&config, &s, &a, 3).unwrap();
    let mut actor = pg_actor::<Candle>(&config, &s, &a, 3).unwrap();
    learner.publish_to(&mut actor).unwrap();
    let mut memory = CarriedMemory::new(4);
    let mut rollout = Rollout::new(64, &s, &a);
    // Per step and copy: the numbers of one step evaluated from the memory the actor acted from.
    let mut step_by_step = vec![vec![]; 2];
    for t in 0..6 {
        let states = [state(t), state(t + 10)];
        let inputs = memory.inputs(true, 2).unwrap();
        let (acted, after) = actor.act_with_memory(&states, inputs, true).unwrap();
        memory.update(true, &after).unwrap();
        for copy in 0..2 {
            let m = memory.acted(copy).unwrap();
            let (units, row) = (4, &m.memory);
            let one = Value::Tuple(vec![
                Value::Float32(Array::new([1, units], row[..units].to_vec()).unwrap()),
                Value::Float32(Array::new([1, units], row[units..].to_vec()).unwrap()),
            ]);
            let start = Value::Bool(Array::new([1], vec![m.start]).unwrap());
            let batch = |v: &Value| agents::stack(std::slice::from_ref(v)).unwrap();
            let out = learner
                .executor_mut()
                .execute(
                    "evaluate",
                    &[batch(&states[copy]), batch(&acted.actions[copy]), one, start],
                )
                .unwrap();
            step_by_step[copy].push((floats(&out[0])[0], floats(&out[1])[0]));
            // Copy 1's episode ends at step 2: its memory restarts at step 3.
            let ends = copy == 1 && t == 2;
            rollout.push_with_memory(
                copy,
                Transition {
                    state: states[copy].clone(),
                    action: acted.actions[copy].clone(),
                    reward: 1.0,
                    terminated: ends,
                    truncated: false,
                    next_state: state(t + 1),
                },
                m,
            );
            if ends {
                memory.begin(true, &[1]);
            }
        }
    }
    let batch = rollout.recent_steps(12);
    assert_eq!(
        batch.starts,
        [true, false, false, false, false, false, true, false, false, true, false, false]
    );
    // The learner's log-likelihoods and values of the batch's steps, unrolled as `sequences`
    // sequences from zero memories, with these episode starts.
    let mut unrolled = |sequences: usize, starts: Vec<bool>| {
        let zeros = Value::Float32(Array::new([sequences, 4], vec![0.0; sequences * 4]).unwrap());
        let inputs = [
            agents::stack(&batch.states).unwrap(),
            agents::stack(&batch.actions).unwrap(),
            Value::Tuple(vec![zeros.clone(), zeros]),
            Value::Bool(Array::new([12], starts).unwrap()),
        ];
        learner.executor_mut().execute("evaluate", &inputs).unwrap()
    };
    // The whole batch, unrolled from each copy's first memory (both zero: the copies started).
    let out = unrolled(2, batch.starts.clone());
    let (log_probs, values) = (floats(&out[0]), floats(&out[1]));
    let want: Vec<(f64, f64)> = step_by_step.concat();
    for (r, (lp, v)) in want.iter().enumerate() {
        assert!(
            (log_probs[r] - lp).abs() < 1e-5,
            "step {r}: {} against {lp}",
            log_probs[r]
        );
        assert!((values[r] - v).abs() < 1e-5, "step {r}: {} against {v}", values[r]);
    }
    // And the memory mattered: every step alone, from a zero memory, differs.
    let each_alone = unrolled(12, vec![true; 12]);
    let alone = floats(&each_alone[1]);
    assert!(
        (1..6).any(|r| (alone[r] - values[r]).abs() > 1e-4),
        "{alone:?} {values:?}"
    );
    // The learner learns from the batch (PPO's minibatches are whole sequences).
    learner.learn_rollout(&batch, 0.0).unwrap();
}

/// The recurrent IMPALA config of these tests: rollouts of 3 steps, 2 per update.
fn impala_spec() -> serde_json::Value {
    json!({
        "type": "single-impala",
        "worker_sample_size": 3,
        "fifo_queue_spec": {"capacity": 4},
        "network_spec": [
            {"type": "dense", "units": 3, "activation": "tanh", "scope": "embed"},
            {"type": "lstm", "units": 4, "scope": "lstm"},
            {"type": "dense", "units": 4, "activation": "relu", "scope": "head"}
        ],
        "update_spec": {"batch_size": 2}
    })
}

/// Two copies step `steps` times from step `from`, every step observed; `ends` names the
/// (step, copy) whose episode ends there.
fn step_copies(agent: &mut dyn Agent, from: usize, steps: usize, ends: &[(usize, usize)]) {
    for t in from..from + steps {
        let actions = agent.get_actions(&[state(t), state(t + 3)], true, 0.0).unwrap();
        for (copy, action) in actions.into_iter().enumerate() {
            let transition = Transition {
                state: state(t + 3 * copy),
                action,
                reward: 1.0,
                terminated: ends.contains(&(t, copy)),
                truncated: false,
                next_state: state(t + 1),
            };
            agent.observe(copy, transition).unwrap();
        }
    }
}

#[test]
fn an_agent_carries_memories_through_a_checkpoint() {
    let env = CartPoleNoVel::new(0);
    let (s, a) = (env.state_space().clone(), env.action_space().clone());
    let ppo = serde_json::to_value(json!({
        "type": "ppo",
        "sample_episodes": false,
        "memory_spec": {"type": "ring_buffer", "capacity": 64},
        "network_spec": impala_spec()["network_spec"],
        "update_spec": {"update_interval": 12, "batch_size": 12, "num_iterations": 2, "sample_size": 6}
    }))
    .unwrap();
    for spec in [ppo, impala_spec()] {
        let build = || agents::build_agent::<Candle>(&spec, &s, &a, 5).unwrap();
        let mut agent = build();
        agent.begin_episodes(true, &[0, 1]).unwrap();
        step_copies(&mut agent, 0, 6, &[(1, 0)]);
        let dir = std::env::temp_dir().join(format!("rlgraph-recurrent-{}-{}", spec["type"], std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("checkpoint.safetensors");
        agent.save_checkpoint(&path).unwrap();
        let mut back = build();
        back.restore_checkpoint(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        // Greedy actions from here depend on the carried memory; both agents carry the same one.
        agent.begin_episodes(false, &[0, 1]).unwrap();
        back.begin_episodes(false, &[0, 1]).unwrap();
        for t in 6..10 {
            let states = [state(t), state(t + 3)];
            for explore in [true, false] {
                let mine = agent.get_actions(&states, explore, 0.0).unwrap();
                let theirs = back.get_actions(&states, explore, 0.0).unwrap();
                assert_eq!(mine, theirs, "{}: step {t}", spec["type"]);
            }
        }
        // The learner's batch came through with the memories its steps were acted from: the
        // same update, to the bit. A batch unrolled from other memories would give another loss.
        let (mine, theirs) = (agent.update(0.0).unwrap(), back.update(0.0).unwrap());
        assert!(mine.is_some(), "{}", spec["type"]);
        assert_eq!(mine, theirs, "{}", spec["type"]);
    }
}

#[test]
fn the_impala_learner_unrolls_each_rollout_as_its_actor_acted() {
    let env = CartPoleNoVel::new(0);
    let (s, a) = (env.state_space().clone(), env.action_space().clone());
    let config = ImpalaConfig::parse(&impala_spec()).unwrap();
    let mut learner = ImpalaLearner::<Candle>::new(&config, &s, &a, 3).unwrap();
    let mut actor = impala_actor::<Candle>(&config, &s, &a, 3).unwrap();
    learner.publish_to(&mut actor).unwrap();
    let mut memory = CarriedMemory::new(4);
    let mut adder = RolloutAdder::new(3, &s, &a, Some(4)).unwrap();
    let mut records = vec![];
    // Two copies, two rollouts each. Copy 1's episode ends at step 1 (inside its first
    // rollout), copy 0's at step 2 (the first rollout's last step: its bootstrap state starts
    // the next episode).
    for t in 0..6 {
        let states = [state(t), state(t + 10)];
        let acted = memory.act(&mut actor, &states, true).unwrap();
        let Some(Value::Float32(log_probs)) = acted.extras.get("behaviour_log_probs") else {
            panic!("no log-likelihoods: {:?}", acted.extras);
        };
        for (copy, state_now) in states.iter().enumerate() {
            let transition = Transition {
                state: state_now.clone(),
                action: acted.actions[copy].clone(),
                reward: 1.0,
                terminated: (t, copy) == (1, 1) || (t, copy) == (2, 0),
                truncated: false,
                next_state: state(t + 1 + 10 * copy),
            };
            let acted_from = memory.observed(copy, &transition).unwrap();
            let lp = f64::from(log_probs.data()[copy]);
            records.extend(adder.push(copy, transition, lp, Some(acted_from)).unwrap());
        }
    }
    // Rollouts in the order they completed: copy 0's first, copy 1's first, then the seconds.
    assert_eq!(records.len(), 4);
    let batch = stack(&records).unwrap();
    let starts = |r: usize| match &records[r] {
        Value::Dict(d) => d["starts"].clone(),
        _ => unreachable!(),
    };
    assert_eq!(
        starts(1),
        Value::Bool(Array::new([3], vec![true, false, true]).unwrap())
    );
    assert_eq!(
        starts(2),
        Value::Bool(Array::new([3], vec![true, false, false]).unwrap())
    );
    // With the actor's weights, the learner's log-likelihoods of the actions are the ones the
    // actor acted with: the unroll reached every step's memory as the actor did.
    let (log_probs, values, bootstrap) = learner.evaluate_rollouts(&batch).unwrap();
    let field = |r: usize, key: &str| match &records[r] {
        Value::Dict(d) => floats(&d[key]),
        _ => unreachable!(),
    };
    // Time-major: step `t` of rollout `b` at `t * 4 + b`.
    let behaviour: Vec<f64> = (0..12).map(|i| field(i % 4, "behaviour_log_probs")[i / 4]).collect();
    assert_eq!((log_probs.len(), values.len(), bootstrap.len()), (12, 12, 4));
    for (i, (l, b)) in log_probs.iter().zip(&behaviour).enumerate() {
        assert!((l - b).abs() < 1e-5, "step {i} (time-major): {l} against {b}");
    }
    // A rollout's bootstrap state is the next rollout's first state, its memory the memory
    // after the rollout's last step (zero where an episode ended there): the same value. In
    // time-major order, step 0 of rollout `b` is at `b`.
    for (first, next) in [(0, 2), (1, 3)] {
        assert!(
            (bootstrap[first] - values[next]).abs() < 1e-5,
            "rollout {first}: bootstrap {} against {}",
            bootstrap[first],
            values[next]
        );
    }
    // And the memory mattered: each rollout unrolled from a zero memory differs.
    let mut zeroed = batch.clone();
    if let Value::Dict(d) = &mut zeroed {
        d.insert(
            "memory".into(),
            Value::Tuple(vec![Value::Float32(Array::new([4, 4], vec![0.0; 16]).unwrap()); 2]),
        );
    }
    let (_, zero_values, _) = learner.evaluate_rollouts(&zeroed).unwrap();
    assert!(
        (0..12).any(|i| (zero_values[i] - values[i]).abs() > 1e-4),
        "{zero_values:?} {values:?}"
    );
    // The learner learns from it; a batch without memories is refused by name.
    assert!(learner.learn(&batch, 0.0).unwrap().loss.is_finite());
    let mut bare = batch.clone();
    if let Value::Dict(d) = &mut bare {
        d.remove("memory");
    }
    let err = learner.learn(&bare, 0.0).unwrap_err().to_string();
    assert!(err.contains("memory") && err.contains("recurrent"), "{err}");
}

#[test]
fn configs_a_memory_cannot_fit_are_refused_by_name() {
    let lstm = json!([{"type": "lstm", "units": 4}]);
    let err = PgConfig::parse(&json!({"type": "actor_critic", "network_spec": lstm}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("config.sample_episodes"), "{err}");
    for kind in ["dqn", "sac"] {
        let env = CartPoleNoVel::new(0);
        let err = agents::build_agent::<Candle>(
            &json!({"type": kind, "network_spec": lstm}),
            env.state_space(),
            env.action_space(),
            0,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            err.contains("config.network_spec[0]") && err.contains("LSTM"),
            "{kind}: {err}"
        );
    }
    // Copies whose stretches differ in length cannot be unrolled as one batch.
    let env = CartPoleNoVel::new(0);
    let (s, a) = (env.state_space().clone(), env.action_space().clone());
    let mut agent = PgAgent::<Candle>::new(config(json!({})), &s, &a, 5).unwrap();
    for t in 0..12 {
        let copies = if t < 3 { 2 } else { 1 };
        let states: Vec<Value> = (0..copies).map(|c| state(t + c)).collect();
        let actions = agent.get_actions(&states, true, 0.0).unwrap();
        for (copy, action) in actions.into_iter().enumerate() {
            let transition = Transition {
                state: states[copy].clone(),
                action,
                reward: 1.0,
                terminated: false,
                truncated: false,
                next_state: state(t + 1),
            };
            agent.observe(copy, transition).unwrap();
        }
    }
    let err = agent.update(0.0).unwrap_err().to_string();
    assert!(err.contains("[6, 3]") && err.contains("stepped unequally"), "{err}");
}
