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
