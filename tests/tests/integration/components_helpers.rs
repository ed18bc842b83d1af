//! Container splitter and merger, slice, batch splitter, sampler, softmax, concat, residual
//! and embedding lookup, by hand, on candle and on tch.

use rlgraph_components::common::{batch_splitter, container_merger, container_splitter, sampler, slice, softmax};
use rlgraph_components::layers::{concat, dense, embedding, residual, DenseSpec};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{ComponentTest, Initializer, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{batch, floats};

fn rows(n: usize) -> Value {
    floats(&[n, 2], (0..2 * n).map(|i| i as f64).collect::<Vec<_>>())
}

fn tol() -> Tolerance {
    Tolerance::decimals(5)
}

both_backends! {
    fn split_and_merge_containers<B>() {
        let space = batch(r#"{"a": "float", "b": {"type": "float-box", "shape": [2]}}"#);
        let mut t = ComponentTest::<B>::new(container_splitter("splitter", vec!["b".into(), "a".into()]), [("inputs", space.clone())], 0).unwrap();
        let x = space.value_from_json(&serde_json::json!({"a": [1.0], "b": [[2.0, 3.0]]})).unwrap();
        t.assert_call("split", std::slice::from_ref(&x), &[floats(&[1, 2], vec![2.0, 3.0]), floats(&[1], vec![1.0])], tol());
        let f = batch(r#""float""#);
        let mut m = ComponentTest::<B>::new(container_merger("merger", vec!["a".into(), "b".into()]), [("input-0", f), ("input-1", batch(r#"{"type": "float-box", "shape": [2]}"#))], 0).unwrap();
        m.assert_call("merge", &[floats(&[1], vec![1.0]), floats(&[1, 2], vec![2.0, 3.0])], &[x], tol());
    }

    fn slice_split_and_sample_batches<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let int = Space::from_json_str(r#""int""#).unwrap();
        let mut t = ComponentTest::<B>::new(slice("slice"), [("inputs", s.clone()), ("start_index", int.clone()), ("end_index", int.clone())], 0).unwrap();
        t.assert_call("slice", &[rows(4), Value::i32(1), Value::i32(3)], &[floats(&[2, 2], vec![2.0, 3.0, 4.0, 5.0])], tol());
        assert!(t.call("slice", &[rows(4), Value::i32(3), Value::i32(5)]).is_err());
        let mut b = ComponentTest::<B>::new(batch_splitter("splitter", 2), [("inputs", s.clone())], 0).unwrap();
        b.assert_call("split_batch", &[rows(3)], &[floats(&[2, 2], vec![0.0, 1.0, 2.0, 3.0]), floats(&[1, 2], vec![4.0, 5.0])], tol());
        let mut smp = ComponentTest::<B>::new(sampler("sampler"), [("inputs", s), ("sample_size", int)], 42).unwrap();
        let out = smp.call("sample", &[rows(10), Value::i32(4)]).unwrap();
        let Value::Float32(a) = &out[0] else { panic!() };
        let mut firsts: Vec<i32> = a.data().chunks(2).map(|r| { assert_eq!(r[1], r[0] + 1.0); r[0] as i32 }).collect();
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), 4, "distinct rows");
        assert!(smp.call("sample", &[rows(3), Value::i32(4)]).is_err());
    }

    fn softmax_gives_probabilities_and_log_probabilities<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [3]}"#);
        let mut t = ComponentTest::<B>::new(softmax("softmax"), [("logits", s)], 0).unwrap();
        let z: f64 = [0.0f64, 1.0, 2.0].iter().map(|x| x.exp()).sum();
        let p: Vec<f64> = [0.0f64, 1.0, 2.0].iter().map(|x| x.exp() / z).collect();
        t.assert_call("softmax", &[floats(&[1, 3], vec![0.0, 1.0, 2.0])], &[floats(&[1, 3], p.clone()), floats(&[1, 3], p.iter().map(|x| x.ln()).collect::<Vec<_>>())], tol());
    }

    fn concat_residual_and_embedding<B>() {
        let two = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let one = batch(r#"{"type": "float-box", "shape": [1]}"#);
        let mut c = ComponentTest::<B>::new(concat("concat", 2), [("input-0", two.clone()), ("input-1", one)], 0).unwrap();
        c.assert_call("call", &[floats(&[1, 2], vec![1.0, 2.0]), floats(&[1, 1], vec![3.0])], &[floats(&[1, 3], vec![1.0, 2.0, 3.0])], tol());
        // x + dense(x) with weights 1 and no bias: [1, 2] + [3, 3] = [4, 5].
        let unit = dense::<B>("unit", DenseSpec { use_bias: false, weights: Initializer::Constant(1.0), ..DenseSpec::new(2) });
        let mut r = ComponentTest::<B>::new(residual("residual", unit), [("inputs", two)], 0).unwrap();
        r.assert_call("call", &[floats(&[1, 2], vec![1.0, 2.0])], &[floats(&[1, 2], vec![4.0, 5.0])], tol());
        let ids = batch(r#"{"type": "int-box", "high": 3, "shape": [2]}"#);
        let table = Initializer::Values(vec![0.0, 0.1, 1.0, 1.1, 2.0, 2.1]);
        let mut e = ComponentTest::<B>::new(embedding("embedding", 3, 2, table), [("ids", ids)], 0).unwrap();
        let x = Value::Int32(Array::new([1, 2], vec![2, 0]).unwrap());
        e.assert_call("call", &[x], &[floats(&[1, 2, 2], vec![2.0, 2.1, 0.0, 0.1])], tol());
    }
}

/// `component` built from its RLgraph spec, under test with `spaces`.
fn built<B: rlgraph_core::Backend>(spec: serde_json::Value, spaces: Vec<(&str, Space)>) -> ComponentTest<B> {
    let c = rlgraph_components::from_spec::<B>(&spec, "spec").unwrap_or_else(|e| panic!("{spec}: {e}"));
    ComponentTest::<B>::new(c, spaces, 0).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn spec_error<B: rlgraph_core::Backend>(spec: serde_json::Value) -> String {
    match rlgraph_components::from_spec::<B>(&spec, "spec") {
        Ok(_) => panic!("{spec} built; it should have been refused"),
        Err(e) => e.to_string(),
    }
}

both_backends! {
    fn combining_layers_from_rlgraph_specs<B>() {
        use serde_json::json;
        let two = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let one = batch(r#"{"type": "float-box", "shape": [1]}"#);
        let mut c = built::<B>(json!({"type": "concat-layer"}), vec![("input-0", two.clone()), ("input-1", one)]);
        c.assert_call("call", &[floats(&[1, 2], vec![1.0, 2.0]), floats(&[1, 1], vec![3.0])], &[floats(&[1, 3], vec![1.0, 2.0, 3.0])], tol());
        assert!(spec_error::<B>(json!({"type": "concat", "axis": 0})).contains("spec.axis"));
        // RLgraph's ResidualLayer: the unit twice (own variables), plus the input, then relu.
        // x = [1, 2]: [3, 3], then [6, 6]; + x = [7, 8]. x = [-1, -2]: [-3, -3], [-6, -6];
        // + x = [-7, -8], relu 0.
        let unit = json!({"type": "dense", "units": 2, "weights_spec": 1.0, "biases_spec": false});
        let mut r = built::<B>(json!({"type": "residual-layer", "residual_unit": unit, "repeats": 2, "activation": "relu"}), vec![("inputs", two.clone())]);
        r.assert_call("call", &[floats(&[2, 2], vec![1.0, 2.0, -1.0, -2.0])], &[floats(&[2, 2], vec![7.0, 8.0, 0.0, 0.0])], tol());
        assert_eq!(r.executor().variable_infos().len(), 2, "one kernel per repeat");
        assert!(spec_error::<B>(json!({"type": "residual", "residual_unit": unit, "repeats": 0})).contains("spec.repeats"));
        assert!(spec_error::<B>(json!({"type": "residual"})).contains("spec.residual_unit"));
        // RLgraph's EmbeddingLookup with an explicit table.
        let ids = batch(r#"{"type": "int-box", "high": 3, "shape": [2]}"#);
        let table = json!([[0.0, 0.1], [1.0, 1.1], [2.0, 2.1]]);
        let mut e = built::<B>(json!({"type": "embedding-lookup", "embed_dim": 2, "vocab_size": 3, "initializer_spec": table}), vec![("ids", ids)]);
        let x = Value::Int32(Array::new([1, 2], vec![2, 0]).unwrap());
        e.assert_call("call", &[x], &[floats(&[1, 2, 2], vec![2.0, 2.1, 0.0, 0.1])], tol());
        assert!(spec_error::<B>(json!({"type": "embedding-lookup", "embed_dim": 2, "vocab_size": 3, "trainable": false})).contains("spec.trainable"));
    }

    fn local_response_normalization_by_hand<B>() {
        use serde_json::json;
        // tf.nn.local_response_normalization: x / (bias + alpha * sum over |d' - d| <= r of x^2)^beta.
        // x = [1, 2, 3], r = 1: sums 1+4 = 5, 1+4+9 = 14, 4+9 = 13; alpha 0.5, bias 1, beta 1:
        // 1/3.5, 2/8, 3/7.5.
        let three = batch(r#"{"type": "float-box", "shape": [3]}"#);
        let mut t = built::<B>(json!({"type": "local-response-normalization", "depth_radius": 1, "bias": 1.0, "alpha": 0.5, "beta": 1.0}), vec![("inputs", three.clone())]);
        t.assert_call("call", &[floats(&[1, 3], vec![1.0, 2.0, 3.0])], &[floats(&[1, 3], vec![1.0 / 3.5, 0.25, 0.4])], tol());
        // RLgraph's defaults (radius 5, bias 1, alpha 1, beta 0.5): every channel sees all three,
        // so each is divided by sqrt(1 + 14).
        let mut d = built::<B>(json!({"type": "local-response-normalization-layer"}), vec![("inputs", three)]);
        let s = 15f64.sqrt();
        d.assert_call("call", &[floats(&[1, 3], vec![1.0, 2.0, 3.0])], &[floats(&[1, 3], vec![1.0 / s, 2.0 / s, 3.0 / s])], tol());
        assert!(spec_error::<B>(json!({"type": "local-response-normalization", "bias": 0.0})).contains("spec.bias"));
    }

    fn utility_components_from_rlgraph_specs<B>() {
        use serde_json::json;
        let s3 = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let mut sm = built::<B>(json!({"type": "softmax"}), vec![("logits", s3.clone())]);
        // softmax([0, ln 3]) = [1/4, 3/4].
        sm.assert_call("softmax", &[floats(&[1, 2], vec![0.0, 3f64.ln()])], &[floats(&[1, 2], vec![0.25, 0.75]), floats(&[1, 2], vec![0.25f64.ln(), 0.75f64.ln()])], tol());
        let int = Space::from_json_str(r#""int""#).unwrap();
        let mut sl = built::<B>(json!({"type": "slice"}), vec![("inputs", s3.clone()), ("start_index", int.clone()), ("end_index", int)]);
        sl.assert_call("slice", &[rows(3), Value::i32(2), Value::i32(3)], &[floats(&[1, 2], vec![4.0, 5.0])], tol());
        let dict = batch(r#"{"a": "float", "b": {"type": "float-box", "shape": [2]}}"#);
        let x = dict.value_from_json(&serde_json::json!({"a": [1.0], "b": [[2.0, 3.0]]})).unwrap();
        let out = [floats(&[1, 2], vec![2.0, 3.0]), floats(&[1], vec![1.0])];
        for spec in [json!({"type": "container-splitter", "output_order": ["b", "a"]}), json!({"type": "container-splitter", "_args": ["b", "a"]})] {
            built::<B>(spec, vec![("inputs", dict.clone())]).assert_call("split", std::slice::from_ref(&x), &out, tol());
        }
        let mut m = built::<B>(json!({"type": "container-merger", "_args": ["a", "b"]}), vec![("input-0", batch(r#""float""#)), ("input-1", s3.clone())]);
        m.assert_call("merge", &[floats(&[1], vec![1.0]), floats(&[1, 2], vec![2.0, 3.0])], &[x], tol());
        assert!(spec_error::<B>(json!({"type": "container-splitter", "output_order": [0, 1]})).contains("spec.output_order"));
        // multiply by 2, then clip to [0, 3]: [-1, 1, 2] -> [-2, 2, 4] -> [0, 2, 3].
        let row = batch(r#"{"type": "float-box", "shape": [3]}"#);
        let stack = json!({"type": "preprocessor-stack", "preprocessors": [{"type": "multiply", "factor": 2.0}, {"type": "clip", "min": 0.0, "max": 3.0}]});
        let mut p = built::<B>(stack, vec![("inputs", row)]);
        p.assert_call("preprocess", &[floats(&[1, 3], vec![-1.0, 1.0, 2.0])], &[floats(&[1, 3], vec![0.0, 2.0, 3.0])], tol());
        p.call("reset", &[]).unwrap();
        let sync = rlgraph_components::from_spec::<B>(&json!({"type": "synchronizable", "sync_tau": 0.5}), "spec").unwrap();
        assert!(sync.api_methods().iter().any(|m| m.name == "sync"));
        assert!(spec_error::<B>(json!({"type": "synchronizable", "sync_tau": 1.5})).contains("spec.sync_tau"));
    }

    fn distributions_from_rlgraph_specs<B>() {
        use serde_json::json;
        let two = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let pick = batch(r#"{"type": "int-box", "high": 2}"#);
        // Categorical over logits [0, ln 3]: p = [1/4, 3/4], so log p(1) = ln 3/4.
        let mut c = built::<B>(json!({"type": "categorical"}), vec![("parameters", two.clone()), ("values", pick), ("other_parameters", two)]);
        c.assert_call("log_prob", &[floats(&[1, 2], vec![0.0, 3f64.ln()]), Value::Int32(Array::new([1], vec![1]).unwrap())], &[floats(&[1], vec![0.75f64.ln()])], tol());
        // Bernoulli(p = 1/4): log p(true) = ln 1/4; entropy -(1/4 ln 1/4 + 3/4 ln 3/4).
        let p = batch(r#""float""#);
        let yes = batch(r#""bool""#);
        let mut b = built::<B>(json!({"type": "bernoulli-distribution"}), vec![("parameters", p.clone()), ("values", yes), ("other_parameters", p)]);
        b.assert_call("log_prob", &[floats(&[1], vec![0.25]), Value::Bool(Array::new([1], vec![true]).unwrap())], &[floats(&[1], vec![0.25f64.ln()])], tol());
        let h = -(0.25 * 0.25f64.ln() + 0.75 * 0.75f64.ln());
        b.assert_call("entropy", &[floats(&[1], vec![0.25])], &[floats(&[1], vec![h])], tol());
        // Beta(2, 2) on [0, 2]: the mean, low + (high - low) a / (a + b) = 1.
        let tuple = Space::tuple(vec![batch(r#""float""#), batch(r#""float""#)]);
        let mut beta = built::<B>(json!({"type": "beta", "low": 0.0, "high": 2.0}), vec![("parameters", tuple.clone()), ("values", batch(r#""float""#)), ("other_parameters", tuple.clone())]);
        let params = tuple.value_from_json(&json!([[2.0], [2.0]])).unwrap();
        beta.assert_call("sample_deterministic", std::slice::from_ref(&params), &[floats(&[1], vec![1.0])], tol());
        // Normal(0, 1) at 0: -ln(2 pi) / 2; squashed onto [-2, 4], mean 0 maps to the middle, 1.
        let mut n = built::<B>(json!({"type": "normal"}), vec![("parameters", tuple.clone()), ("values", batch(r#""float""#)), ("other_parameters", tuple.clone())]);
        let unit = tuple.value_from_json(&json!([[0.0], [1.0]])).unwrap();
        n.assert_call("log_prob", &[unit.clone(), floats(&[1], vec![0.0])], &[floats(&[1], vec![-(2.0 * std::f64::consts::PI).ln() / 2.0])], tol());
        let mut sq = built::<B>(json!({"type": "squashed-normal", "low": -2.0, "high": 4.0}), vec![("parameters", tuple.clone()), ("values", batch(r#""float""#)), ("other_parameters", tuple)]);
        sq.assert_call("sample_deterministic", &[unit], &[floats(&[1], vec![1.0])], tol());
        assert!(spec_error::<B>(json!({"type": "gumbel-softmax", "temperature": 0.0})).contains("spec.temperature"));
        assert!(spec_error::<B>(json!({"type": "beta", "low": 1.0, "high": 1.0})).contains("spec.high"));
    }
}
