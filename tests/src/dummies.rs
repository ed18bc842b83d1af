//! RLgraph's dummy components (rlgraph/tests/dummy_components.py), re-expressed.

use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, Component, GraphFn, Initializer, Param, VarDecl};

/// One input, one output: `run(input) = input + 1.0`.
pub fn dummy_1to1<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("input")], |ctx, args| {
            ctx.graph_fn("add_one", &[args.get(0)?])
        })
        .graph_fn(GraphFn::tensors("add_one", |_, xs| Ok(vec![B::affine(xs[0], 1.0, 1.0)?])).infer_same())
}

/// Two inputs, one output: `run(input1, input2) = input1 + input2`.
pub fn dummy_2to1<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("input1"), Param::new("input2")], |ctx, args| {
            ctx.graph_fn("sum", &[args.get(0)?, args.get(1)?])
        })
        .graph_fn(GraphFn::tensors("sum", |_, xs| Ok(vec![B::add(xs[0], xs[1])?])).infer_same())
}

/// One input, two outputs: `run(input) = (input + c, input * c)`.
pub fn dummy_1to2<B: Backend>(name: &str, constant: f64) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("input")], |ctx, args| {
            ctx.graph_fn("plus_times", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("plus_times", move |_, xs| {
                Ok(vec![B::affine(xs[0], 1.0, constant)?, B::affine(xs[0], constant, 0.0)?])
            })
            .outputs(2)
            .infer_same(),
        )
}

/// No inputs, one output: `run() = var`, a variable initialised to `value`.
pub fn dummy_0to1<B: Backend>(name: &str, value: f64) -> Component<B> {
    Component::new(name)
        .api("run", vec![], |ctx, _| ctx.graph_fn("read", &[]))
        .variables(move |_| Ok(vec![VarDecl::new("var", [], Initializer::Constant(value))]))
        // No explicit inference: the build runs the kernel on dummy inputs to learn the space.
        .graph_fn(GraphFn::tensors("read", |ctx, _| Ok(vec![ctx.var("var").cloned()?])))
}

/// `run(a, b = 2.0, c) = a + b + c`: a default argument in the middle of the list.
pub fn dummy_default_in_middle<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .api(
            "run",
            vec![
                Param::new("a"),
                Param::with_default("b", Value::f32(2.0)),
                Param::new("c"),
            ],
            |ctx, args| ctx.graph_fn("sum3", &[args.get(0)?, args.get(1)?, args.get(2)?]),
        )
        .graph_fn(GraphFn::tensors("sum3", |_, xs| Ok(vec![B::add(&B::add(xs[0], xs[1])?, xs[2])?])).infer_same())
}

/// A linear regression learner: `predict(x) = x w`, `loss(x, y) = mean((x w - y)^2)`, with
/// `w` of shape `[features, 1]` starting at `init`.
pub fn linear_learner<B: Backend>(name: &str, init: Vec<f64>) -> Component<B> {
    Component::new(name)
        .api("predict", vec![Param::new("x")], |ctx, args| {
            ctx.graph_fn("predict", &[args.get(0)?])
        })
        .api("loss", vec![Param::new("x"), Param::new("y")], |ctx, args| {
            ctx.graph_fn("mse", &[args.get(0)?, args.get(1)?])
        })
        .variables(move |spaces| {
            let features = spaces.get("x")?.shape().and_then(|s| s.first().copied()).unwrap_or(1);
            Ok(vec![VarDecl::new(
                "w",
                [features, 1],
                Initializer::Values(init.clone()),
            )])
        })
        .graph_fn(GraphFn::tensors("predict", |ctx, xs| {
            Ok(vec![B::matmul(xs[0], ctx.var("w")?)?])
        }))
        .graph_fn(GraphFn::tensors("mse", |ctx, xs| {
            let r = B::sub(&B::matmul(xs[0], ctx.var("w")?)?, xs[1])?;
            Ok(vec![B::mean_all(&B::square(&r)?)?])
        }))
}

/// A dense layer `y = act(x W + b)` with Glorot-uniform `W` of `[in, units]` and zero `b`.
pub fn dense<B: Backend>(name: &str, units: usize, relu: bool) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("x")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .variables(move |spaces| {
            let inputs = spaces.get("x")?.shape().and_then(|s| s.last().copied()).unwrap_or(1);
            Ok(vec![
                VarDecl::new("kernel", [inputs, units], Initializer::GlorotUniform),
                VarDecl::new("bias", [units], Initializer::Zeros),
            ])
        })
        .graph_fn(
            GraphFn::tensors("apply", move |ctx, xs| {
                let y = B::add(&B::matmul(xs[0], ctx.var("kernel")?)?, ctx.var("bias")?)?;
                Ok([if relu { B::relu(&y)? } else { y }])
            })
            .infer(move |_, spaces| {
                let s = &spaces[0];
                let mut shape = s.shape().unwrap_or(&[]).to_vec();
                if let Some(last) = shape.last_mut() {
                    *last = units;
                }
                Ok(vec![rlgraph_core::spaces::Space::from(
                    rlgraph_core::spaces::FloatBox::new(shape),
                )
                .with_ranks(s.ranks().unwrap_or_default())])
            }),
        )
}

