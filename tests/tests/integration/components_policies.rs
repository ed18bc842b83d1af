//! Policies (discrete and continuous) and the dueling policy, with weights set by hand and
//! outputs computed by hand, on candle and on tch.

use rlgraph_components::{dueling_policy, from_spec_with, policy, PolicyOptions};
use rlgraph_core::spaces::{Array, IntBox, Space, Value};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{batch, floats};

fn ints(data: Vec<i32>) -> Value {
    Value::Int32(Array::new([data.len()], data).unwrap())
}

fn tol() -> Tolerance {
    Tolerance::new(1e-5, 1e-5)
}

both_backends! {
    fn categorical_policy<B>() {
        let actions = batch(r#"{"type": "int-box", "high": 3}"#);
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions)], 1).unwrap();
        t.set_variable("action-adapter/kernel", &floats(&[2, 3], vec![1.0, 0.0, 2.0, 0.0, 1.0, 1.0])).unwrap();
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        // logits = [1, 2, 4]
        let lse = (1f64.exp() + 2f64.exp() + 4f64.exp()).ln();
        t.assert_call("get_adapter_outputs", &[x()], &[floats(&[1, 3], vec![1.0, 2.0, 4.0])], tol());
        t.assert_call("get_deterministic_action", &[x()], &[ints(vec![2])], tol());
        t.assert_call("get_log_likelihood", &[x(), ints(vec![0])], &[floats(&[1], vec![1.0 - lse])], tol());
        let h: f64 = -[1.0f64, 2.0, 4.0].iter().map(|l| (l - lse).exp() * (l - lse)).sum::<f64>();
        t.assert_call("get_entropy", &[x()], &[floats(&[1], vec![h])], tol());
        let out = t.call("get_action_and_log_likelihood", &[x()]).unwrap();
        let Value::Int32(a) = &out[0] else { panic!() };
        let logit = [1.0, 2.0, 4.0][a.data()[0] as usize];
        rlgraph_core::check_close(&out[1], &floats(&[1], vec![logit - lse]), tol()).unwrap();
    }

    fn gaussian_policy<B>() {
        let actions = batch(r#"{"type": "float-box", "shape": [1]}"#);
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions)], 1).unwrap();
        // mean = 0.5 x0, log-std = ln 2.
        t.set_variable("action-adapter/kernel", &floats(&[2, 2], vec![0.5, 0.0, 0.0, 0.0])).unwrap();
        t.set_variable("action-adapter/bias", &floats(&[2], vec![0.0, 2f64.ln()])).unwrap();
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        t.assert_call("get_deterministic_action", &[x()], &[floats(&[1, 1], vec![0.5])], tol());
        let lp = -0.5 * (0.5f64).powi(2) - 2f64.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
        t.assert_call("get_log_likelihood", &[x(), floats(&[1, 1], vec![1.5])], &[floats(&[1, 1], vec![lp])], tol());
    }

    fn bounded_actions_get_a_squashed_gaussian<B>() {
        let actions = batch(r#"{"type": "float-box", "shape": [1], "low": -2.0, "high": 2.0}"#);
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions)], 1).unwrap();
        t.set_variable("action-adapter/kernel", &floats(&[2, 2], vec![0.5, 0.0, 0.0, 0.0])).unwrap();
        t.set_variable("action-adapter/bias", &floats(&[2], vec![0.0, 2f64.ln()])).unwrap();
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        // mean 0.5, std 2 before squashing: the deterministic action is 2 tanh(0.5) = 0.924234.
        t.assert_call("get_deterministic_action", &[x()], &[floats(&[1, 1], vec![0.924234])], tol());
        // a = 1.5: y = 0.75, u = atanh(0.75) = 0.972955, z = (u - 0.5) / 2 = 0.236478,
        // log N = -0.027961 - ln 2 - ln(2 pi)/2 = -1.640047; minus ln(1 - 0.5625), minus ln 2:
        // -1.640047 + 0.826679 - 0.693147 = -1.506515.
        t.assert_call("get_log_likelihood", &[x(), floats(&[1, 1], vec![1.5])], &[floats(&[1, 1], vec![-1.506515])], Tolerance::new(1e-4, 1e-4));
        let out = t.call("get_action_and_log_likelihood", &[x()]).unwrap();
        let Value::Float32(a) = &out[0] else { panic!() };
        assert!((-2.0..=2.0).contains(&a.data()[0]));
    }

    fn dueling_policy_combines_value_and_advantages<B>() {
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let mut t = ComponentTest::<B>::new(dueling_policy::<B>("dueling-policy", vec![], &Space::from(IntBox::new(3).unwrap()), 2, None).unwrap(), [("nn_inputs", states)], 1).unwrap();
        t.set_variable("dense-layer-state-value-stream/kernel", &floats(&[2, 2], vec![1.0; 4])).unwrap();
        t.set_variable("state-value-node/kernel", &floats(&[2, 1], vec![0.5, 0.5])).unwrap();
        t.set_variable("action-adapter/kernel", &floats(&[2, 3], vec![1.0, 0.0, 2.0, 0.0, 1.0, 1.0])).unwrap();
        // h = [1, 2]; value stream relu([3, 3]) -> v = 3; a = [1, 2, 4], mean 7/3; q = v + a - 7/3.
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        let q: Vec<f64> = [1.0, 2.0, 4.0].iter().map(|a| 3.0 + a - 7.0 / 3.0).collect();
        t.assert_call("get_q_values", &[x()], &[floats(&[1], vec![3.0]), floats(&[1, 3], vec![1.0, 2.0, 4.0]), floats(&[1, 3], q)], tol());
        t.assert_call("get_action", &[x()], &[ints(vec![2])], tol());
    }

    fn dueling_policy_over_container_actions<B>() {
        // RLgraph's DuelingPolicy with container actions: one shared state-value stream, one
        // advantage stream per action, q = v + a - mean(a) over each element's categories.
        let actions = Space::from_json_str(r#"{"a": {"type": "int-box", "high": 2}, "b": {"type": "int-box", "high": 2, "shape": [2]}}"#).unwrap();
        let adapters = serde_json::json!({"a": {"weights_spec": [[1.0, 0.0], [0.0, 1.0]]}, "b": {"weights_spec": [[1.0, 0.0, 0.0, 2.0], [0.0, 1.0, 3.0, 0.0]]}});
        let adapters = rlgraph_components::AdapterSpec { spec: adapters, at: "action_adapter_spec".into() };
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = dueling_policy::<B>("dueling-policy", vec![], &actions, 2, Some(&adapters)).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states)], 1).unwrap();
        t.set_variable("dense-layer-state-value-stream/kernel", &floats(&[2, 2], vec![1.0; 4])).unwrap();
        t.set_variable("state-value-node/kernel", &floats(&[2, 1], vec![0.5, 0.5])).unwrap();
        // x = [1, 2]: v = 0.5 relu(3) + 0.5 relu(3) = 3. a: advantages [1, 2], mean 1.5, so
        // q = [2.5, 3.5]. b: [1, 2, 6, 2] as two elements [1, 2] (mean 1.5) and [6, 2]
        // (mean 4): q = [[2.5, 3.5], [5, 1]].
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        let dict = |a: Value, b: Value| Value::Dict([("a".to_string(), a), ("b".to_string(), b)].into());
        let advantages = dict(floats(&[1, 2], vec![1.0, 2.0]), floats(&[1, 2, 2], vec![1.0, 2.0, 6.0, 2.0]));
        let q = dict(floats(&[1, 2], vec![2.5, 3.5]), floats(&[1, 2, 2], vec![2.5, 3.5, 5.0, 1.0]));
        t.assert_call("get_q_values", &[x()], &[floats(&[1], vec![3.0]), advantages, q], tol());
        let greedy_b = Value::Int32(Array::new([1, 2], vec![1, 0]).unwrap());
        t.assert_call("get_action", &[x()], &[dict(ints(vec![1]), greedy_b)], tol());
        // An adapter keyed by an action that does not exist, and a continuous action, are refused.
        let wrong = rlgraph_components::AdapterSpec { spec: serde_json::json!({"c": {}}), at: "action_adapter_spec".into() };
        let err = dueling_policy::<B>("p", vec![], &actions, 2, Some(&wrong)).err().unwrap().to_string();
        assert!(err.contains("action_adapter_spec.c") && err.contains("a, b"), "{err}");
        let mixed = Space::from_json_str(r#"{"a": {"type": "int-box", "high": 2}, "f": {"type": "float-box", "shape": [1]}}"#).unwrap();
        let err = dueling_policy::<B>("p", vec![], &mixed, 2, None).err().unwrap().to_string();
        assert!(err.contains("action_space/f") && err.contains("bounded IntBox"), "{err}");
    }
}

