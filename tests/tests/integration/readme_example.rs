//! The README's component example, kept compiling and correct, on both backends.

use backend_candle::Candle;
use backend_tch::Tch;
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{Backend, Component, ComponentTest, GraphFn, Initializer, Param, VarDecl};

fn scale<B: Backend>() -> Component<B> {
    Component::new("scale")
        .api("run", vec![Param::new("x")], |ctx, args| {
            ctx.graph_fn("apply", &[args.get(0)?])
        })
        .variables(|_| Ok(vec![VarDecl::new("w", [], Initializer::Constant(3.0))]))
        .graph_fn(GraphFn::tensors("apply", |ctx, xs| Ok(vec![B::mul(xs[0], ctx.var("w")?)?])).infer_same())
}

#[test]
fn readme_example_runs_on_both_backends() -> rlgraph_core::Result<()> {
    let mut test = ComponentTest::<Candle>::new(scale(), [("x", Space::from(FloatBox::new([])))], 0)?;
    assert_eq!(test.call("run", &[Value::f32(2.0)])?, vec![Value::f32(6.0)]);
    let mut test = ComponentTest::<Tch>::new(scale(), [("x", Space::from(FloatBox::new([])))], 0)?;
    assert_eq!(test.call("run", &[Value::f32(2.0)])?, vec![Value::f32(6.0)]);
    Ok(())
}
