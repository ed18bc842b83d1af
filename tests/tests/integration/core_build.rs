//! The build's errors, the meta graph's DOT and JSON, variables, deep copies, checkpoints,
//! device maps and the multi_gpu_sync strategy; each on candle and on tch.

use std::collections::BTreeMap;

use rlgraph_components::{MultiGpuSync, OptimizerSpec, Rule, TimeDependent};
use rlgraph_core::spaces::{FloatBox, IntBox, Space, Value};
use rlgraph_core::{
    build, BuildOptions, Component, ComponentTest, ContainerMode, CoreError, Device, DeviceMap, GraphExecutor, GraphFn,
    HostTensor, Initializer, Param, Tolerance, VarDecl,
};
use rlgraph_tests::both_backends;
use rlgraph_tests::dummies::*;

fn float() -> Space {
    FloatBox::new([]).into()
}

fn spaces(list: &[(&str, Space)]) -> BTreeMap<String, Space> {
    list.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// A matrix `x` as a `[rows, cols]` f32 value.
fn matrix(rows: usize, data: &[f32]) -> Value {
    let cols = data.len() / rows;
    Value::Float32(rlgraph_core::spaces::Array::new([rows, cols], data.to_vec()).unwrap())
}

both_backends! {
    fn space_mismatch_names_component_method_parameter_and_both_spaces<B>() {
        let checker = dummy_1to1::<B>("checker").check_inputs(|s| s.expect("input", "FloatBox", |sp| matches!(sp, Space::Float(_))));
        let root = Component::<B>::new("root").with_sub(checker).api("go", vec![Param::new("x")], |ctx, args| ctx.call("checker", "run", &[args.get(0)?]));
        let err = build(root, &spaces(&[("x", IntBox::new(3).unwrap().into())]), &BuildOptions::default()).err().expect("must fail");
        match err {
            CoreError::SpaceMismatch { component, method, param, expected, actual } => {
                assert_eq!((component.as_str(), method.as_str(), param.as_str(), expected.as_str()), ("root/checker", "run", "input", "FloatBox"));
                assert!(actual.contains("IntBox"), "{actual}");
            }
            other => panic!("{other}"),
        }
    }

    fn one_parameter_fed_two_different_spaces_is_a_mismatch<B>() {
        let root = Component::<B>::new("root")
            .with_sub(dummy_1to1("inc"))
            .api("a", vec![Param::new("x")], |ctx, args| ctx.call("inc", "run", &[args.get(0)?]))
            .api("b", vec![Param::new("i")], |ctx, args| ctx.call("inc", "run", &[args.get(0)?]));
        let err = build(root, &spaces(&[("x", float()), ("i", IntBox::new(4).unwrap().into())]), &BuildOptions::default()).err().unwrap();
        assert!(matches!(&err, CoreError::SpaceMismatch { component, param, .. } if component == "root/inc" && param == "input"), "{err}");
    }

    fn a_wrong_value_at_execution_is_an_error_naming_the_parameter<B>() {
        let mut t = ComponentTest::<B>::new(dummy_1to1("dummy"), [("input", FloatBox::new([2]).into())], 1).unwrap();
        let err = t.call("run", &[Value::f32(1.0)]).unwrap_err().to_string();
        assert!(err.contains("'dummy'") && err.contains("'run'") && err.contains("'input'") && err.contains("expected shape [2]"), "{err}");
    }

    fn unknown_api_method_and_unknown_sub_component<B>() {
        let root = Component::<B>::new("root").with_sub(dummy_1to1("B")).api("go", vec![Param::new("x")], |ctx, args| ctx.call("B", "nope", &[args.get(0)?]));
        let err = build(root, &spaces(&[("x", float())]), &BuildOptions::default()).err().unwrap();
        assert!(matches!(&err, CoreError::UnknownApiMethod { component, method, known } if component == "root/B" && method == "nope" && known.contains("run")), "{err}");
        let root = Component::<B>::new("root").api("go", vec![Param::new("x")], |ctx, args| ctx.call("ghost", "run", &[args.get(0)?]));
        let err = build(root, &spaces(&[("x", float())]), &BuildOptions::default()).err().unwrap();
        assert!(matches!(&err, CoreError::UnknownComponent { name, .. } if name == "ghost"), "{err}");
    }

    fn duplicate_names_are_rejected<B>() {
        let root = Component::<B>::new("root").with_sub(dummy_1to1("A")).with_sub(dummy_1to1("A"));
        let err = build(root, &BTreeMap::new(), &BuildOptions::default()).err().unwrap();
        assert!(matches!(&err, CoreError::Duplicate { what: "sub-component", name, .. } if name == "A"), "{err}");
        let twice = dummy_1to1::<B>("t").api("run", vec![], |_, _| Ok(vec![]));
        assert!(matches!(build(twice, &BTreeMap::new(), &BuildOptions::default()), Err(CoreError::Duplicate { what: "API method", .. })));
    }

    fn cycles_are_reported_with_the_call_path<B>() {
        let ping = Component::<B>::new("ping")
            .api("a", vec![Param::new("x")], |ctx, args| ctx.call_own("b", &[args.get(0)?]))
            .api("b", vec![Param::new("x")], |ctx, args| ctx.call_own("a", &[args.get(0)?]));
        let err = build(ping, &spaces(&[("x", float())]), &BuildOptions::default()).err().unwrap();
        assert!(matches!(&err, CoreError::Cycle { path } if path == "ping.a -> ping.b -> ping.a"), "{err}");
    }

    fn a_build_error_can_carry_a_dot_picture<B>() {
        let root = Component::<B>::new("root").with_sub(dummy_2to1("sum")).api("go", vec![Param::new("x"), Param::new("y")], |ctx, args| {
            ctx.call("sum", "run", &[args.get(0)?, args.get(1)?])
        });
        let options = BuildOptions { dot_on_error: true, ..Default::default() };
        let err = build(root, &spaces(&[("x", float())]), &options).err().unwrap();
        match err {
            CoreError::Diagnosed { error, dot } => {
                assert!(matches!(*error, CoreError::InputIncomplete { .. }), "{error}");
                assert!(dot.starts_with("digraph") && dot.contains("root/sum"), "{dot}");
            }
            other => panic!("{other}"),
        }
    }

    fn values_move_where_their_kernel_runs<B>() {
        // B alone on the GPU: its operand comes from A (CPU) through B's API entry, which is
        // on B's device, so only where the value was made tells that it must move; D (CPU)
        // then needs B's result back. Planning needs no GPU.
        let options = BuildOptions { device_map: DeviceMap::new(Device::Cpu).assign("diamond/B", Device::Cuda(0)), ..Default::default() };
        let built = build(diamond::<B>(), &spaces(&[("input", float())]), &options).unwrap();
        let exec = GraphExecutor::new(built, 0).unwrap();
        let transfers = exec.plan("run").unwrap().transfers();
        assert_eq!(
            transfers,
            vec![("diamond/B/add_one".to_string(), 0, Device::Cuda(0)), ("diamond/D/sum".to_string(), 0, Device::Cpu)]
        );
    }

    fn meta_graph_prints_as_dot_and_json<B>() {
        let options = BuildOptions { device_map: DeviceMap::new(Device::Cpu).assign("diamond/B", Device::Cuda(0)), ..Default::default() };
        let built = build(diamond::<B>(), &spaces(&[("input", float())]), &options).unwrap();
        let dot = built.meta_graph().to_dot(None);
        for needle in ["subgraph cluster_", "label=\"diamond/A\"", "graph_fn plus_times", "FloatBox(float32, [])", "fillcolor=orange", "fillcolor=lightblue"] {
            assert!(dot.contains(needle), "{needle} missing from\n{dot}");
        }
        let json = built.meta_graph().to_json();
        assert_eq!(json["methods"]["run"]["params"], serde_json::json!(["input"]));
        assert_eq!(json["methods"]["run"]["output_spaces"][0]["type"], "float-box");
        let b_nodes = json["nodes"].as_array().unwrap().iter().filter(|n| n["component"] == "diamond/B").count();
        assert!(b_nodes >= 3);
        assert!(json["nodes"].as_array().unwrap().iter().any(|n| n["device"] == "cuda:0"));
        let report = built.report();
        assert_eq!((report.components, report.variables), (5, 0));
    }

    fn every_component_has_a_variables_method<B>() {
        let root = Component::<B>::new("root")
            .with_sub(dummy_0to1("a", 1.0))
            .with_sub(dummy_0to1("b", 2.0))
            .api("get_vars", vec![], |ctx, _| ctx.call_own("variables", &[]))
            .api("run", vec![], |ctx, _| {
                let a = ctx.call("a", "run", &[])?;
                let b = ctx.call("b", "run", &[])?;
                Ok(vec![a[0], b[0]])
            });
        let mut t = ComponentTest::<B>::new(root, [], 1).unwrap();
        let vars = t.call("get_vars", &[]).unwrap();
        let want = Value::Dict([("root.a.var".to_string(), Value::f32(1.0)), ("root.b.var".to_string(), Value::f32(2.0))].into());
        assert_eq!(vars, vec![want]);
    }

    fn deep_copy_under_a_new_scope_can_be_frozen<B>() {
        let policy = linear_learner::<B>("policy", vec![1.0, 2.0]);
        let target = policy.copy_as("target", false);
        let root = Component::<B>::new("agent")
            .with_sub(policy)
            .with_sub(target)
            .api("both", vec![Param::new("x")], |ctx, args| {
                let p = ctx.call("policy", "predict", &[args.get(0)?])?;
                let t = ctx.call("target", "predict", &[args.get(0)?])?;
                Ok(vec![p[0], t[0]])
            });
        let mut t = ComponentTest::<B>::new(root, [("x", Space::from(FloatBox::new([2])).with_batch_rank(true))], 1).unwrap();
        let infos: Vec<(String, bool)> = t.executor().variable_infos().iter().map(|i| (i.path.clone(), i.decl.trainable)).collect();
        assert_eq!(infos, vec![("agent/policy/w".to_string(), true), ("agent/target/w".to_string(), false)]);
        t.set_variable("target/w", &matrix(2, &[0.0, 1.0])).unwrap();
        let x = matrix(1, &[3.0, 4.0]);
        t.assert_call("both", &[x], &[matrix(1, &[11.0]), matrix(1, &[4.0])], Tolerance::decimals(5));
    }

    fn checkpoint_restore_then_the_same_calls_give_the_same_outputs<B>() {
        // A kernel that draws from the executor's RNG, so the RNG position must be restored too.
        let noisy = Component::<B>::new("noisy")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("jitter", &[args.get(0)?]))
            .variables(|_| Ok(vec![VarDecl::new("scale", [2], Initializer::Normal { mean: 0.0, std: 1.0 })]))
            .graph_fn(GraphFn::tensors("jitter", |ctx, xs| {
                let scale = ctx.var("scale")?;
                let noise = B::uniform(&B::shape(xs[0]), 0.0, 1.0, rlgraph_core::DType::F32, ctx.device(), ctx.rng())?;
                Ok(vec![B::add(&B::mul(xs[0], scale)?, &noise)?])
            }).infer_same());
        let space: Space = FloatBox::new([2]).into();
        let mut t = ComponentTest::<B>::new(noisy.clone(), [("x", space.clone())], 7).unwrap();
        let x = vec![Value::Float32(rlgraph_core::spaces::Array::new([2], vec![1.0, -1.0]).unwrap())];
        let dir = std::env::temp_dir().join(format!("rlgraph-ckpt-{}-{}", B::NAME, std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("state.safetensors");
        t.executor().save(&file).unwrap();
        let first: Vec<Vec<Value>> = (0..3).map(|_| t.call("run", &x).unwrap()).collect();
        // A fresh executor with another seed, restored, repeats the same three calls exactly.
        let mut other = ComponentTest::<B>::new(noisy, [("x", space)], 99).unwrap();
        assert_ne!(other.get_variable("scale").unwrap(), t.get_variable("scale").unwrap());
        other.executor().restore(&file).unwrap();
        let again: Vec<Vec<Value>> = (0..3).map(|_| other.call("run", &x).unwrap()).collect();
        assert_eq!(first, again);
        // A bad file changes nothing.
        std::fs::write(dir.join("bad.safetensors"), b"not a checkpoint").unwrap();
        let before = other.get_variable("scale").unwrap();
        assert!(matches!(other.executor().restore(dir.join("bad.safetensors")), Err(CoreError::Checkpoint { .. })));
        assert!(matches!(other.executor().restore(dir.join("missing.safetensors")), Err(CoreError::Checkpoint { .. })));
        assert_eq!(other.get_variable("scale").unwrap(), before);
        std::fs::remove_dir_all(&dir).ok();
    }

    fn a_layer_stack_runs_as_one_fused_step_with_the_layers_results<B>() {
        let batch = Space::from(FloatBox::new([2])).with_batch_rank(true);
        let mut t = ComponentTest::<B>::new(mlp::<B>("mlp", &[3, 2]), [("x", batch)], 1).unwrap();
        let plan = t.executor().plan("run").unwrap();
        assert_eq!((plan.len(), plan.steps()), (2, 1), "two kernels, fused into one step");
        for (path, shape, data) in [
            ("dense-0/kernel", vec![2, 3], vec![1.0, -1.0, 0.5, 2.0, 0.0, -1.0]),
            ("dense-0/bias", vec![3], vec![0.1, 0.2, -0.3]),
            ("dense-1/kernel", vec![3, 2], vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
            ("dense-1/bias", vec![2], vec![0.5, -0.5]),
        ] {
            t.executor().set_variable(&format!("mlp/{path}"), &HostTensor::f32(shape, data).unwrap()).unwrap();
        }
        // By hand: row [1, 1] -> relu([3.1, -0.8, -0.8]) = [3.1, 0, 0] -> [3.1, 0] + b1;
        // row [-1, 0.5] -> relu([0.1, 1.2, -1.3]) = [0.1, 1.2, 0] -> [0.1, 1.2] + b1.
        let out = t.call("run", &[matrix(2, &[1.0, 1.0, -1.0, 0.5])]).unwrap();
        rlgraph_core::check_close(&out[0], &matrix(2, &[3.6, -0.5, 0.6, 0.7]), Tolerance::new(1e-6, 1e-6)).unwrap();
        // A value read twice (A feeds B and C) is not fused away.
        let exec = GraphExecutor::build(diamond::<B>(), &spaces(&[("input", float())]), &BuildOptions::default(), 0).unwrap();
        let plan = exec.plan("run").unwrap();
        assert_eq!(plan.steps(), plan.len());
    }

    fn split_mode_kernels_fuse_over_primitive_inputs_only<B>() {
        let doubler = |name: &str| {
            Component::<B>::new(name)
                .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("double", &[args.get(0)?]))
                .graph_fn(
                    GraphFn::tensors("double", |_, xs| Ok([B::affine(xs[0], 2.0, 0.0)?]))
                        .mode(ContainerMode::Split)
                        .infer_same(),
                )
        };
        let root = || chain::<B>("root", vec![doubler("a"), doubler("b")]);
        // A primitive input: every call sees one tensor, so the two kernels run as one step.
        let mut t = ComponentTest::<B>::new(root(), [("x", float())], 1).unwrap();
        assert_eq!(t.executor().plan("run").unwrap().steps(), 1);
        assert_eq!(t.call("run", &[Value::f32(1.5)]).unwrap(), vec![Value::f32(6.0)]);
        // A Dict input: each kernel runs once per key, and nothing fuses.
        let pair = Space::dict([("p", float()), ("q", float())]).unwrap();
        let mut t = ComponentTest::<B>::new(root(), [("x", pair)], 1).unwrap();
        assert_eq!(t.executor().plan("run").unwrap().steps(), 2);
        let dict = |p: f32, q: f32| Value::Dict([("p".to_string(), Value::f32(p)), ("q".to_string(), Value::f32(q))].into());
        assert_eq!(t.call("run", &[dict(1.0, -0.5)]).unwrap(), vec![dict(4.0, -2.0)]);
    }

    fn a_failing_fused_kernel_is_named_and_later_calls_still_work<B>() {
        // Fails on negative inputs only, so the same executor can be called again afterwards.
        let picky = Component::<B>::new("picky")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("check", &[args.get(0)?]))
            .graph_fn(
                GraphFn::tensors("check", |_, xs| {
                    if B::to_host(xs[0])?.data.to_f64().iter().any(|v| *v < 0.0) {
                        return Err(CoreError::Backend { backend: B::NAME, op: "check", message: "negative input".into() });
                    }
                    Ok([xs[0].clone()])
                })
                .infer_same(),
            );
        let root = chain::<B>("root", vec![dummy_1to1("a"), picky]);
        let mut t = ComponentTest::<B>::new(root, [("x", float())], 1).unwrap();
        assert_eq!(t.executor().plan("run").unwrap().steps(), 1);
        let err = t.call("run", &[Value::f32(-3.0)]).unwrap_err().to_string();
        assert!(err.contains("root/picky") && err.contains("check") && err.contains("negative input"), "{err}");
        assert_eq!(t.call("run", &[Value::f32(1.0)]).unwrap(), vec![Value::f32(2.0)]);
    }

    fn a_kernel_returning_more_results_than_it_declares_is_an_error<B>() {
        let twice = Component::<B>::new("twice")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("dup", &[args.get(0)?]))
            .graph_fn(GraphFn::tensors("dup", |_, xs: &[&B::Tensor]| Ok([xs[0].clone(), xs[0].clone()])).infer_same());
        let mut t = ComponentTest::<B>::new(twice, [("x", float())], 1).unwrap();
        let err = t.call("run", &[Value::f32(1.0)]).unwrap_err().to_string();
        assert!(err.contains("twice") && err.contains("returned 2 outputs; it declares 1"), "{err}");
    }

    fn a_kernel_asking_for_an_undeclared_variable_gets_the_declared_names<B>() {
        let asks = Component::<B>::new("asks")
            .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("scale", &[args.get(0)?]))
            .variables(|_| Ok(vec![VarDecl::new("weight", [], Initializer::Constant(2.0)), VarDecl::new("bias", [], Initializer::Zeros)]))
            .graph_fn(GraphFn::tensors("scale", |ctx, xs| Ok([B::mul(xs[0], ctx.var("wieght")?)?])).infer_same());
        let mut t = ComponentTest::<B>::new(asks, [("x", float())], 1).unwrap();
        let err = t.call("run", &[Value::f32(1.0)]).unwrap_err().to_string();
        assert!(err.contains("asks/wieght") && err.contains("it has: weight, bias"), "{err}");
    }

    fn execute_tensors_with_the_wrong_input_count_is_an_error<B>() {
        let mut exec = GraphExecutor::build(dummy_1to1::<B>("one"), &spaces(&[("input", float())]), &BuildOptions::default(), 0).unwrap();
        let x = || rlgraph_core::Tree::Leaf(rlgraph_tests::f32s::<B>(&[], &[1.0]).unwrap());
        for inputs in [vec![], vec![x(), x()]] {
            let err = exec.execute_tensors("run", inputs).unwrap_err();
            assert!(matches!(&err, CoreError::BadArguments { method, .. } if method == "run"), "{err}");
        }
        let out = exec.execute_tensors("run", [x()]).unwrap();
        assert_eq!(B::to_host(out[0].as_leaf().unwrap()).unwrap().data.to_f64(), vec![2.0]);
        // Borrowed inputs give the same result and stay the caller's.
        let input = x();
        let out = exec.execute_tensors("run", [&input]).unwrap();
        assert_eq!(B::to_host(out[0].as_leaf().unwrap()).unwrap().data.to_f64(), vec![2.0]);
        assert_eq!(B::to_host(input.as_leaf().unwrap()).unwrap().data.to_f64(), vec![1.0]);
        // A container where the single-tensor kernel wants a tensor is an error, not a panic.
        let pair = rlgraph_core::Tree::Tuple(vec![x(), x()]);
        let err = exec.execute_tensors("run", [&pair]).unwrap_err().to_string();
        assert!(err.contains("one") && err.contains("input 0 is a container"), "{err}");
    }

    fn set_variable_of_the_wrong_shape_changes_nothing<B>() {
        let t = ComponentTest::<B>::new(dummy_0to1("d", 5.0), [], 1).unwrap();
        let mut t = t;
        let bad = HostTensor::f32([2], vec![1.0, 2.0]).unwrap();
        assert!(matches!(t.executor().set_variable("d/var", &bad), Err(CoreError::Variable { .. })));
        assert!(matches!(t.executor().set_variable("d/nope", &bad), Err(CoreError::Variable { .. })));
        assert_eq!(t.get_variable("var").unwrap(), Value::f32(5.0));
    }

    fn device_map_places_components_and_unavailable_devices_are_errors<B>() {
        let options = BuildOptions { device_map: DeviceMap::new(Device::Cpu).assign("agent/policy", Device::Cuda(7)), ..Default::default() };
        let root = Component::<B>::new("agent")
            .with_sub(linear_learner("policy", vec![1.0, 1.0]))
            .api("predict", vec![Param::new("x")], |ctx, args| ctx.call("policy", "predict", &[args.get(0)?]));
        let built = build(root, &spaces(&[("x", Space::from(FloatBox::new([2])).with_batch_rank(true))]), &options).unwrap();
        assert_eq!(built.variables()[0].device, Device::Cuda(7));
        let err = GraphExecutor::new(built, 0).err().unwrap().to_string();
        assert!(err.contains("agent/policy/w") && err.contains("cuda:7"), "{err}");
    }

    fn two_cpu_towers_give_the_same_update_as_one<B>() {
        let learner = linear_learner::<B>("learner", vec![0.5, -0.5, 1.0]);
        let batch = [("x", Space::from(FloatBox::new([3])).with_batch_rank(true)), ("y", Space::from(FloatBox::new([1])).with_batch_rank(true))];
        let x = matrix(5, &[1.0, 2.0, 0.0, 0.0, 1.0, 1.0, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0, -1.0, 0.5, 2.0]);
        let y = matrix(5, &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let lr = 0.1;
        // The gradient of mean squared error, by hand: g = 2/n X^T (X w - y).
        let xs = [[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 1.0], [-1.0, 0.5, 2.0]];
        let ys = [1.0, 2.0, 3.0, 4.0, 5.0];
        let w = [0.5, -0.5, 1.0];
        let r: Vec<f64> = xs.iter().zip(ys).map(|(row, y)| row.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() - y).collect();
        let g: Vec<f64> = (0..3).map(|j| 2.0 / 5.0 * xs.iter().zip(&r).map(|(row, ri)| row[j] * ri).sum::<f64>()).collect();
        let adam = Rule::Adam { beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };
        for (rule, step) in [
            // SGD: w -= lr g.
            (Rule::Sgd, (0..3).map(|j| lr * g[j]).collect::<Vec<f64>>()),
            // Adam's first step: both moments bias-corrected to g and g^2, so w -= lr g / (|g| + eps).
            (adam, (0..3).map(|j| lr * g[j] / (g[j].abs() + 1e-8)).collect()),
        ] {
            let spec = OptimizerSpec { rule, learning_rate: TimeDependent::Constant(lr), clip_grad_norm: None };
            let want = matrix(3, &(0..3).map(|j| (w[j] - step[j]) as f32).collect::<Vec<_>>());
            for towers in [1, 2, 3] {
                let strategy = MultiGpuSync { towers, fake_gpus: true };
                // Each tower on its own GPU where there are enough, else all on the CPU.
                let gpus: Vec<Device> = (0..towers).map(Device::Cuda).collect();
                let expected = if gpus.iter().all(|d| B::device_available(*d)) { gpus } else { vec![Device::Cpu; towers] };
                assert_eq!(strategy.devices::<B>().unwrap(), expected);
                let root = strategy.apply("multi", &learner, "loss", &["x", "y"], spec.clone()).unwrap();
                let mut t = ComponentTest::<B>::new(root, batch.clone(), 1).unwrap();
                t.call("update", &[x.clone(), y.clone()]).unwrap();
                let w0 = t.get_variable("tower-0/w").unwrap();
                rlgraph_core::check_close(&w0, &want, Tolerance::new(1e-5, 1e-5)).unwrap_or_else(|e| panic!("{towers} towers, {:?}: {e}", spec.rule));
                // The others take tower 0's weights before the next update computes.
                t.call("update", &[x.clone(), y.clone()]).unwrap();
                let w0 = t.get_variable("tower-0/w").unwrap();
                for k in 1..towers {
                    assert_ne!(t.get_variable(&format!("tower-{k}/w")).unwrap(), w0, "tower {k} lags one update");
                }
            }
        }
    }
}