both_backends! {
    fn action_adapter_spec_with_a_pre_network<B>() {
        // RLgraph's ActionAdapter: pre_network_spec layers, then the dense "action-layer" with
        // the adapter's own weights_spec / biases_spec; the network_spec as {scope, layers}.
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let actions = batch(r#"{"type": "int-box", "high": 3}"#);
        let spec = serde_json::json!({
            "type": "policy",
            "network_spec": {"scope": "net", "layers": [{"type": "dense", "units": 2, "weights_spec": 1.0, "biases_spec": false}]},
            "action_adapter_spec": {
                "pre_network_spec": [{"type": "dense", "units": 3, "activation": "relu", "weights_spec": 0.5, "biases_spec": false}],
                "weights_spec": [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -3.0]],
                "biases_spec": 0.25
            }
        });
        let p = from_spec_with::<B>(&spec, "policy_spec", Some(&actions)).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions.clone())], 0).unwrap();
        let mut vars: Vec<String> = t.executor().variable_infos().iter().map(|i| i.path.clone()).collect();
        vars.sort();
        assert_eq!(vars, ["policy/action-adapter/action-layer/bias", "policy/action-adapter/action-layer/kernel", "policy/action-adapter/dense-0/kernel", "policy/neural-network/dense-0/kernel"]);
        // x = [1, 2]: h = [3, 3]; pre = relu(0.5 * 6) = [3, 3, 3]; logits = [3, 6, -9] + 0.25.
        let x = floats(&[1, 2], vec![1.0, 2.0]);
        t.assert_call("get_adapter_outputs", std::slice::from_ref(&x), &[floats(&[1, 3], vec![3.25, 6.25, -8.75])], tol());
        t.assert_call("get_deterministic_action", &[x], &[ints(vec![1])], tol());
        // Adapters keyed by action need container actions.
        let keyed = serde_json::json!({"type": "dueling-policy", "network_spec": [], "action_adapter_spec": {"turn": {}}});
        let err = from_spec_with::<B>(&keyed, "policy_spec", Some(&actions)).err().unwrap().to_string();
        assert!(err.contains("action_adapter_spec") && err.contains("container"), "{err}");
        // For container actions each key must name an action.
        let dict = Space::from_json_str(r#"{"type": "dict", "spec": {"a": {"type": "int-box", "high": 2}}}"#).unwrap().with_batch_rank(true);
        let keyed = |key: &str| serde_json::json!({"type": "policy", "network_spec": [], "action_adapter_spec": {key: {"biases_spec": false}}});
        assert!(from_spec_with::<B>(&keyed("a"), "policy_spec", Some(&dict)).is_ok());
        let err = from_spec_with::<B>(&keyed("b"), "policy_spec", Some(&dict)).err().unwrap().to_string();
        assert!(err.contains("action_adapter_spec.b") && err.contains("the actions are a"), "{err}");
    }
}

