//! The roles on their own: snapshot versions (DQN, PPO, SAC), the actor's in-graph
//! exploration, DQN's learning-rate schedule, and that every role can move to another thread.

use rlgraph_core::backend::prelude::*;
use std::collections::BTreeMap;

use agents::{
    dqn_actor, dqn_replay, pg_actor, sac_actor, stack, Actor, Agent, DqnConfig, DqnLearner, GraphActor, GraphLearner,
    ImpalaLearner, Learner, NStepBuffer, PgConfig, PgLearner, Rollout, RolloutAdder, RolloutBatch, SacConfig,
    SacLearner, Transition, WeightSnapshot,
};
use backend_candle::Candle;
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::HostTensor;
use rlgraph_envs::{CartPole, Env};

fn config(extra: serde_json::Value) -> DqnConfig {
    let mut spec = serde_json::json!({
        "type": "dqn",
        "memory_spec": {"type": "replay", "capacity": 64},
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh", "scope": "hidden"}],
        "update_spec": {"batch_size": 4}
    });
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    DqnConfig::parse(&spec).unwrap()
}

fn spaces() -> (Space, Space) {
    let env = CartPole::new(0);
    (env.state_space().clone(), env.action_space().clone())
}

/// `n` CartPole-like states spread over the observation range.
fn states(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let x = i as f32 / n as f32 - 0.5;
            Value::Float32(Array::new([4], vec![x, -x, 0.2 * x, 1.0 - x]).unwrap())
        })
        .collect()
}

/// A batch of four hand-made transitions.
fn batch() -> Value {
    let s = stack(&states(4)).unwrap();
    let sp = stack(&states(8)[4..]).unwrap();
    Value::Dict(BTreeMap::from([
        ("states".to_string(), s),
        ("next_states".to_string(), sp),
        (
            "actions".to_string(),
            Value::Int32(Array::new([4], vec![0, 1, 1, 0]).unwrap()),
        ),
        (
            "rewards".to_string(),
            Value::Float32(Array::new([4], vec![1.0, 0.5, -1.0, 2.0]).unwrap()),
        ),
        (
            "terminals".to_string(),
            Value::Bool(Array::new([4], vec![false, false, true, false]).unwrap()),
        ),
    ]))
}

fn floats(t: &HostTensor) -> Vec<f64> {
    t.data.to_f64()
}

#[test]
fn snapshots_hold_the_policy_only_and_the_actor_knows_their_version() {
    let c = config(serde_json::json!({}));
    let (s, a) = spaces();
    let mut learner = DqnLearner::<Candle>::new(&c, &s, &a, 3).unwrap();
    let mut actor = dqn_actor::<Candle>(&c, &s, &a, 3).unwrap();
    assert_eq!(actor.version(), None);

    let first = learner.publish().unwrap();
    assert_eq!(first.version, 1);
    // The policy's kernels and biases; no target network, no optimizer slots.
    assert!(!first.weights.is_empty());
    for path in first.weights.keys() {
        assert!(path.starts_with("dqn-agent/policy/"), "{path}");
    }
    let all = learner.executor().variables().unwrap();
    assert!(all.keys().any(|k| k.starts_with("dqn-agent/target-policy/")));
    assert!(all.len() > first.weights.len());

    actor.load(&first).unwrap();
    assert_eq!(actor.version(), Some(1));
    // After loading, the actor's Q-values are the learner's, exactly.
    let q = |exec: &mut rlgraph_core::GraphExecutor<Candle>| {
        exec.execute("get_q_values", &[stack(&states(6)).unwrap()]).unwrap()
    };
    assert_eq!(q(actor.executor_mut()), q(learner.executor_mut()));

    // Each update and publication moves the version by one; the actor follows.
    for expected in 2..=4 {
        learner.learn(&batch(), 0.0).unwrap();
        let snapshot = learner.publish().unwrap();
        assert_eq!(snapshot.version, expected);
        assert_ne!(q(actor.executor_mut()), q(learner.executor_mut()));
        actor.load(&snapshot).unwrap();
        assert_eq!(actor.version(), Some(expected));
        assert_eq!(q(actor.executor_mut()), q(learner.executor_mut()));
    }
    assert_eq!(learner.updates(), 3);

    // A snapshot that lacks one of the actor's variables is refused whole: neither the
    // weights nor the version change.
    let mut broken = learner.publish().unwrap();
    let before = (actor.executor().variables().unwrap(), actor.version());
    let gone = broken.weights.keys().next().unwrap().clone();
    broken.weights.remove(&gone);
    let err = actor.load(&broken).unwrap_err().to_string();
    assert!(err.contains(&gone) && err.contains("snapshot 5"), "{err}");
    assert_eq!((actor.executor().variables().unwrap(), actor.version()), before);
}