/// Components that run their sub-components' `run` methods one after another.
pub fn chain<B: Backend>(name: &str, subs: Vec<Component<B>>) -> Component<B> {
    let names: Vec<String> = subs.iter().map(|s| s.name().to_string()).collect();
    subs.into_iter().fold(Component::new(name), Component::with_sub).api(
        "run",
        vec![Param::new("x")],
        move |ctx, args| {
            let mut x = args.get(0)?;
            for n in &names {
                x = ctx.call(n, "run", &[x])?[0];
            }
            Ok(vec![x])
        },
    )
}

/// An MLP of dense layers with the given widths (ReLU between, linear last): `run(x)`.
pub fn mlp<B: Backend>(name: &str, widths: &[usize]) -> Component<B> {
    let layers = widths
        .iter()
        .enumerate()
        .map(|(i, &w)| dense(&format!("dense-{i}"), w, i + 1 < widths.len()))
        .collect();
    chain(name, layers)
}

/// A synthetic 43-component graph shaped like RLgraph's dueling DQN with prioritized replay
/// (preprocessor stack, dueling policy, target policy, exploration, memory trees, loss,
/// optimizer, splitter and merger), every component called by the root's `update(x)`.
pub fn synthetic_dueling_dqn<B: Backend>() -> Component<B> {
    let policy = || {
        chain(
            "policy",
            vec![
                chain(
                    "network",
                    (0..5).map(|i| dense(&format!("dense-{i}"), 16, true)).collect(),
                ),
                chain(
                    "adapter",
                    vec![
                        dense("action-layer", 8, false),
                        dummy_1to1("reshape"),
                        dummy_1to1("softmax"),
                    ],
                ),
                chain(
                    "dueling",
                    vec![dense("value-stream", 8, false), dense("advantage-stream", 8, false)],
                ),
            ],
        )
    };
    let policy = policy();
    let target = policy.copy_as("target-policy", false);
    chain(
        "dqn-agent",
        vec![
            chain(
                "preprocessor-stack",
                vec![dummy_1to1("p0"), dummy_1to1("p1"), dummy_1to1("p2")],
            ),
            policy,
            target,
            chain("exploration", vec![dummy_1to1("epsilon-decay")]),
            chain("memory", vec![dummy_1to1("sum-tree"), dummy_1to1("min-tree")]),
            chain("loss", vec![dummy_1to1("huber")]),
            dummy_1to1("optimizer"),
            dummy_1to1("splitter"),
            dummy_1to1("merger"),
        ],
    )
}

/// RLgraph's diamond: A (1-to-2, constant 1.3) feeds B and C (1-to-1), both feed D (2-to-1).
pub fn diamond<B: Backend>() -> Component<B> {
    Component::<B>::new("diamond")
        .with_sub(dummy_1to2("A", 1.3))
        .with_sub(dummy_1to1("B"))
        .with_sub(dummy_1to1("C"))
        .with_sub(dummy_2to1("D"))
        .api("run", vec![Param::new("input")], |ctx, args| {
            let a = ctx.call("A", "run", &[args.get(0)?])?;
            let b = ctx.call("B", "run", &[a[0]])?;
            let c = ctx.call("C", "run", &[a[1]])?;
            ctx.call("D", "run", &[b[0], c[0]])
        })
}

/// The Nature-DQN network (Mnih et al. 2015) as an RLgraph layer-spec list, for 84x84x4 frames.
pub fn nature_dqn_spec() -> serde_json::Value {
    serde_json::json!([
        {"type": "conv2d", "filters": 32, "kernel_size": 8, "strides": 4, "activation": "relu", "scope": "conv1"},
        {"type": "conv2d", "filters": 64, "kernel_size": 4, "strides": 2, "activation": "relu", "scope": "conv2"},
        {"type": "conv2d", "filters": 64, "kernel_size": 3, "strides": 1, "activation": "relu", "scope": "conv3"},
        {"type": "reshape", "flatten": true, "scope": "flatten"},
        {"type": "dense", "units": 512, "activation": "relu", "scope": "fc"},
        {"type": "dense", "units": 6, "scope": "q"}
    ])
}
