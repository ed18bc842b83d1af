//! One-hot reshape, synchronization of target variables, and preprocessors, by hand, on
//! candle and on tch.

use rlgraph_components::{from_spec, preprocessor_stack, synchronizable};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{Component, ComponentTest, CoreError, Param, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::dummies::linear_learner;
use serde_json::json;

fn floats(shape: &[usize], data: &[f32]) -> Value {
    Value::Float32(Array::new(shape.to_vec(), data.to_vec()).unwrap())
}

fn batch(spec: &str) -> Space {
    Space::from_json_str(spec).unwrap().with_batch_rank(true)
}

both_backends! {
    fn flatten_categories_one_hot_encodes_grid_states<B>() {
        // RLgraph's 2x2 GridWorld preprocessing: {"type": "reshape", "flatten": true, "flatten_categories": 4}.
        let spec = json!({"type": "reshape", "flatten": true, "flatten_categories": 4});
        let s = batch(r#"{"type": "int-box", "high": 4}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "preprocessing_spec[0]").unwrap(), [("inputs", s)], 0).unwrap();
        let x = Value::Int32(Array::new([3], vec![2, 0, 3]).unwrap());
        t.assert_call("call", &[x], &[floats(&[3, 4], &[0., 0., 1., 0., 1., 0., 0., 0., 0., 0., 0., 1.])], Tolerance::decimals(6));
    }

    fn hard_and_soft_sync_of_target_variables<B>() {
        let make = |tau: f64| {
            Component::<B>::new("agent")
                .with_sub(linear_learner("policy", vec![1.0, 2.0]))
                .with_sub(linear_learner("target", vec![-1.0, 0.0]))
                .with_sub(synchronizable("sync", tau))
                .api("sync", vec![], |ctx, _| {
                    let src = ctx.call("policy", "variables", &[])?;
                    let dst = ctx.call("target", "variables", &[])?;
                    ctx.call("sync", "sync", &[src[0], dst[0]])
                })
                .api("act", vec![Param::new("x")], |ctx, args| ctx.call("policy", "predict", &[args.get(0)?]))
                .api("predict", vec![Param::new("x")], |ctx, args| ctx.call("target", "predict", &[args.get(0)?]))
        };
        let x = ("x", Space::from_json_str(r#"{"type": "float-box", "shape": [2], "add_batch_rank": true}"#).unwrap());
        // Without `act`, nothing calls the policy with inputs: the error names it, not the sync.
        let mut lonely = make(1.0);
        lonely = lonely.without_api("act");
        let err = ComponentTest::<B>::new(lonely, [x.clone()], 0).err().unwrap();
        assert!(matches!(&err, CoreError::InputIncomplete { component, .. } if component == "agent/policy"), "{err}");
        // A sub-component that is never called but declares no variables does not hold up
        // variables(): completing it could add nothing. The Dict holds the two weights only.
        let with_idle = make(1.0)
            .with_sub(rlgraph_tests::dummies::dummy_1to1("idle"))
            .api("weights", vec![], |ctx, _| ctx.call_own("variables", &[]));
        let mut idle = ComponentTest::<B>::new(with_idle, [x.clone()], 0).unwrap();
        let weights = idle.call("weights", &[]).unwrap();
        let Value::Dict(entries) = &weights[0] else { panic!("{weights:?}") };
        assert_eq!(entries.keys().collect::<Vec<_>>(), ["agent.policy.w", "agent.target.w"]);
        let mut hard = ComponentTest::<B>::new(make(1.0), [x.clone()], 0).unwrap();
        hard.call("sync", &[]).unwrap();
        assert_eq!(hard.get_variable("target/w").unwrap(), floats(&[2, 1], &[1.0, 2.0]));
        // tau = 0.25: 0.25 * [1, 2] + 0.75 * [-1, 0] = [-0.5, 0.5], then again: [-0.125, 0.875].
        let mut soft = ComponentTest::<B>::new(make(0.25), [x], 0).unwrap();
        soft.call("sync", &[]).unwrap();
        rlgraph_core::check_close(&soft.get_variable("target/w").unwrap(), &floats(&[2, 1], &[-0.5, 0.5]), Tolerance::decimals(6)).unwrap();
        soft.call("sync", &[]).unwrap();
        rlgraph_core::check_close(&soft.get_variable("target/w").unwrap(), &floats(&[2, 1], &[-0.125, 0.875]), Tolerance::decimals(6)).unwrap();
    }

    fn sync_between_differently_shaped_variables_is_refused<B>() {
        let agent = Component::<B>::new("agent")
            .with_sub(linear_learner("policy", vec![1.0, 2.0]))
            .with_sub(linear_learner("other", vec![1.0, 2.0, 3.0]))
            .with_sub(synchronizable("sync", 1.0))
            .api("sync", vec![Param::new("x"), Param::new("z")], |ctx, args| {
                ctx.call("policy", "predict", &[args.get(0)?])?;
                ctx.call("other", "predict", &[args.get(1)?])?;
                let src = ctx.call("policy", "variables", &[])?;
                let dst = ctx.call("other", "variables", &[])?;
                ctx.call("sync", "sync", &[src[0], dst[0]])
            });
        let spaces = [
            ("x", Space::from_json_str(r#"{"type": "float-box", "shape": [2], "add_batch_rank": true}"#).unwrap()),
            ("z", Space::from_json_str(r#"{"type": "float-box", "shape": [3], "add_batch_rank": true}"#).unwrap()),
        ];
        let err = ComponentTest::<B>::new(agent, spaces, 0).err().unwrap();
        assert!(matches!(&err, CoreError::SpaceMismatch { component, param, .. } if component == "agent/sync" && param == "target"), "{err}");
    }

    fn preprocessors_by_hand_and_in_a_stack<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [3]}"#);
        let x = floats(&[2, 3], &[-2.0, 0.5, 4.0, 1.0, 1.0, 3.0]);
        let cases = [
            (json!({"type": "clip", "min": -1.0, "max": 1.0}), vec![-1.0, 0.5, 1.0, 1.0, 1.0, 1.0]),
            (json!({"type": "divide", "divisor": 2.0}), vec![-1.0, 0.25, 2.0, 0.5, 0.5, 1.5]),
            (json!({"type": "multiply", "factor": -3.0}), vec![6.0, -1.5, -12.0, -3.0, -3.0, -9.0]),
            // Per item: (x - min) / (max - min): [0, 2.5/6, 1] and [0, 0, 1].
            (json!({"type": "normalize"}), vec![0.0, 2.5 / 6.0, 1.0, 0.0, 0.0, 1.0]),
        ];
        for (spec, want) in cases {
            let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
            t.assert_call("call", std::slice::from_ref(&x), &[floats(&[2, 3], &want)], Tolerance::new(1e-6, 1e-6));
        }
        let convert = json!({"type": "convert_type", "to_dtype": "int"});
        let mut t = ComponentTest::<B>::new(from_spec(&convert, "spec").unwrap(), [("inputs", s.clone())], 0).unwrap();
        assert_eq!(t.call("call", std::slice::from_ref(&x)).unwrap(), vec![Value::Int32(Array::new([2, 3], vec![-2, 0, 4, 1, 1, 3]).unwrap())]);
        // A stack: clip to [0, 4], then divide by 4.
        let stack = preprocessor_stack::<B>(
            "preprocessor-stack",
            vec![from_spec(&json!({"type": "clip", "min": 0.0, "max": 4.0}), "p[0]").unwrap(), from_spec(&json!({"type": "divide", "divisor": 4.0}), "p[1]").unwrap()],
        );
        let mut t = ComponentTest::<B>::new(stack, [("inputs", s)], 0).unwrap();
        t.assert_call("preprocess", std::slice::from_ref(&x), &[floats(&[2, 3], &[0.0, 0.125, 1.0, 0.25, 0.25, 0.75])], Tolerance::decimals(6));
        assert!(t.call("reset", &[]).unwrap().is_empty());
    }
}
