//! RLgraph's core tests (test_single_components, test_graph_fns, test_input_incompleteness,
//! ...), re-expressed; each runs on candle and on tch.

use rlgraph_core::spaces::{BoolBox, FloatBox, IntBox, Space, Value};
use rlgraph_core::{Component, ComponentTest, ContainerMode, CoreError, GraphFn, Param, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::dummies::*;

fn float() -> Space {
    FloatBox::new([]).into()
}

both_backends! {
    fn an_input_space_under_a_name_no_parameter_has_is_refused_by_name<B>() {
        // `dummy_2to1` takes `input1` and `input2`; a space for `input3` is a typo.
        let e = ComponentTest::<B>::new(dummy_2to1("dummy"), [("input1", float()), ("input3", float())], 1)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("'input3'") && e.contains("input1, input2"), "{e}");
    }

    fn one_to_one<B>() {
        let mut t = ComponentTest::<B>::new(dummy_1to1("dummy"), [("input", float())], 1).unwrap();
        t.assert_call("run", &[Value::f32(1.0)], &[Value::f32(2.0)], Tolerance::decimals(6));
    }

    fn two_to_one<B>() {
        let mut t = ComponentTest::<B>::new(dummy_2to1("dummy"), [("input1", float()), ("input2", float())], 1).unwrap();
        t.assert_call("run", &[Value::f32(1.0), Value::f32(2.9)], &[Value::f32(3.9)], Tolerance::decimals(6));
    }

    fn one_to_two<B>() {
        let mut t = ComponentTest::<B>::new(dummy_1to2("dummy", 1.3), [("input", float())], 1).unwrap();
        t.assert_call("run", &[Value::f32(1.0)], &[Value::f32(2.3), Value::f32(1.3)], Tolerance::decimals(6));
    }

    fn zero_to_one_returns_its_variable<B>() {
        let mut t = ComponentTest::<B>::new(dummy_0to1("dummy", 5.0), [], 1).unwrap();
        t.assert_call("run", &[], &[Value::f32(5.0)], Tolerance::decimals(6));
        assert_eq!(t.get_variable("var").unwrap(), Value::f32(5.0));
        t.set_variable("dummy/var", &Value::f32(-2.0)).unwrap();
        t.assert_call("run", &[], &[Value::f32(-2.0)], Tolerance::decimals(6));
    }

    fn int_inputs<B>() {
        let int: Space = IntBox::unbounded().into();
        let mut t = ComponentTest::<B>::new(dummy_2to1("dummy"), [("input1", int.clone()), ("input2", int)], 1).unwrap();
        let out = t.call("run", &[Value::i32(5), Value::i32(4)]).unwrap();
        assert_eq!(out, vec![Value::i32(9)]);
    }

    fn diamond<B>() {
        // A feeds B and C, both feed D: 1.0 -> A (2.3, 1.3) -> B 3.3, C 2.3 -> D 5.6.
        let root = diamond::<B>();
        let mut t = ComponentTest::<B>::new(root, [("input", float())], 1).unwrap();
        t.assert_call("run", &[Value::f32(1.0)], &[Value::f32(5.6)], Tolerance::decimals(5));
        let report = t.executor().report().clone();
        assert_eq!((report.components, report.api_methods, report.graph_fns), (5, 5, 4));
    }

    fn default_argument_in_the_middle<B>() {
        let root = Component::<B>::new("root")
            .with_sub(dummy_default_in_middle("sum"))
            .api("run", vec![Param::new("a"), Param::new("c")], |ctx, args| {
                ctx.call_kw("sum", "run", &[("a", args.get(0)?), ("c", args.get(1)?)])
            });
        let mut t = ComponentTest::<B>::new(root, [("a", float()), ("c", float())], 1).unwrap();
        t.assert_call("run", &[Value::f32(1.0), Value::f32(0.5)], &[Value::f32(3.5)], Tolerance::decimals(6));
        // Called alone, the default fills in when the caller leaves b out.
        let mut alone = ComponentTest::<B>::new(dummy_default_in_middle("sum"), [("a", float()), ("c", float())], 1).unwrap();
        alone.assert_call("run", &[Value::f32(1.0), Value::f32(0.25)], &[Value::f32(3.25)], Tolerance::decimals(6));
    }

    fn container_inputs_split_per_flat_key<B>() {
        let comp = Component::<B>::new("adder")
            .api("run", vec![Param::new("x"), Param::new("y")], |ctx, args| ctx.graph_fn("add", &[args.get(0)?, args.get(1)?]))
            .graph_fn(
                GraphFn::tensors("add", |_, xs| Ok(vec![B::add(xs[0], xs[1])?]))
                    .mode(ContainerMode::Split)
                    .infer_same(),
            );
        let space = Space::from_json_str(r#"{"a": {"type": "float-box", "shape": [2]}, "b": ["float", "float"]}"#).unwrap();
        let mut t = ComponentTest::<B>::new(comp, [("x", space.clone()), ("y", float())], 1).unwrap();
        let x = space.value_from_json(&serde_json::json!({"a": [1.0, 2.0], "b": [3.0, 4.0]})).unwrap();
        let want = space.value_from_json(&serde_json::json!({"a": [11.0, 12.0], "b": [13.0, 14.0]})).unwrap();
        t.assert_call("run", &[x, Value::f32(10.0)], &[want], Tolerance::decimals(6));
    }

    fn split_calls_see_their_flat_key<B>() {
        // The kernel offsets each leaf by its position in the flat-key order it is told.
        let comp = Component::<B>::new("tagger")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("tag", &[args.get(0)?]))
            .graph_fn(
                GraphFn::tensors("tag", |ctx, xs| {
                    let offset = match ctx.flat_key() {
                        "/a" => 100.0,
                        "/b/_T0_" => 200.0,
                        "/b/_T1_" => 300.0,
                        other => return Err(CoreError::Device(format!("unexpected key {other}"))),
                    };
                    Ok(vec![B::affine(xs[0], 1.0, offset)?])
                })
                .mode(ContainerMode::Split)
                .infer_same(),
            );
        let space = Space::from_json_str(r#"{"a": "float", "b": ["float", "float"]}"#).unwrap();
        let mut t = ComponentTest::<B>::new(comp, [("x", space.clone())], 1).unwrap();
        let x = space.value_from_json(&serde_json::json!({"a": 1.0, "b": [2.0, 3.0]})).unwrap();
        let want = space.value_from_json(&serde_json::json!({"a": 101.0, "b": [202.0, 303.0]})).unwrap();
        t.assert_call("run", &[x], &[want], Tolerance::decimals(4));
    }

    fn container_inputs_flattened_for_one_call<B>() {
        // With flatten, the kernel sees one flat Dict and may combine leaves: here it sums them all.
        let comp = Component::<B>::new("summer")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("total", &[args.get(0)?]))
            .graph_fn(
                GraphFn::new("total", |_, xs| {
                    let leaves: Vec<B::Tensor> = xs[0].flatten().into_iter().map(|(_, t)| B::sum_all(t)).collect::<rlgraph_core::Result<_>>()?;
                    let mut total = leaves[0].clone();
                    for l in &leaves[1..] {
                        total = B::add(&total, l)?;
                    }
                    Ok(vec![rlgraph_core::Tree::Leaf(total)])
                })
                .mode(ContainerMode::Flatten)
                .infer(|_, _| Ok(vec![FloatBox::new([]).into()])),
            );
        let space = Space::from_json_str(r#"{"a": {"type": "float-box", "shape": [2]}, "b": ["float", "float"]}"#).unwrap();
        let mut t = ComponentTest::<B>::new(comp, [("x", space.clone())], 1).unwrap();
        let x = space.value_from_json(&serde_json::json!({"a": [1.0, 2.0], "b": [3.0, 4.0]})).unwrap();
        t.assert_call("run", &[x], &[Value::f32(10.0)], Tolerance::decimals(5));
    }

    fn container_inputs_as_is<B>() {
        // Without flatten or split, the kernel gets the nested tree and returns its second entry.
        let comp = Component::<B>::new("picker")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("second", &[args.get(0)?]))
            .graph_fn(GraphFn::new("second", |_, xs| match &xs[0] {
                rlgraph_core::Tree::Tuple(items) => Ok(vec![items[1].clone()]),
                _ => Err(CoreError::Device("expected a tuple".into())),
            }));
        let space = Space::tuple(vec![float(), BoolBox::new([2]).into()]);
        let mut t = ComponentTest::<B>::new(comp, [("x", space.clone())], 1).unwrap();
        let x = space.value_from_json(&serde_json::json!([1.0, [true, false]])).unwrap();
        let out = t.call("run", &[x]).unwrap();
        assert_eq!(out, vec![BoolBox::new([2]).into_space_value(&[true, false])]);
    }

    fn only_completes_through_its_own_api_method<B>() {
        // `run` feeds the component's own `helper` from a graph function, which cannot run before
        // the component is input-complete, which needs `helper`'s input: a deadlock.
        let make = |opt_out: bool| {
            let c = Component::<B>::new("selfish")
                .api("run", vec![Param::new("x")], |ctx, args| {
                    let y = ctx.graph_fn("double", &[args.get(0)?])?;
                    ctx.call_own("helper", &y)
                })
                .api("helper", vec![Param::new("y")], |ctx, args| ctx.graph_fn("double", &[args.get(0)?]));
            let c = if opt_out { c.incomplete_ok() } else { c };
            c.graph_fn(GraphFn::tensors("double", |_, xs| Ok(vec![B::affine(xs[0], 2.0, 0.0)?])).infer_same())
        };
        let err = ComponentTest::<B>::new(make(false), [("x", float())], 1).err().expect("must not build");
        match &err {
            CoreError::InputIncomplete { component, missing } => {
                assert_eq!(component, "selfish");
                assert_eq!(missing, "helper(y)");
            }
            other => panic!("expected InputIncomplete, got {other}"),
        }
        let mut t = ComponentTest::<B>::new(make(true), [("x", float())], 1).unwrap();
        t.assert_call("run", &[Value::f32(1.5)], &[Value::f32(6.0)], Tolerance::decimals(6));
    }
}

trait IntoSpaceValue {
    fn into_space_value(self, data: &[bool]) -> Value;
}

impl IntoSpaceValue for BoolBox {
    fn into_space_value(self, data: &[bool]) -> Value {
        Value::Bool(rlgraph_core::spaces::Array::new([data.len()], data.to_vec()).unwrap())
    }
}
