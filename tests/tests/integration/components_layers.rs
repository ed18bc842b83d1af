//! Dense layers, activations, networks from specs and time-dependent parameters, checked
//! against RLgraph's published values and the defining formulas, on candle and on tch.

use rlgraph_components::{from_spec, TimeDependent};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{ComponentTest, CoreError, Tolerance};
use rlgraph_tests::both_backends;
use serde_json::json;

fn batch_of(features: usize) -> Space {
    Space::from_json_str(&format!(
        r#"{{"type": "float-box", "shape": [{features}], "add_batch_rank": true}}"#
    ))
    .unwrap()
}

fn value(space: &Space, j: serde_json::Value) -> Value {
    space.value_from_json(&j).unwrap()
}

/// An activation's defining formula, as an independent reference.
type Formula = Box<dyn Fn(f64) -> f64>;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

both_backends! {
    fn schedules_on_a_time_tensor_give_the_hand_values<B>() {
        use rlgraph_core::{DType, Device};
        let linear = |from, to| TimeDependent::Linear { from, to };
        // By hand: 1 - 0.9 * 0.5; (1 - 0.5)^2; 0.1^0.5; the window maps 0.4 to 0.5, 0.1 and 0.8
        // outside it to its ends; t = 1.5 is clamped to 1.
        let cases = [
            (TimeDependent::Constant(3.0), 0.3, 3.0),
            (linear(1.0, 0.1), 0.5, 0.55),
            (linear(1.0, 0.1), 1.5, 0.1),
            (TimeDependent::Polynomial { from: 1.0, to: 0.0, power: 2.0 }, 0.5, 0.25),
            (TimeDependent::Exponential { from: 1.0, to: 0.0, decay_rate: 0.1 }, 0.5, 0.316_227_766),
            (TimeDependent::Window { start: 0.2, end: 0.6, schedule: Box::new(linear(1.0, 0.0)) }, 0.4, 0.5),
            (TimeDependent::Window { start: 0.2, end: 0.6, schedule: Box::new(linear(1.0, 0.0)) }, 0.1, 1.0),
            (TimeDependent::Window { start: 0.2, end: 0.6, schedule: Box::new(linear(1.0, 0.0)) }, 0.8, 0.0),
        ];
        for (schedule, t, expected) in cases {
            let on_device = schedule.value_tensor::<B>(&B::scalar(t, DType::F32, Device::Cpu).unwrap()).unwrap();
            let got = B::to_host(&on_device).unwrap().data.to_f64()[0];
            assert!((got - expected).abs() < 1e-6, "{schedule:?} at {t}: {got}, by hand {expected}");
            assert!((schedule.value(t) - expected).abs() < 1e-9, "{schedule:?} on the host at {t}");
        }
    }

    fn a_dense_layer_given_integer_states_says_how_to_one_hot_them<B>() {
        let dense = from_spec::<B>(&json!({"type": "dense", "units": 3}), "network[0]").unwrap();
        let cells = Space::from_json_str(r#"{"type": "int-box", "low": 0, "high": 4, "add_batch_rank": true}"#).unwrap();
        let e = ComponentTest::<B>::new(dense, [("inputs", cells)], 0).err().expect("refused").to_string();
        assert!(e.contains(r#""flatten_categories": 4"#) && e.contains("preprocessing_spec"), "{e}");
    }

    fn dense_with_unit_weights_and_no_bias<B>() {
        // RLgraph test_dense_layer: weights 1.0, no bias, [[0.5, 2.0]] -> [[2.5, 2.5]].
        let spec = json!({"type": "dense", "units": 2, "weights_spec": 1.0, "use_bias": false});
        let s = batch_of(2);
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        t.assert_call("call", &[value(&s, json!([[0.5, 2.0]]))], &[value(&s, json!([[2.5, 2.5]]))], Tolerance::decimals(5));
    }

    fn dense_with_rlgraphs_biases_spec_false<B>() {
        // RLgraph test_dense_layer exactly: DenseLayer(units=2, weights_spec=1.0, biases_spec=False).
        let spec = json!({"type": "dense", "units": 2, "weights_spec": 1.0, "biases_spec": false});
        let s = batch_of(2);
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        t.assert_call("call", &[value(&s, json!([[0.5, 2.0]]))], &[value(&s, json!([[2.5, 2.5]]))], Tolerance::decimals(5));
        let vars: Vec<String> = t.executor().variable_infos().iter().map(|i| i.path.clone()).collect();
        assert_eq!(vars, ["dense/kernel"], "no bias variable");
        let clash = json!({"type": "dense", "units": 2, "biases_spec": false, "use_bias": true});
        let err = from_spec::<B>(&clash, "spec").err().unwrap().to_string();
        assert!(err.contains("spec.biases_spec"), "{err}");
    }

    fn dense_with_bias_and_leaky_relu<B>() {
        // RLgraph test_dense_layer_with_leaky_relu_activation: 8.5 and -8.5 * 0.2.
        let spec = json!({"type": "dense", "units": 2, "activation": "lrelu", "weights_spec": 2.0, "biases_spec": 0.5});
        let s = batch_of(3);
        let out = batch_of(2);
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        let x = value(&s, json!([[0.5, 2.0, 1.5], [-1.0, -2.0, -1.5]]));
        t.assert_call("call", &[x], &[value(&out, json!([[8.5, 8.5], [-1.7, -1.7]]))], Tolerance::decimals(5));
    }

    fn dense_with_bias_and_tanh<B>() {
        // tanh after a bias is one backend op (`linear_tanh`): 0.5 * (0.5 + 2 + 1.5) + 0.25 = 2.25
        // and 0.5 * -4.5 + 0.25 = -2, then tanh.
        let spec = json!({"type": "dense", "units": 2, "activation": "tanh", "weights_spec": 0.5, "biases_spec": 0.25});
        let (s, out) = (batch_of(3), batch_of(2));
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        let x = value(&s, json!([[0.5, 2.0, 1.5], [-1.0, -2.0, -1.5]]));
        let (a, b) = (2.25f64.tanh(), (-2.0f64).tanh());
        t.assert_call("call", &[x], &[value(&out, json!([[a, a], [b, b]]))], Tolerance::new(1e-6, 1e-6));
    }

    fn every_activation_matches_its_formula<B>() {
        let xs = [-2.0f64, -0.5, 0.25, 3.0];
        let selu = |x: f64| 1.050_700_987_355_480_5 * if x > 0.0 { x } else { 1.673_263_242_354_377_3 * (x.exp() - 1.0) };
        let cases: Vec<(&str, Formula)> = vec![
            ("linear", Box::new(|x| x)),
            ("relu", Box::new(|x: f64| x.max(0.0))),
            ("elu", Box::new(|x: f64| if x > 0.0 { x } else { x.exp() - 1.0 })),
            ("selu", Box::new(selu)),
            ("sigmoid", Box::new(sigmoid)),
            ("tanh", Box::new(f64::tanh)),
            ("softplus", Box::new(|x: f64| (1.0 + x.exp()).ln())),
            ("softsign", Box::new(|x: f64| x / (1.0 + x.abs()))),
            ("swish", Box::new(|x| x * sigmoid(x))),
            ("lrelu", Box::new(|x: f64| if x > 0.0 { x } else { 0.2 * x })),
        ];
        let s = batch_of(4);
        // Identity weights, no bias: the layer's output is the activation of its input.
        let identity: Vec<f64> = (0..16).map(|i| if i % 5 == 0 { 1.0 } else { 0.0 }).collect();
        for (name, f) in cases {
            let spec = json!({"type": "dense", "units": 4, "activation": name, "weights_spec": identity, "use_bias": false});
            let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
            let want: Vec<f64> = xs.iter().map(|x| f(*x)).collect();
            t.assert_call("call", &[value(&s, json!([xs]))], &[value(&s, json!([want]))], Tolerance::new(1e-5, 1e-5));
        }
        // Softmax over the last dimension, and crelu doubling it.
        let spec = json!({"type": "dense", "units": 4, "activation": "softmax", "weights_spec": identity, "use_bias": false});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        let z: f64 = xs.iter().map(|x| x.exp()).sum();
        let want: Vec<f64> = xs.iter().map(|x| x.exp() / z).collect();
        t.assert_call("call", &[value(&s, json!([xs]))], &[value(&s, json!([want]))], Tolerance::new(1e-6, 1e-5));
        let spec = json!({"type": "dense", "units": 4, "activation": "crelu", "weights_spec": identity, "use_bias": false});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        let want: Vec<f64> = xs.iter().map(|x| x.max(0.0)).chain(xs.iter().map(|x| (-x).max(0.0))).collect();
        t.assert_call("call", &[value(&s, json!([xs]))], &[value(&batch_of(8), json!([want]))], Tolerance::decimals(6));
    }

    fn dense_rejects_a_non_float_input_naming_the_place<B>() {
        let spec = json!({"type": "dense", "units": 2, "scope": "hidden"});
        let err = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", Space::from_json_str(r#"{"type": "int-box", "high": 3, "shape": [2]}"#).unwrap())], 0)
            .err()
            .unwrap();
        assert!(matches!(&err, CoreError::SpaceMismatch { component, method, param, .. } if component == "hidden" && method == "call" && param == "inputs"), "{err}");
    }

    fn dense_and_conv2d_refuse_float64_inputs_saying_how_to_convert<B>() {
        // MuJoCo's observations are float64; the weights are float32. Refused when built,
        // naming the layer, both dtypes and the conversion, not at the first step.
        let wide = |shape: &str| Space::from_json_str(&format!(r#"{{"type": "float-box", "shape": {shape}, "dtype": "float64", "add_batch_rank": true}}"#)).unwrap();
        for (spec, shape) in [
            (json!({"type": "dense", "units": 2, "scope": "hidden"}), "[11]"),
            (json!({"type": "conv2d", "filters": 2, "kernel_size": 2, "strides": 1, "scope": "hidden"}), "[4, 4, 1]"),
        ] {
            let err = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", wide(shape))], 0).err().unwrap();
            let text = err.to_string();
            assert!(matches!(&err, CoreError::SpaceMismatch { component, param, .. } if component == "hidden" && param == "inputs"), "{text}");
            assert!(text.contains("float64") && text.contains("float32") && text.contains("convert_type"), "{text}");
        }
    }

    fn network_from_a_layer_list<B>() {
        // x -> dense(2, weights 1, bias 0.5, relu) -> dense(1, weights [[1], [-2]], no bias).
        let spec = json!([
            {"type": "dense", "units": 2, "activation": "relu", "weights_spec": 1.0, "biases_spec": 0.5},
            {"type": "dense", "units": 1, "weights_spec": [[1.0], [-2.0]], "use_bias": false}
        ]);
        let s = batch_of(2);
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "network_spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        // Row 1: h = relu(1 + 2 + 0.5) = 3.5 twice -> 3.5 - 7 = -3.5; row 2: h = relu(-3 + 0.5) = 0 -> 0.
        let x = value(&s, json!([[1.0, 2.0], [-1.0, -2.0]]));
        t.assert_call("call", &[x], &[value(&batch_of(1), json!([[-3.5], [0.0]]))], Tolerance::decimals(5));
        let infos: Vec<String> = t.executor().variable_infos().iter().map(|i| i.path.clone()).collect();
        assert_eq!(infos, ["neural-network/dense-0/kernel", "neural-network/dense-0/bias", "neural-network/dense-1/kernel"]);
    }

    fn time_dependent_parameters_over_a_batch_of_time_percentages<B>() {
        let ts = [0.0, 0.25, 0.5, 1.0];
        let s = Space::from_json_str(r#"{"type": "float-box", "add_batch_rank": true}"#).unwrap();
        let cases = [
            (json!(2.5), [2.5, 2.5, 2.5, 2.5]),
            (json!(["linear", 1.0, 0.15]), [1.0, 0.7875, 0.575, 0.15]),
            (json!({"type": "polynomial_decay", "from": 1.0, "to": 0.0}), [1.0, 0.5625, 0.25, 0.0]),
            (json!(["exponential", 1.0]), [1.0, 0.1f64.powf(0.25), 0.1f64.sqrt(), 0.1]),
            // RLgraph's test_exponential_parameter: 0.5 + (2.0 - 0.5) * 0.5 ** t.
            (
                json!({"type": "exponential-decay", "from_": 2.0, "to_": 0.5, "decay_rate": 0.5}),
                [2.0, 0.5 + 1.5 * 0.5f64.powf(0.25), 0.5 + 1.5 * 0.5f64.sqrt(), 1.25],
            ),
            // The list form keeps its fourth element: 0.1 + 0.9 * 0.2 ** t.
            (json!(["exponential", 1.0, 0.1, 0.2]), [1.0, 0.1 + 0.9 * 0.2f64.powf(0.25), 0.1 + 0.9 * 0.2f64.sqrt(), 0.28]),
            // RLgraph's test_polynomial_parameter: (2.0 - 0.5) * (1 - t) ** 2 + 0.5.
            (
                json!({"type": "polynomial-decay", "from_": 2.0, "to_": 0.5, "power": 2.0}),
                [2.0, 1.5 * 0.5625 + 0.5, 1.5 * 0.25 + 0.5, 0.5],
            ),
            // RLgraph's test_linear_parameter: 2.0 - t * (2.0 - 0.5).
            (json!([2.0, 0.5]), [2.0, 1.625, 1.25, 0.5]),
            // Over the first half, then held: at t = 0.25 the linear schedule is halfway
            // (1.0 - 0.5 * 0.8), the polynomial one at (1 - 0.5)^2; from t = 0.5 on, `to`.
            (
                json!({"type": "linear_decay", "from": 1.0, "to": 0.2, "end_time_percentage": 0.5}),
                [1.0, 0.6, 0.2, 0.2],
            ),
            (
                json!({"type": "polynomial_decay", "from": 1.0, "to": 0.0, "end_time_percentage": 0.5}),
                [1.0, 0.25, 0.0, 0.0],
            ),
            // Held at `from` until a quarter, then linear to `to` at three quarters: halfway at
            // t = 0.5 (1.0 - 0.5 * 0.8).
            (
                json!({"type": "linear_decay", "from": 1.0, "to": 0.2, "start_time_percentage": 0.25, "end_time_percentage": 0.75}),
                [1.0, 1.0, 0.6, 0.2],
            ),
            // From a quarter to the end: a third of the way at t = 0.5 (1.0 - 0.8 / 3).
            (
                json!({"type": "linear_decay", "from": 1.0, "to": 0.2, "start_time_percentage": 0.25}),
                [1.0, 1.0, 1.0 - 0.8 / 3.0, 0.2],
            ),
        ];
        for (spec, want) in cases {
            let schedule = TimeDependent::parse(&spec, "decay_spec").unwrap();
            for (t, w) in ts.iter().zip(want) {
                assert!((schedule.value(*t) - w).abs() < 1e-12, "{spec} at {t}");
            }
            let mut c = ComponentTest::<B>::new(schedule.component("schedule"), [("time_percentage", s.clone())], 0).unwrap();
            c.assert_call("get", &[value(&s, json!(ts))], &[value(&s, json!(want))], Tolerance::new(1e-6, 1e-5));
        }
    }

    fn time_dependent_parameters_without_a_time_percentage_give_their_start_value<B>() {
        // RLgraph's test_*_parameter_using_global_timestep: `get()` before any step is `from`.
        for (spec, start) in [
            (json!({"type": "linear-decay", "from_": 2.0, "to_": 0.5, "max_time_steps": 100}), 2.0),
            (json!({"type": "polynomial-decay", "from_": 3.0, "to_": 0.5, "max_time_steps": 100}), 3.0),
            (json!({"type": "exponential-decay", "from_": 3.0, "to_": 0.5, "max_time_steps": 100}), 3.0),
            (json!(2.0), 2.0),
        ] {
            let schedule = TimeDependent::parse(&spec, "decay_spec").unwrap();
            let mut c = ComponentTest::<B>::new(schedule.component("schedule"), Vec::<(&str, Space)>::new(), 0).unwrap();
            let out = c.call("get", &[]).unwrap();
            assert_eq!(out, vec![rlgraph_core::spaces::Value::f32(start as f32)], "{spec}");
        }
    }
}

#[test]
fn time_dependent_spellings_parse_and_bad_ones_are_named() {
    let p = |j: serde_json::Value| TimeDependent::parse(&j, "decay_spec");
    assert_eq!(p(json!(0.5)).unwrap(), TimeDependent::Constant(0.5));
    assert_eq!(
        p(json!([1.0, 0.1])).unwrap(),
        TimeDependent::Linear { from: 1.0, to: 0.1 }
    );
    assert_eq!(
        p(json!(["linear", 1.0, 0.05])).unwrap(),
        TimeDependent::Linear { from: 1.0, to: 0.05 }
    );
    assert_eq!(
        p(json!({"type": "linear-decay", "from": 1.0, "to": 0.2})).unwrap(),
        TimeDependent::Linear { from: 1.0, to: 0.2 }
    );
    assert_eq!(
        p(json!({"type": "constant_decay", "constant_value": 0.0})).unwrap(),
        TimeDependent::Constant(0.0)
    );
    assert_eq!(
        p(json!(["polynomial", 1.0, 0.0])).unwrap(),
        TimeDependent::Polynomial {
            from: 1.0,
            to: 0.0,
            power: 2.0
        }
    );
    assert_eq!(
        p(json!(["exponential", 2.0])).unwrap(),
        TimeDependent::Exponential {
            from: 2.0,
            to: 0.0,
            decay_rate: 0.1
        }
    );
    // RLgraph's list form: [kind, from, to, decay_rate], and the object form's `to`.
    assert_eq!(
        p(json!(["exponential", 1.0, 0.05, 0.3])).unwrap(),
        TimeDependent::Exponential {
            from: 1.0,
            to: 0.05,
            decay_rate: 0.3
        }
    );
    assert_eq!(
        p(json!({"type": "exponential_decay", "from": 1.0, "to": 0.1, "decay_rate": 0.5})).unwrap(),
        TimeDependent::Exponential {
            from: 1.0,
            to: 0.1,
            decay_rate: 0.5
        }
    );
    assert_eq!(
        p(json!(["poly", 1.0, 0.0, 3.0])).unwrap(),
        TimeDependent::Polynomial {
            from: 1.0,
            to: 0.0,
            power: 3.0
        }
    );
    for bad in [0.0, 1.5, -0.1] {
        let err = p(json!({"type": "linear_decay", "end_time_percentage": bad}))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("decay_spec.end_time_percentage") && err.contains(&format!("got {bad}")),
            "{err}"
        );
    }
    for (start, end, key) in [(0.5, 0.5, "end_time_percentage"), (1.5, 1.0, "start_time_percentage")] {
        let err = p(json!({"type": "linear_decay", "start_time_percentage": start, "end_time_percentage": end}))
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("decay_spec.{key}")), "{err}");
    }
    let err = p(json!({"type": "linear_decay", "decay_rate": 0.5}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("decay_rate") && err.contains("exponential"), "{err}");
    let err = p(json!({"type": "linear_decay", "from": 1.0, "too": 0.1}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("decay_spec.too") && err.contains("unknown key"), "{err}");
    assert!(p(json!(["cosine", 1.0, 0.0]))
        .unwrap_err()
        .to_string()
        .contains("cosine"));
    // An unknown name is quoted as written, not as it was normalized for matching.
    for spec in [json!(["no_such_decay", 1.0, 0.0]), json!({"type": "no_such_decay"})] {
        let err = p(spec.clone()).unwrap_err().to_string();
        assert!(
            err.contains("\"no_such_decay\"") && err.contains("linear"),
            "{spec}: {err}"
        );
    }
    assert!(p(json!("fast")).is_err());
}

#[test]
fn registry_matches_type_names_rlgraphs_way_and_names_unknown_keys_and_types() {
    use rlgraph_tests::Candle;
    for t in ["dense", "Dense", "dense_layer", "dense-layer", "DENSE"] {
        assert!(
            from_spec::<Candle>(&json!({"type": t, "units": 1}), "spec").is_ok(),
            "{t}"
        );
    }
    let err = from_spec::<Candle>(&json!({"type": "dense", "unitz": 1}), "network_spec[0]")
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("network_spec[0].unitz") && err.contains("unknown key"),
        "{err}"
    );
    let err = from_spec::<Candle>(&json!({"type": "dense"}), "spec")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("spec.units") && err.contains("required"), "{err}");
    let err = from_spec::<Candle>(&json!({"type": "transformer"}), "spec")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("\"transformer\"") && err.contains("known types"), "{err}");
    let err = from_spec::<Candle>(&json!({"type": "dense", "units": 2, "activation": "gelu2"}), "spec")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("spec.activation") && err.contains("gelu2"), "{err}");
}

/// Every `network_spec` in RLgraph's reference configs (copied unmodified into
/// `configs/rlgraph/`) builds into a network, the LSTM network with two inputs included.
#[test]
fn reference_config_network_specs_build_or_name_the_missing_layer() {
    use rlgraph_tests::Candle;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/rlgraph");
    let mut built = 0;
    for entry in std::fs::read_dir(&dir).expect("configs/rlgraph holds RLgraph's reference configs") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // test_lstm_nn.json is itself a network spec.
        let Some(spec) = config.get("network_spec").or(config.get("layers").map(|_| &config)) else {
            continue;
        };
        match from_spec::<Candle>(spec, "network_spec") {
            Ok(_) => built += 1,
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    // Every network spec builds now, the LSTM network (two inputs) included.
    assert!(built >= 11, "network specs build ({built})");
}