#[test]
fn initializers_follow_their_definitions() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let value = |init: Initializer, shape: &[usize], rng: &mut rand_chacha::ChaCha8Rng| {
        VarDecl::new("v", shape, init).initial_value(rng).unwrap().data.to_f64()
    };
    assert_eq!(value(Initializer::Constant(0.25), &[3], &mut rng), vec![0.25; 3]);
    assert_eq!(value(Initializer::Zeros, &[2, 2], &mut rng), vec![0.0; 4]);
    assert_eq!(
        value(Initializer::Values(vec![1.0, 2.0]), &[2], &mut rng),
        vec![1.0, 2.0]
    );
    assert!(VarDecl::new("v", [3], Initializer::Values(vec![1.0]))
        .initial_value(&mut rng)
        .is_err());
    // Glorot uniform for a [100, 50] kernel: limit sqrt(6 / 150) = 0.2.
    let g = value(Initializer::GlorotUniform, &[100, 50], &mut rng);
    assert!(g.iter().all(|x| x.abs() <= 0.2 + 1e-6));
    assert!(g.iter().any(|x| x.abs() > 0.18), "uses the whole range");
    let n = value(Initializer::Normal { mean: 1.0, std: 2.0 }, &[20_000], &mut rng);
    let mean = n.iter().sum::<f64>() / n.len() as f64;
    let std = (n.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n.len() as f64).sqrt();
    assert!((mean - 1.0).abs() < 0.05 && (std - 2.0).abs() < 0.05, "{mean} {std}");
    let t = value(
        Initializer::TruncatedNormal { mean: 0.0, std: 0.5 },
        &[20_000],
        &mut rng,
    );
    assert!(t.iter().all(|x| x.abs() <= 1.0 + 1e-9));
    // Same seed, same values.
    let a = value(
        Initializer::GlorotUniform,
        &[4, 4],
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
    );
    let b = value(
        Initializer::GlorotUniform,
        &[4, 4],
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
    );
    assert_eq!(a, b);
}

