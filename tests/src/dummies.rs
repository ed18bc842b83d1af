//! RLgraph's dummy components (rlgraph/tests/dummy_components.py), re-expressed.

use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, Component, GraphFn, Initializer, Param, VarDecl};

/// One input, one output: `run(input) = input + 1.0`.
pub fn dummy_1to1<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("input")], |ctx, args| {
            ctx.graph_fn("add_one", &[args.get(0)?])
        })
        .graph_fn(GraphFn::tensors("add_one", |_, xs| Ok(vec![B::affine(&xs[0], 1.0, 1.0)?])).infer_same())
}

/// Two inputs, one output: `run(input1, input2) = input1 + input2`.
pub fn dummy_2to1<B: Backend>(name: &str) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("input1"), Param::new("input2")], |ctx, args| {
            ctx.graph_fn("sum", &[args.get(0)?, args.get(1)?])
        })
        .graph_fn(GraphFn::tensors("sum", |_, xs| Ok(vec![B::add(&xs[0], &xs[1])?])).infer_same())
}

/// One input, two outputs: `run(input) = (input + c, input * c)`.
pub fn dummy_1to2<B: Backend>(name: &str, constant: f64) -> Component<B> {
    Component::new(name)
        .api("run", vec![Param::new("input")], |ctx, args| {
            ctx.graph_fn("plus_times", &[args.get(0)?])
        })
        .graph_fn(
            GraphFn::tensors("plus_times", move |_, xs| {
                Ok(vec![
                    B::affine(&xs[0], 1.0, constant)?,
                    B::affine(&xs[0], constant, 0.0)?,
                ])
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
        .graph_fn(GraphFn::tensors("read", |ctx, _| Ok(vec![ctx.var("var")?])))
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
        .graph_fn(GraphFn::tensors("sum3", |_, xs| Ok(vec![B::add(&B::add(&xs[0], &xs[1])?, &xs[2])?])).infer_same())
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
            Ok(vec![B::matmul(&xs[0], &ctx.var("w")?)?])
        }))
        .graph_fn(GraphFn::tensors("mse", |ctx, xs| {
            let r = B::sub(&B::matmul(&xs[0], &ctx.var("w")?)?, &xs[1])?;
            Ok(vec![B::mean_all(&B::square(&r)?)?])
        }))
}