fn ppo_config() -> PgConfig {
    PgConfig::parse(&serde_json::json!({
        "type": "ppo",
        "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}],
        "value_function_spec": [{"type": "dense", "units": 8, "activation": "tanh"}],
        "update_spec": {"batch_size": 6, "sample_size": 3, "num_iterations": 2}
    }))
    .unwrap()
}

fn sac_config() -> SacConfig {
    SacConfig::parse(&serde_json::json!({
        "type": "sac",
        "network_spec": [{"type": "dense", "units": 8, "activation": "relu"}],
        "value_function_spec": [{"type": "dense", "units": 8, "activation": "relu"}],
        "update_spec": {"batch_size": 4}
    }))
    .unwrap()
}

/// The greedy actions of an actor and of the learner's own graph on the same states.
fn greedy_pair<B: rlgraph_core::Backend>(
    actor: &mut GraphActor<B>,
    learner: &mut rlgraph_core::GraphExecutor<B>,
) -> (Value, Value) {
    let s = stack(&states(6)).unwrap();
    let mine = actor
        .executor_mut()
        .execute("get_deterministic_action", std::slice::from_ref(&s))
        .unwrap();
    let theirs = learner.execute("get_deterministic_action", &[s]).unwrap();
    (mine[0].clone(), theirs[0].clone())
}

#[test]
fn ppo_and_sac_actors_follow_their_learners_snapshots() {
    let (s, a) = spaces();
    // PPO: the snapshot is the networks' variables (policy and value function), nothing
    // of the optimizer.
    let c = ppo_config();
    let mut learner = PgLearner::<Candle>::new(&c, &s, &a, 5).unwrap();
    let mut actor = pg_actor::<Candle>(&c, &s, &a, 5).unwrap();
    let first = learner.publish().unwrap();
    assert_eq!(first.version, 1);
    assert!(first.weights.keys().all(|k| k.starts_with("ppo-agent/networks/")));
    assert!(first.weights.keys().any(|k| k.contains("value-function")));
    assert!(learner.executor().variables().unwrap().len() > first.weights.len());
    // The actor holds the policy's variables (its value function is never called, so it
    // has none of those); each must equal the snapshot's.
    let holds_snapshot = |actor: &GraphActor<Candle>, snapshot: &WeightSnapshot| {
        let mine = actor.executor().variables().unwrap();
        assert!(mine.keys().any(|k| k.contains("/policy/")));
        mine.iter().all(|(k, v)| snapshot.weights.get(k) == Some(v))
    };
    assert!(!holds_snapshot(&actor, &first));
    actor.load(&first).unwrap();
    assert!(holds_snapshot(&actor, &first));
    let (mine, theirs) = greedy_pair(&mut actor, learner.executor_mut());
    assert_eq!(mine, theirs);
    // Six steps of one episode cut after the sixth, as a worker's rollout hands them over.
    let steps: Vec<Transition> = states(7)
        .windows(2)
        .enumerate()
        .map(|(i, w)| Transition {
            state: w[0].clone(),
            action: Value::i32((i % 2) as i32),
            reward: 1.0,
            terminated: false,
            truncated: false,
            next_state: w[1].clone(),
        })
        .collect();
    let mut rollout = Rollout::new(16, &s, &a);
    for t in steps {
        rollout.push(0, t);
    }
    let steps = rollout.recent_steps(6);
    // Through the `Learner` trait the batch travels as a Dict; it learns exactly what the
    // direct call learns.
    let mut twin = PgLearner::<Candle>::new(&c, &s, &a, 5).unwrap();
    let direct = twin.learn_rollout(&steps, 0.5).unwrap();
    let learned = learner.learn(&steps.to_value().unwrap(), 0.5).unwrap();
    assert_eq!(learned.loss, direct);
    assert_eq!(
        learner.executor().variables().unwrap(),
        twin.executor().variables().unwrap()
    );
    assert_eq!(
        RolloutBatch::from_value(&steps.to_value().unwrap(), "b").unwrap(),
        steps
    );
    let second = learner.publish().unwrap();
    assert_eq!(second.version, 2);
    assert_ne!(second.weights, first.weights);
    actor.load(&second).unwrap();
    assert_eq!(actor.version(), Some(2));
    assert!(holds_snapshot(&actor, &second));

    // SAC: the snapshot is the policy alone (no critics, targets or alpha); discrete actions
    // leave the actor as integers, argmaxed in its graph.
    let c = sac_config();
    let mut learner = SacLearner::<Candle>::new(&c, &s, &a, 5).unwrap();
    let mut actor = sac_actor::<Candle>(&c, &s, &a, 5).unwrap();
    let mut snapshot = learner.publish().unwrap();
    assert!(snapshot.weights.keys().all(|k| k.starts_with("sac-agent/policy/")));
    for _ in 0..2 {
        learner.learn(&batch(), 0.0).unwrap();
        snapshot = learner.publish().unwrap();
    }
    assert_eq!((snapshot.version, learner.updates()), (3, 2));
    actor.load(&snapshot).unwrap();
    assert_eq!(actor.version(), Some(3));
    let acted = actor.act(&states(6), true, 0.0).unwrap();
    assert!(acted.actions.iter().all(|x| a.contains(x)), "{:?}", acted.actions);
    assert!(acted.extras.is_empty());
}

