//! Stack, BatchApply and the time-rank fold/unfold reshapes, by hand, on candle and on tch.

use rlgraph_components::{batch_apply, from_spec, stack};
use rlgraph_core::spaces::{Ranks, Space};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{floats, sequences};
use serde_json::json;

fn unit_dense() -> serde_json::Value {
    // Sums the two features: weights 1, no bias.
    json!({"type": "dense", "units": 1, "weights_spec": 1.0, "use_bias": false})
}

both_backends! {
    fn batch_apply_runs_a_batch_layer_over_sequences<B>() {
        // [B = 2, T = 3, 2] -> dense sums each step -> [2, 3, 1], time rank restored.
        let x: Vec<f64> = (0..12).map(f64::from).collect();
        let want: Vec<f64> = x.chunks(2).map(|p| p[0] + p[1]).collect();
        let c = batch_apply::<B>("batch-apply", from_spec(&unit_dense(), "d").unwrap(), "call");
        let mut t = ComponentTest::<B>::new(c, [("inputs", sequences(2, false))], 0).unwrap();
        t.assert_call("call", &[floats(&[2, 3, 2], &x)], &[floats(&[2, 3, 1], &want)], Tolerance::decimals(5));
        let out = t.executor().plan("call").unwrap().output_spaces()[0].clone();
        assert_eq!(out.ranks(), Some(Ranks { batch: true, time: true, time_major: false }));
        // A batch-only input has no time rank to fold: the folder says so.
        let flat = Space::from_json_str(r#"{"type": "float-box", "shape": [2], "add_batch_rank": true}"#).unwrap();
        let c = batch_apply::<B>("batch-apply", from_spec(&unit_dense(), "d").unwrap(), "call");
        let err = ComponentTest::<B>::new(c, [("inputs", flat)], 0).err().unwrap().to_string();
        assert!(err.contains("batch-apply/folder") && err.contains("inputs") && err.contains("time"), "{err}");
    }

    fn fold_and_unfold_from_specs_keep_time_major_order<B>() {
        let fold = from_spec(&json!({"type": "reshape", "fold_time_rank": true}), "f").unwrap();
        let mut t = ComponentTest::<B>::new(fold, [("inputs", sequences(1, true))], 0).unwrap();
        // [T = 2, B = 3, 1] -> [6, 1], rows in memory order.
        let x: Vec<f64> = (0..6).map(f64::from).collect();
        t.assert_call("call", &[floats(&[2, 3, 1], &x)], &[floats(&[6, 1], &x)], Tolerance::decimals(6));
        let unfold = from_spec(&json!({"type": "reshape", "unfold_time_rank": true}), "u").unwrap();
        let folded = Space::from_json_str(r#"{"type": "float-box", "shape": [1], "add_batch_rank": true}"#).unwrap();
        let mut t = ComponentTest::<B>::new(unfold, [("inputs", folded), ("input_before_time_rank_folding", sequences(1, true))], 0).unwrap();
        t.assert_call("call", &[floats(&[6, 1], &x), floats(&[2, 3, 1], [0.0; 6])], &[floats(&[2, 3, 1], &x)], Tolerance::decimals(6));
        // Rows that do not fill [T, B] are refused with the counts.
        let err = t.call("call", &[floats(&[5, 1], &x[..5]), floats(&[2, 3, 1], [0.0; 6])]).unwrap_err().to_string();
        assert!(err.contains("unfold") && err.contains('6'), "{err}");
    }

    fn stack_chains_a_method_through_its_members<B>() {
        // Two unit dense layers: [1, 2] -> 3 -> 3.
        let c = stack::<B>("stack", vec![from_spec(&json!({"type": "dense", "units": 1, "weights_spec": 1.0, "use_bias": false, "scope": "a"}), "a").unwrap(), from_spec(&json!({"type": "dense", "units": 1, "weights_spec": 1.0, "use_bias": false, "scope": "b"}), "b").unwrap()], "call");
        let s = Space::from_json_str(r#"{"type": "float-box", "shape": [2], "add_batch_rank": true}"#).unwrap();
        let mut t = ComponentTest::<B>::new(c, [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 2], [1.0, 2.0])], &[floats(&[1, 1], [3.0])], Tolerance::decimals(6));
    }
}