mod value_heads {
    use super::*;
    use rlgraph_components::{shared_value_function_policy, value_function};

    both_backends! {
        fn value_function_and_shared_value_policy<B>() {
            let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
            let mut v = ComponentTest::<B>::new(value_function::<B>("value-function", vec![]), [("nn_inputs", states.clone())], 0).unwrap();
            v.set_variable("value-function-node/kernel", &floats(&[2, 1], vec![1.0, 2.0])).unwrap();
            v.set_variable("value-function-node/bias", &floats(&[1], vec![0.5])).unwrap();
            v.assert_call("value_output", &[floats(&[1, 2], vec![1.0, 2.0])], &[floats(&[1], vec![5.5])], tol());
            let actions = batch(r#"{"type": "int-box", "high": 3}"#);
            let p = shared_value_function_policy::<B>("policy", vec![], &actions, PolicyOptions::default()).unwrap();
            let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions)], 0).unwrap();
            t.set_variable("value-function-node/kernel", &floats(&[2, 1], vec![1.0, 2.0])).unwrap();
            t.set_variable("action-adapter/kernel", &floats(&[2, 3], vec![1.0, 0.0, 2.0, 0.0, 1.0, 1.0])).unwrap();
            t.assert_call("get_state_values", &[floats(&[1, 2], vec![1.0, 2.0])], &[floats(&[1], vec![5.0])], tol());
            t.assert_call("get_deterministic_action", &[floats(&[1, 2], vec![1.0, 2.0])], &[ints(vec![2])], tol());
        }

        fn dueling_policy_from_its_spec<B>() {
            let spec = serde_json::json!({"type": "dueling-policy", "units_state_value_stream": 4,
                                          "network_spec": [{"type": "dense", "units": 5, "activation": "tanh", "scope": "hidden"}]});
            let actions = batch(r#"{"type": "int-box", "high": 2}"#);
            let p = from_spec_with::<B>(&spec, "policy_spec", Some(&actions)).unwrap();
            let mut t = ComponentTest::<B>::new(p, [("nn_inputs", batch(r#"{"type": "float-box", "shape": [4]}"#))], 0).unwrap();
            let (_, out) = t.call_sampled("get_q_values", Some(3)).unwrap();
            assert_eq!(out[2].shape().unwrap(), &[3, 2]);
            assert_eq!(t.get_variable("neural-network/hidden/kernel").unwrap().shape().unwrap(), &[4, 5]);
            let err = from_spec_with::<B>(&spec, "policy_spec", None).err().unwrap().to_string();
            assert!(err.contains("action_space"), "{err}");
        }
    }
}

both_backends! {
    fn dict_action_spaces_get_a_joint_distribution<B>() {
        let actions = Space::from_json_str(r#"{"a": {"type": "int-box", "high": 2}, "b": {"type": "int-box", "high": 3}}"#).unwrap().with_batch_rank(true);
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions.clone())], 1).unwrap();
        // x = [1, 0] picks the first kernel rows: logits a = [1, 2], b = [0, 1, 3].
        t.set_variable("action-adapter-0/kernel", &floats(&[2, 2], vec![1.0, 2.0, 0.0, 0.0])).unwrap();
        t.set_variable("action-adapter-1/kernel", &floats(&[2, 3], vec![0.0, 1.0, 3.0, 0.0, 0.0, 0.0])).unwrap();
        let x = || floats(&[1, 2], vec![1.0, 0.0]);
        let dict = |a: i32, b: i32| Value::Dict([("a".to_string(), ints(vec![a])), ("b".to_string(), ints(vec![b]))].into());
        t.assert_call("get_deterministic_action", &[x()], &[dict(1, 2)], tol());
        // log pi(a = 0) + log pi(b = 1) = (1 - lse(1, 2)) + (1 - lse(0, 1, 3))
        // = (1 - 2.313262) + (1 - 3.169846) = -3.483108.
        t.assert_call("get_log_likelihood", &[x(), dict(0, 1)], &[floats(&[1], vec![-3.483108])], Tolerance::new(1e-5, 1e-5));
        // The entropies of the two Categoricals add: 0.582203 + 0.649975 (by their formula).
        let h = |l: &[f64]| {
            let lse = l.iter().map(|v| v.exp()).sum::<f64>().ln();
            -l.iter().map(|v| (v - lse).exp() * (v - lse)).sum::<f64>()
        };
        t.assert_call("get_entropy", &[x()], &[floats(&[1], vec![h(&[1.0, 2.0]) + h(&[0.0, 1.0, 3.0])])], Tolerance::new(1e-5, 1e-5));
        // A sampled action lies in the space, and its log-likelihood is the one returned with it.
        let out = t.call("get_action_and_log_likelihood", &[x()]).unwrap();
        assert!(actions.contains(&out[0]), "{:?}", out[0]);
        let again = t.call("get_log_likelihood", &[x(), out[0].clone()]).unwrap();
        rlgraph_core::check_close(&again[0], &out[1], Tolerance::new(1e-5, 1e-5)).unwrap();
        // A Text leaf has no distribution: the error names the leaf.
        let bad = Space::from_json_str(r#"{"a": {"type": "int-box", "high": 2}, "t": "text"}"#).unwrap();
        let err = policy::<B>("policy", vec![], &bad).err().unwrap().to_string();
        assert!(err.contains("action_space/t"), "{err}");
    }
}

both_backends! {
    fn beta_and_gumbel_softmax_adapters_from_policy_specs<B>() {
        use rlgraph_components::from_spec_with;
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let bounded = batch(r#"{"type": "float-box", "shape": [1], "low": -2.0, "high": 2.0}"#);
        let spec = serde_json::json!({"type": "policy", "network_spec": [], "bounded_distribution_type": "beta"});
        let p = from_spec_with::<B>(&spec, "policy_spec", Some(&bounded)).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states.clone()), ("actions", bounded.clone())], 1).unwrap();
        // Adapter outputs [ln(e - 1), 0] give alpha = softplus + 1 = 2 and beta = 1 + ln 2; the
        // mean 2 / 3.693147 = 0.541542 on [-2, 2] is -2 + 4 * 0.541542 = 0.166168.
        t.set_variable("action-adapter/kernel", &floats(&[2, 2], vec![(std::f64::consts::E - 1.0).ln(), 0.0, 0.0, 0.0])).unwrap();
        let x = || floats(&[1, 2], vec![1.0, 2.0]);
        t.assert_call("get_deterministic_action", &[x()], &[floats(&[1, 1], vec![0.166168])], Tolerance::new(1e-5, 1e-5));
        let out = t.call("get_action", &[x()]).unwrap();
        assert!(bounded.contains(&out[0]), "{:?}", out[0]);
        // Gumbel-softmax over three categories: the deterministic action is the one-hot argmax.
        let discrete = batch(r#"{"type": "int-box", "high": 3}"#);
        let spec = serde_json::json!({"type": "policy", "network_spec": [], "gumbel_softmax_temperature": 0.5});
        let p = from_spec_with::<B>(&spec, "policy_spec", Some(&discrete)).unwrap();
        // Its actions are probability vectors over the three categories.
        let relaxed = batch(r#"{"type": "float-box", "shape": [3], "low": 0.0, "high": 1.0}"#);
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", relaxed)], 1).unwrap();
        t.set_variable("action-adapter/kernel", &floats(&[2, 3], vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0])).unwrap();
        t.assert_call("get_deterministic_action", &[x()], &[floats(&[1, 3], vec![0.0, 1.0, 0.0])], tol());
        let bad = serde_json::json!({"type": "policy", "network_spec": [], "bounded_distribution_type": "kumaraswamy"});
        let err = from_spec_with::<B>(&bad, "policy_spec", Some(&bounded)).err().unwrap().to_string();
        assert!(err.contains("policy_spec.bounded_distribution_type"), "{err}");
    }
}

both_backends! {
    fn bernoulli_policy_over_bool_actions<B>() {
        // RLgraph's BernoulliDistributionAdapter: one logit per action element, sigmoid to the
        // probability of true. x = [1, 2], kernel [[1, 0], [0, -1]], bias 0: logits [1, -2].
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let actions = batch(r#"{"type": "bool-box", "shape": [2]}"#);
        let p = policy::<B>("policy", vec![], &actions).unwrap();
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", actions.clone())], 0).unwrap();
        t.set_variable("action-adapter/kernel", &floats(&[2, 2], vec![1.0, 0.0, 0.0, -1.0])).unwrap();
        let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
        let x = floats(&[1, 2], vec![1.0, 2.0]);
        t.assert_call("get_adapter_outputs", std::slice::from_ref(&x), &[floats(&[1, 2], vec![sigmoid(1.0), sigmoid(-2.0)])], tol());
        let mode = Value::Bool(Array::new([1, 2], vec![true, false]).unwrap());
        t.assert_call("get_deterministic_action", std::slice::from_ref(&x), &[mode], tol());
        let both = Value::Bool(Array::new([1, 2], vec![true, true]).unwrap());
        let ll = t.call("get_log_likelihood", &[x, both]).unwrap();
        let total: f64 = ll[0].to_json().as_array().unwrap().iter().flat_map(|r| r.as_array().cloned().unwrap_or_else(|| vec![r.clone()])).map(|v| v.as_f64().unwrap()).sum();
        let want = sigmoid(1.0).ln() + sigmoid(-2.0).ln();
        assert!((total - want).abs() < 1e-5, "log-likelihood {total}, want {want}");
    }
}

both_backends! {
    fn a_state_independent_log_std_and_a_plain_normal_on_bounded_actions<B>() {
        // SB3's and CleanRL's continuous PPO: the adapter gives the mean only; the log-std is
        // one variable per action element, and bounded actions get a plain (unsquashed) Normal.
        let states = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let bounded = batch(r#"{"type": "float-box", "shape": [2], "low": -1.0, "high": 1.0}"#);
        let spec = serde_json::json!({
            "type": "policy", "network_spec": [], "bounded_distribution_type": "normal", "log_std_init": -0.5
        });
        let p = from_spec_with::<B>(&spec, "policy_spec", Some(&bounded)).unwrap();
        // Its samples leave the bounds, so its actions come without them (as agents give them).
        let sampled = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let mut t = ComponentTest::<B>::new(p, [("nn_inputs", states), ("actions", sampled)], 1).unwrap();
        // mean = 0.5 x, elementwise; the second row's 2.0 is outside the bounds and stays so.
        t.set_variable("action-adapter/kernel", &floats(&[2, 2], vec![0.5, 0.0, 0.0, 0.5])).unwrap();
        let x = || floats(&[2, 2], vec![1.0, 4.0, 0.0, -2.0]);
        let std0 = (-0.5f64).exp();
        let params = Value::Tuple(vec![
            floats(&[2, 2], vec![0.5, 2.0, 0.0, -1.0]),
            floats(&[2, 2], vec![std0; 4]),
        ]);
        t.assert_call("get_adapter_outputs", &[x()], &[params], tol());
        t.assert_call("get_deterministic_action", &[x()], &[floats(&[2, 2], vec![0.5, 2.0, 0.0, -1.0])], tol());
        // With log-std [0, ln 2]: log N(a; m, s) = -(a - m)^2 / (2 s^2) - ln s - ln(2 pi) / 2.
        t.set_variable("log-std", &floats(&[2], vec![0.0, 2f64.ln()])).unwrap();
        let log_n = |a: f64, m: f64, s: f64| -(a - m).powi(2) / (2.0 * s * s) - s.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
        let a = floats(&[2, 2], vec![1.5, 1.0, -0.5, 0.0]);
        let expected = floats(
            &[2, 2],
            vec![log_n(1.5, 0.5, 1.0), log_n(1.0, 2.0, 2.0), log_n(-0.5, 0.0, 1.0), log_n(0.0, -1.0, 2.0)],
        );
        t.assert_call("get_log_likelihood", &[x(), a], &[expected], tol());
        // The entropy of N(m, s) is ln(s sqrt(2 pi e)), whatever the state.
        let h = |s: f64| (s * (2.0 * std::f64::consts::PI * std::f64::consts::E).sqrt()).ln();
        t.assert_call("get_entropy", &[x()], &[floats(&[2, 2], vec![h(1.0), h(2.0), h(1.0), h(2.0)])], tol());

        // Refused by name: a log-std for discrete or Beta actions, or beyond the clamp.
        let discrete = batch(r#"{"type": "int-box", "high": 3}"#);
        let with_log_std = serde_json::json!({"type": "policy", "network_spec": [], "log_std_init": 0.0});
        let err = from_spec_with::<B>(&with_log_std, "policy_spec", Some(&discrete)).err().unwrap().to_string();
        assert!(err.contains("log_std_init") && err.contains("Normal"), "{err}");
        let bounded = batch(r#"{"type": "float-box", "shape": [2], "low": -1.0, "high": 1.0}"#);
        let beta = serde_json::json!({
            "type": "policy", "network_spec": [], "bounded_distribution_type": "beta", "log_std_init": 0.0
        });
        let err = from_spec_with::<B>(&beta, "policy_spec", Some(&bounded)).err().unwrap().to_string();
        assert!(err.contains("log_std_init"), "{err}");
        let far = serde_json::json!({"type": "policy", "network_spec": [], "log_std_init": 5.0});
        let err = from_spec_with::<B>(&far, "policy_spec", Some(&bounded)).err().unwrap().to_string();
        assert!(err.contains("policy_spec.log_std_init") && err.contains("-20 to 2"), "{err}");
    }
}