#[test]
fn variance_scaling_follows_keras_definitions() {
    use rand::SeedableRng;
    use rlgraph_core::{FanMode, ScalingDistribution};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut value = |init: Initializer, shape: &[usize]| {
        VarDecl::new("v", shape, init)
            .initial_value(&mut rng)
            .unwrap()
            .data
            .to_f64()
    };
    let scaling = |scale: f64, mode: FanMode, distribution: ScalingDistribution| Initializer::VarianceScaling {
        scale,
        mode,
        distribution,
    };
    // The largest magnitude and the standard deviation.
    let max_abs = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (
            v.iter().fold(0.0_f64, |m, x| m.max(x.abs())),
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt(),
        )
    };
    // PyTorch's nn.Linear: scale 1/3 over fan-in, uniform: bound sqrt(3 * (1/3) / 256) = 1/16,
    // for a [256, 64] kernel and for a conv kernel [32, 4, 8, 8] (fan-in 4 * 8 * 8 = 256).
    for shape in [&[256, 64][..], &[32, 4, 8, 8]] {
        let v = value(scaling(1.0 / 3.0, FanMode::FanIn, ScalingDistribution::Uniform), shape);
        let (m, _) = max_abs(&v);
        assert!(m <= 0.0625 && m > 0.062, "{shape:?}: {m}");
    }
    // Fan-out 50: sqrt(3 / 50); the fans' mean 75: sqrt(3 / 75) = 0.2.
    let (m, _) = max_abs(&value(
        scaling(1.0, FanMode::FanOut, ScalingDistribution::Uniform),
        &[100, 50],
    ));
    assert!(m <= (3.0_f64 / 50.0).sqrt() && m > 0.24, "{m}");
    let (m, _) = max_abs(&value(
        scaling(1.0, FanMode::FanAvg, ScalingDistribution::Uniform),
        &[100, 50],
    ));
    assert!(m <= 0.2 && m > 0.196, "{m}");
    // He normal over fan-in 200: the truncated draws keep variance 2 / 200 (std 0.1), all within
    // two of the widened standard deviations, 2 * 0.1 / 0.8796 = 0.2274.
    let (m, s) = max_abs(&value(
        scaling(2.0, FanMode::FanIn, ScalingDistribution::TruncatedNormal),
        &[200, 100],
    ));
    assert!(m <= 0.2274 && (s - 0.1).abs() < 0.003, "{m} {s}");
    let (_, s) = max_abs(&value(
        scaling(2.0, FanMode::FanIn, ScalingDistribution::Normal),
        &[200, 100],
    ));
    assert!((s - 0.1).abs() < 0.003, "{s}");
    // TensorFlow's random_uniform in [-1, 3): mean 1, std 4 / sqrt(12).
    let v = value(Initializer::Uniform { low: -1.0, high: 3.0 }, &[20_000]);
    let (_, s) = max_abs(&v);
    assert!(v.iter().all(|x| (-1.0..3.0).contains(x)));
    assert!((s - 4.0 / 12.0_f64.sqrt()).abs() < 0.03, "{s}");
}