#[test]
fn a_learning_rate_schedule_changes_dqns_step_size() {
    // SGD with the learning rate falling linearly from 0.1 to 0: the first step from the
    // same weights on the same batch has the same gradient g, so it moves the weights by
    // -lr(t) g: at t = 0.75 a quarter as far as at t = 0, and at t = 1 not at all.
    let c = config(serde_json::json!({
        "optimizer_spec": {"type": "sgd", "learning_rate": ["linear", 0.1, 0.0]}
    }));
    let (s, a) = spaces();
    let step = |t: f64| -> Vec<f64> {
        let mut learner = DqnLearner::<Candle>::new(&c, &s, &a, 11).unwrap();
        let before = learner.publish().unwrap().weights;
        learner.learn(&batch(), t).unwrap();
        let after = learner.publish().unwrap().weights;
        before
            .iter()
            .flat_map(|(k, v)| {
                floats(&after[k])
                    .into_iter()
                    .zip(floats(v))
                    .map(|(x, y)| x - y)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (d0, d75, d1) = (step(0.0), step(0.75), step(1.0));
    let norm = |d: &[f64]| d.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(norm(&d0) > 1e-4, "the step at t = 0 moved nothing");
    for (x, y) in d0.iter().zip(&d75) {
        assert!((y - 0.25 * x).abs() <= 1e-6 + 1e-4 * x.abs(), "{y} vs 0.25 * {x}");
    }
    assert_eq!(norm(&d1), 0.0);
}

#[test]
fn exploration_runs_in_the_graph_from_the_seeded_rng() {
    // Epsilon falls linearly from 1 to 0 over the run.
    let c = config(serde_json::json!({
        "exploration_spec": {"epsilon_spec": {"decay_spec": ["linear", 1.0, 0.0]}}
    }));
    let (s, a) = spaces();
    let xs = states(2000);
    let actor = |seed| dqn_actor::<Candle>(&c, &s, &a, seed).unwrap();
    let actions =
        |actor: &mut GraphActor<Candle>, explore, t| -> Vec<Value> { actor.act(&xs, explore, t).unwrap().actions };
    let mut x = actor(5);
    let greedy = actions(&mut x, false, 0.0);
    // Epsilon 0 at the end of the run: the greedy actions.
    assert_eq!(actions(&mut x, true, 1.0), greedy);
    // Epsilon 1 at the start: every action uniform over two, so half differ from the greedy
    // ones (2000 draws: a standard deviation of about 0.011).
    let random = actions(&mut x, true, 0.0);
    let differ = random.iter().zip(&greedy).filter(|(r, g)| r != g).count() as f64 / 2000.0;
    assert!((0.45..0.55).contains(&differ), "{differ}");
    // The same seed draws the same actions; another seed others.
    let mut y = actor(5);
    actions(&mut y, false, 0.0);
    actions(&mut y, true, 1.0);
    assert_eq!(actions(&mut y, true, 0.0), random);
    let mut z = actor(6);
    assert_ne!(actions(&mut z, true, 0.0), random);
}

#[test]
fn every_role_can_move_to_another_thread() {
    fn send<T: Send + 'static>(t: T) {
        std::thread::spawn(move || drop(t)).join().unwrap();
    }
    let c = config(serde_json::json!({}));
    let (s, a) = spaces();
    send(dqn_actor::<Candle>(&c, &s, &a, 0).unwrap());
    send(DqnLearner::<Candle>::new(&c, &s, &a, 0).unwrap());
    send(dqn_replay(&c, &s, &a).unwrap());
    send(NStepBuffer::new(3, 0.9, &s, &a));
    send(RolloutAdder::new(4, &s, &a, None).unwrap());
    let impala = agents::ImpalaConfig::parse(&serde_json::json!({
        "type": "single-impala",
        "network_spec": [{"type": "dense", "units": 4}]
    }))
    .unwrap();
    send(ImpalaLearner::<Candle>::new(&impala, &s, &a, 0).unwrap());
    let ppo = ppo_config();
    send(pg_actor::<Candle>(&ppo, &s, &a, 0).unwrap());
    send(PgLearner::<Candle>::new(&ppo, &s, &a, 0).unwrap());
    send(Rollout::new(8, &s, &a));
    let sac = sac_config();
    send(sac_actor::<Candle>(&sac, &s, &a, 0).unwrap());
    send(SacLearner::<Candle>::new(&sac, &s, &a, 0).unwrap());
    send(
        agents::build_agent::<Candle>(
            &serde_json::json!({"type": "ppo", "network_spec": [{"type": "dense", "units": 4}]}),
            &s,
            &a,
            0,
        )
        .unwrap(),
    );
    send(WeightSnapshot {
        version: 1,
        weights: BTreeMap::new(),
    });
}

#[test]
fn an_actor_acts_on_a_device_batch_as_on_host_values() {
    use rlgraph_core::{Device, Tree};
    let c = config(serde_json::json!({}));
    let (s, a) = spaces();
    let xs = states(64);
    let (mut host, mut device) = (
        dqn_actor::<Candle>(&c, &s, &a, 9).unwrap(),
        dqn_actor::<Candle>(&c, &s, &a, 9).unwrap(),
    );
    let flat: Vec<f32> = xs
        .iter()
        .flat_map(|v| match v {
            Value::Float32(x) => x.data().to_vec(),
            other => panic!("{other:?}"),
        })
        .collect();
    let batch = Tree::Leaf(Candle::from_host(&HostTensor::f32([64, 4], flat).unwrap(), Device::Cpu).unwrap());
    for (explore, t) in [(true, 0.3), (false, 0.0), (true, 0.9)] {
        let want = host.act(&xs, explore, t).unwrap().actions;
        let out = device.act_tensors(&batch, explore, t).unwrap();
        let Some(Tree::Leaf(actions)) = out.first() else {
            panic!("no actions")
        };
        let got = Candle::to_host(actions).unwrap().data.to_f64();
        let want: Vec<f64> = want
            .iter()
            .map(|v| match v {
                Value::Int32(x) => x.data()[0] as f64,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, want, "explore {explore} at {t}");
    }
}

#[test]
fn weights_set_through_a_boxed_agent_reach_its_actor() {
    let (s, a) = spaces();
    let specs = [
        serde_json::json!({"type": "dqn", "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}]}),
        serde_json::json!({"type": "ppo", "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}]}),
        serde_json::json!({"type": "sac", "network_spec": [{"type": "dense", "units": 8, "activation": "relu"}],
            "value_function_spec": [{"type": "dense", "units": 8}]}),
        serde_json::json!({"type": "single-impala", "network_spec": [{"type": "dense", "units": 8}]}),
    ];
    let dir = std::env::temp_dir().join(format!("rlgraph-roles-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for spec in specs {
        let build = |seed| agents::build_agent::<Candle>(&spec, &s, &a, seed).unwrap();
        let (mut source, mut set, mut imported) = (build(1), build(2), build(3));
        let greedy = |agent: &mut Box<dyn Agent + Send>| agent.get_actions(&states(32), false, 0.0).unwrap();
        let want = greedy(&mut source);
        // Different initial weights act differently on 32 states.
        assert_ne!(greedy(&mut set), want, "{spec}");
        // Through `Agent for Box<_>`, as generic code (a worker over `A: Agent`) calls it; a
        // method call on the box without the trait in scope would reach the inner agent.
        Agent::set_weights(&mut set, &source.get_weights().unwrap()).unwrap();
        assert_eq!(greedy(&mut set), want, "{spec}");
        let file = dir.join("model.safetensors");
        source.export_model(&file).unwrap();
        Agent::import_model(&mut imported, &file).unwrap();
        assert_eq!(greedy(&mut imported), want, "{spec}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
