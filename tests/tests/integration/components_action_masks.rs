//! Action masks (Gymnasium's convention: non-zero where an action is valid) in the policy and
//! in epsilon-greedy exploration, with logits set by hand and every expected number worked
//! out by hand over the valid actions only, on candle and on tch.

use rlgraph_components::{epsilon_exploration, policy, policy_with, PolicyOptions, TimeDependent};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{batch, floats};

fn ints(data: Vec<i32>) -> Value {
    Value::Int32(Array::new([data.len()], data).unwrap())
}

fn masks(rows: usize, data: Vec<u8>) -> Value {
    Value::Uint8(Array::new([rows, data.len() / rows], data).unwrap())
}

fn tol() -> Tolerance {
    Tolerance::new(1e-5, 1e-5)
}

fn mask_space(n: usize) -> Space {
    batch(&format!(
        r#"{{"type": "int-box", "low": 0, "high": 2, "dtype": "uint8", "shape": [{n}]}}"#
    ))
}

both_backends! {
    fn a_masked_categorical_sees_only_the_valid_actions<B>() {
        let actions = batch(r#"{"type": "int-box", "high": 3}"#);
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let spaces = [("nn_inputs", states), ("actions", actions), ("action_mask", mask_space(3))];
        let mut t = ComponentTest::<B>::new(p, spaces, 1).unwrap();
        t.set_variable("action-adapter/kernel", &floats(&[2, 3], vec![1.0, 0.0, 2.0, 0.0, 1.0, 1.0])).unwrap();
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        // logits [1, 2, 4]; action 2 (the greedy one unmasked) is invalid, so over {0, 1}:
        // log p(0) = 1 - ln(e + e^2), the greedy action is 1.
        let m = || masks(1, vec![1, 1, 0]);
        let lse = (1f64.exp() + 2f64.exp()).ln();
        t.assert_call("get_adapter_outputs", &[x(), m()], &[floats(&[1, 3], vec![1.0, 2.0, -1e9])], Tolerance::new(1e-5, 1.0));
        t.assert_call("get_deterministic_action", &[x(), m()], &[ints(vec![1])], tol());
        t.assert_call("get_log_likelihood", &[x(), ints(vec![0]), m()], &[floats(&[1], vec![1.0 - lse])], tol());
        let h: f64 = -[1.0f64, 2.0].iter().map(|l| (l - lse).exp() * (l - lse)).sum::<f64>();
        t.assert_call("get_entropy", &[x(), m()], &[floats(&[1], vec![h])], tol());
        // Sampling never draws the invalid action; both valid ones come up (p(0) = 0.27).
        let (mut seen, mut invalid) = ([0usize; 3], 0);
        for _ in 0..400 {
            let out = t.call("get_action_and_log_likelihood", &[x(), m()]).unwrap();
            let Value::Int32(a) = &out[0] else { panic!("{out:?}") };
            let a = a.data()[0] as usize;
            seen[a] += 1;
            invalid += usize::from(a == 2);
            let logit = [1.0, 2.0, 4.0][a];
            rlgraph_core::check_close(&out[1], &floats(&[1], vec![logit - lse]), tol()).unwrap();
        }
        assert_eq!(invalid, 0, "{seen:?}");
        assert!(seen[0] > 40 && seen[1] > 200, "{seen:?}");
        // A batch of two with different masks: each row's greedy action is its best valid one.
        let x2 = floats(&[2, 2], vec![1.0, 2.0, 1.0, 2.0]);
        t.assert_call("get_deterministic_action", &[x2, masks(2, vec![1, 0, 1, 1, 1, 0])], &[ints(vec![2, 1])], tol());
    }

    fn masks_of_the_wrong_shape_or_policy_are_refused_by_name<B>() {
        let actions = batch(r#"{"type": "int-box", "high": 3}"#);
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let spaces = [("nn_inputs", states.clone()), ("actions", actions), ("action_mask", mask_space(4))];
        let err = ComponentTest::<B>::new(p, spaces, 1).err().unwrap().to_string();
        assert!(err.contains("policy") && err.contains("action_mask") && err.contains("[3]"), "{err}");
        // A Gaussian policy has no discrete actions to mask.
        let floats_space = batch(r#"{"type": "float-box", "shape": [1]}"#);
        let p = policy_with::<B>("policy", vec![], &floats_space, PolicyOptions::default()).unwrap();
        let spaces = [("nn_inputs", states), ("actions", floats_space), ("action_mask", mask_space(1))];
        let err = ComponentTest::<B>::new(p, spaces, 1).err().unwrap().to_string();
        assert!(err.contains("action_mask") && err.contains("one discrete action"), "{err}");
    }

    fn masked_epsilon_greedy_draws_uniformly_among_the_valid_actions<B>() {
        let actions = batch(r#"{"type": "int-box", "high": 4}"#);
        let e = epsilon_exploration::<B>("exploration", TimeDependent::Constant(1.0), &actions).unwrap();
        let spaces = [
            ("sample", actions.clone()),
            ("actions", actions),
            ("time_percentage", Space::from_json_str(r#"{"type": "float-box"}"#).unwrap()),
            ("action_mask", mask_space(4)),
        ];
        let mut t = ComponentTest::<B>::new(e, spaces, 3).unwrap();
        let t0 = floats(&[], vec![0.0]);
        // Epsilon 1: every item explores. Row 0 may take 1 or 3, row 1 only 2.
        let m = || masks(2, vec![0, 1, 0, 1, 0, 0, 1, 0]);
        let mut counts = [[0usize; 4]; 2];
        for _ in 0..400 {
            let out = t.call("get_action", &[ints(vec![0, 0]), t0.clone(), m()]).unwrap();
            let Value::Int32(a) = &out[0] else { panic!("{out:?}") };
            for (row, &x) in a.data().iter().enumerate() {
                counts[row][x as usize] += 1;
            }
        }
        assert_eq!(counts[1], [0, 0, 400, 0], "{counts:?}");
        assert_eq!(counts[0][0] + counts[0][2], 0, "{counts:?}");
        // 200 expected each: four standard deviations (10 each) either side.
        assert!((160..=240).contains(&counts[0][1]), "{counts:?}");
        // An exploring item whose mask allows nothing is an error naming it.
        let err = t.call("get_action", &[ints(vec![0, 0]), t0, masks(2, vec![0, 1, 0, 0, 0, 0, 0, 0])]).unwrap_err().to_string();
        assert!(err.contains("exploration") && err.contains("item 1") && err.contains("allows no action"), "{err}");
    }
}
