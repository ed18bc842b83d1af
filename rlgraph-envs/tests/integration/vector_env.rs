//! Vector environments: auto-reset, seeding, and threaded stepping equal to sequential.

use rlgraph_envs::{make, CartPole, DeterministicEnv, Env, RandomEnv, Stepping, VectorEnv};
use rlgraph_spaces::{FloatBox, IntBox, Space, Value};

#[test]
fn deterministic_env_counts_and_vector_env_resets_at_the_terminal() {
    let envs: Vec<Box<dyn Env>> = (0..3)
        .map(|_| Box::new(DeterministicEnv::new(0.0, -100.0, 10)) as Box<dyn Env>)
        .collect();
    let mut vector = VectorEnv::new(envs, Stepping::Sequential).unwrap();
    vector.reset_all(None).unwrap();
    let actions = vec![Value::i32(0); 3];
    for t in 1..=10 {
        let steps = vector.step(&actions).unwrap();
        for s in &steps {
            assert_eq!(s.step.reward, -100.0 + t as f64);
            assert_eq!(s.step.terminated, t == 10);
            assert_eq!(s.reset_observation.is_some(), t == 10);
        }
        if t == 10 {
            assert_eq!(
                steps[0].next_observation(),
                &Value::Float32(rlgraph_spaces::Array::new([1], vec![0.0]).unwrap())
            );
        }
    }
    // After the auto-reset the count starts again.
    assert_eq!(vector.step(&actions).unwrap()[0].step.reward, -99.0);
}

#[test]
fn threaded_stepping_equals_sequential() {
    let run = |stepping| {
        let envs: Vec<Box<dyn Env>> = (0..8).map(|i| Box::new(CartPole::new(i)) as Box<dyn Env>).collect();
        let mut vector = VectorEnv::new(envs, stepping).unwrap();
        let mut log = vec![vector.reset_all(Some(5)).unwrap()];
        for t in 0..300 {
            let actions: Vec<Value> = (0..8).map(|i| Value::i32((t * 7 + i) % 3 % 2)).collect();
            log.push(
                vector
                    .step(&actions)
                    .unwrap()
                    .iter()
                    .map(|s| s.next_observation().clone())
                    .collect(),
            );
        }
        log
    };
    assert_eq!(run(Stepping::Sequential), run(Stepping::Threaded));
}

#[test]
fn mismatched_vectors_and_action_counts_are_errors() {
    let envs = vec![make("CartPole-v1", 0).unwrap(), make("MountainCar-v0", 0).unwrap()];
    assert!(VectorEnv::new(envs, Stepping::Sequential).is_err());
    assert!(VectorEnv::new(vec![], Stepping::Sequential).is_err());
    let mut vector = VectorEnv::new(vec![make("CartPole-v1", 0).unwrap()], Stepping::Sequential).unwrap();
    vector.reset_all(Some(0)).unwrap();
    assert!(vector.step(&[]).is_err());
}

#[test]
fn random_env_is_seeded_and_stays_in_its_spaces() {
    let state = Space::from(FloatBox::new([2]));
    let action = Space::from(IntBox::new(3).unwrap());
    let mut a = RandomEnv::new(state.clone(), action.clone(), 0.1, 0);
    let mut b = RandomEnv::new(state.clone(), action, 0.1, 9);
    assert_eq!(a.reset(Some(1)).unwrap(), b.reset(Some(1)).unwrap());
    let mut terminals = 0;
    for _ in 0..2000 {
        let sa = a.step(&Value::i32(2)).unwrap();
        assert_eq!(sa, b.step(&Value::i32(2)).unwrap());
        assert!(state.contains(&sa.observation));
        if sa.terminated {
            terminals += 1;
            a.reset(None).unwrap();
            b.reset(None).unwrap();
        }
    }
    // About 10% terminals: 200 expected; a binomial standard deviation is about 13.
    assert!((140..260).contains(&terminals), "{terminals}");
    assert!(a.step(&Value::i32(3)).is_err());
}

#[test]
fn float_actions_are_clipped_into_the_bounds_and_nan_is_still_refused() {
    // Pendulum's torque is bounded to [-2, 2]: 5.0 through the vector acts as 2.0 does on a
    // lone copy from the same seed (Gymnasium's ClipAction), -7.5 as -2.0.
    let torque = |x: f32| Value::Float32(rlgraph_spaces::Array::new(vec![1], vec![x]).unwrap());
    let mut vector = VectorEnv::make("Pendulum-v1", 2, 3, None).unwrap();
    let mut lone = [make("Pendulum-v1", 3).unwrap(), make("Pendulum-v1", 4).unwrap()];
    assert_eq!(
        vector.reset_all(None).unwrap(),
        lone.iter_mut().map(|e| e.reset(None).unwrap()).collect::<Vec<_>>()
    );
    for _ in 0..5 {
        let steps = vector.step(&[torque(5.0), torque(-7.5)]).unwrap();
        assert_eq!(steps[0].step, lone[0].step(&torque(2.0)).unwrap());
        assert_eq!(steps[1].step, lone[1].step(&torque(-2.0)).unwrap());
    }
    let err = vector.step(&[torque(f32::NAN), torque(0.0)]).unwrap_err().to_string();
    assert!(err.contains("NaN") || err.contains("action"), "{err}");
}
