//! Optimizers: a few steps of each, checked against hand calculation and against a plain
//! f64 reference loop written here from the update rules' definitions, on candle and on tch.

use rlgraph_components::{optimizer, OptimizerSpec};
use rlgraph_core::spaces::{FloatBox, Space, Value};
use rlgraph_core::{Backend, Component, ComponentTest, GraphFn, Initializer, Param, Tolerance, VarDecl};
use rlgraph_tests::both_backends;
use serde_json::json;

const W0: [f64; 2] = [1.0, -2.0];

/// A model whose loss is `sum(w^2)`, so the gradient is `2 w`, and an optimizer for it.
fn learner<B: Backend>(spec: serde_json::Value) -> Component<B> {
    let model = Component::<B>::new("model")
        .api("loss", vec![], |ctx, _| ctx.graph_fn("sum_sq", &[]))
        .variables(|_| Ok(vec![VarDecl::new("w", [2], Initializer::Values(W0.to_vec()))]))
        .graph_fn(
            GraphFn::tensors("sum_sq", |ctx, _| Ok(vec![B::sum_all(&B::square(ctx.var("w")?)?)?]))
                .infer(|_, _| Ok(vec![FloatBox::new([]).into()])),
        );
    Component::<B>::new("learner")
        .with_sub(model)
        .with_sub(optimizer(
            "optimizer",
            OptimizerSpec::parse(&spec, "optimizer_spec").unwrap(),
        ))
        .api("update", vec![Param::new("time_percentage")], |ctx, args| {
            let vars = ctx.call("model", "variables", &[])?;
            let loss = ctx.call("model", "loss", &[])?;
            ctx.call("optimizer", "step", &[vars[0], loss[0], args.get(0)?])
        })
        .api("two_phase", vec![], |ctx, _| {
            let vars = ctx.call("model", "variables", &[])?;
            let loss = ctx.call("model", "loss", &[])?;
            let grads = ctx.call("optimizer", "calculate_gradients", &[vars[0], loss[0]])?;
            ctx.call("optimizer", "apply_gradients", &[vars[0], grads[0]])?;
            Ok(grads)
        })
}

fn run<B: Backend>(spec: serde_json::Value, steps: usize, t: f32) -> Vec<f64> {
    let mut test = ComponentTest::<B>::new(
        learner::<B>(spec),
        [("time_percentage", Space::from(FloatBox::new([])))],
        0,
    )
    .unwrap();
    for _ in 0..steps {
        test.call("update", &[Value::f32(t)]).unwrap();
    }
    match test.get_variable("model/w").unwrap() {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        other => panic!("{other:?}"),
    }
}

fn close(got: &[f64], want: &[f64]) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-5 + 1e-5 * w.abs(), "got {got:?}, want {want:?}");
    }
}

/// Reference: `steps` updates of `rule` on loss sum(w^2), in plain f64.
fn reference(steps: usize, rule: &str, lr: f64) -> Vec<f64> {
    let mut w = W0.to_vec();
    let (mut m, mut v, mut b) = (vec![0.0; 2], vec![0.0; 2], vec![0.0; 2]);
    for t in 1..=steps {
        for i in 0..2 {
            let g = 2.0 * w[i];
            w[i] -= match rule {
                "adam" => {
                    m[i] = 0.9 * m[i] + 0.1 * g;
                    v[i] = 0.999 * v[i] + 0.001 * g * g;
                    let (mh, vh) = (
                        m[i] / (1.0 - 0.9f64.powi(t as i32)),
                        v[i] / (1.0 - 0.999f64.powi(t as i32)),
                    );
                    lr * mh / (vh.sqrt() + 1e-8)
                }
                "rmsprop" => {
                    v[i] = 0.99 * v[i] + 0.01 * g * g;
                    lr * g / (v[i].sqrt() + 1e-8)
                }
                // The MinAtar reference's: PyTorch's RMSprop(alpha=0.95, eps=0.01, centered=True).
                "centered-rmsprop" => {
                    v[i] = 0.95 * v[i] + 0.05 * g * g;
                    m[i] = 0.95 * m[i] + 0.05 * g;
                    lr * g / ((v[i] - m[i] * m[i]).sqrt() + 0.01)
                }
                // The same with PyTorch's momentum 0.95 on the scaled steps.
                "centered-rmsprop-momentum" => {
                    v[i] = 0.95 * v[i] + 0.05 * g * g;
                    m[i] = 0.95 * m[i] + 0.05 * g;
                    b[i] = 0.95 * b[i] + g / ((v[i] - m[i] * m[i]).sqrt() + 0.01);
                    lr * b[i]
                }
                "adagrad" => {
                    v[i] += g * g;
                    lr * g / (v[i].sqrt() + 1e-10)
                }
                "adadelta" => {
                    // rho 0.95 and epsilon 1e-2 (large, so the first steps are visible).
                    v[i] = 0.95 * v[i] + 0.05 * g * g;
                    let dx = (m[i] + 1e-2).sqrt() / (v[i] + 1e-2).sqrt() * g;
                    m[i] = 0.95 * m[i] + 0.05 * dx * dx;
                    lr * dx
                }
                _ => lr * g,
            };
        }
    }
    w
}

both_backends! {
    fn sgd_by_hand<B>() {
        // w <- w - 0.1 * 2w = 0.8 w per step.
        close(&run::<B>(json!({"type": "sgd", "learning_rate": 0.1}), 1, 0.0), &[0.8, -1.6]);
        close(&run::<B>(json!({"type": "sgd", "learning_rate": 0.1}), 2, 0.0), &[0.64, -1.28]);
    }

    fn adam_by_hand_then_against_the_reference<B>() {
        // Step 1 by hand: m^ = g, v^ = g^2, so w moves by lr * sign(g): [0.9, -1.9].
        close(&run::<B>(json!({"type": "adam", "learning_rate": 0.1}), 1, 0.0), &[0.9, -1.9]);
        close(&run::<B>(json!({"type": "adam", "learning_rate": 0.1}), 3, 0.0), &reference(3, "adam", 0.1));
    }

    fn centered_rmsprop_by_hand_then_against_the_reference<B>() {
        // Step 1 by hand, w = 1: g = 2, v = 0.05 * 4 = 0.2, m = 0.05 * 2 = 0.1, so
        // v - m^2 = 0.19 and w = 1 - 0.2 / (0.435890 + 0.01) = 1 - 0.448541 = 0.551459; for
        // w = -2, g = -4, v = 0.8, m = -0.2, v - m^2 = 0.76, w = -2 + 0.4 / (0.871780 + 0.01)
        // = -2 + 0.453628 = -1.546372.
        let spec = json!({"type": "rmsprop", "learning_rate": 0.1, "alpha": 0.95, "epsilon": 0.01, "centered": true});
        close(&run::<B>(spec.clone(), 1, 0.0), &[0.551459, -1.546372]);
        close(&run::<B>(spec, 3, 0.0), &reference(3, "centered-rmsprop", 0.1));
        // With momentum, step 1 is the same (the buffer starts at the scaled step); later ones
        // carry 0.95 of the last.
        let spec = json!({"type": "rmsprop", "learning_rate": 0.1, "alpha": 0.95, "epsilon": 0.01, "centered": true, "momentum": 0.95});
        close(&run::<B>(spec.clone(), 1, 0.0), &[0.551459, -1.546372]);
        close(&run::<B>(spec, 3, 0.0), &reference(3, "centered-rmsprop-momentum", 0.1));
        let bad = json!({"type": "rmsprop", "learning_rate": 0.1, "momentum": 1.0});
        let e = OptimizerSpec::parse(&bad, "optimizer_spec").unwrap_err().to_string();
        assert!(e.contains("optimizer_spec.momentum"), "{e}");
        let both = json!({"type": "rmsprop", "learning_rate": 0.1, "alpha": 0.95, "decay": 0.9});
        let e = OptimizerSpec::parse(&both, "optimizer_spec").unwrap_err().to_string();
        assert!(e.contains("optimizer_spec.alpha") && e.contains("one of them"), "{e}");
    }

    fn rmsprop_and_adagrad_against_the_reference<B>() {
        close(&run::<B>(json!({"type": "rmsprop", "learning_rate": 0.01}), 3, 0.0), &reference(3, "rmsprop", 0.01));
        close(&run::<B>(json!({"type": "adagrad", "learning_rate": 0.1}), 3, 0.0), &reference(3, "adagrad", 0.1));
    }

    fn adadelta_by_hand_then_against_the_reference<B>() {
        // Step 1 by hand, w = 1: g = 2, E[g^2] = 0.05 * 4 = 0.2, dx = sqrt(0.01) / sqrt(0.21) * 2
        // = 0.43644, so w = 1 - 0.5 * 0.43644 = 0.78178; for w = -2, g = -4, E[g^2] = 0.8,
        // dx = 0.1 / sqrt(0.81) * -4 = -0.44444, w = -1.77778.
        let spec = json!({"type": "adadelta", "learning_rate": 0.5, "rho": 0.95, "epsilon": 0.01});
        close(&run::<B>(spec.clone(), 1, 0.0), &[0.781782, -1.777778]);
        close(&run::<B>(spec, 3, 0.0), &reference(3, "adadelta", 0.5));
    }

    fn clip_grad_norm_scales_the_gradient<B>() {
        // g = [2, -4], |g| = sqrt(20); clipped to norm 1: w -= 0.1 * g / sqrt(20).
        let n = 20f64.sqrt();
        close(&run::<B>(json!({"type": "sgd", "learning_rate": 0.1, "clip_grad_norm": 1.0}), 1, 0.0), &[1.0 - 0.2 / n, -2.0 + 0.4 / n]);
    }

    fn time_dependent_learning_rate<B>() {
        // lr = linear 0.1 -> 0 at t = 0.5 is 0.05: w <- w - 0.05 * 2w = 0.9 w.
        close(&run::<B>(json!({"type": "sgd", "learning_rate": ["linear", 0.1, 0.0]}), 1, 0.5), &[0.9, -1.8]);
    }

    fn gradients_calculated_and_applied_separately<B>() {
        let spec = json!({"type": "sgd", "learning_rate": 0.1});
        let mut test = ComponentTest::<B>::new(learner::<B>(spec), [("time_percentage", Space::from(FloatBox::new([])))], 0).unwrap();
        let grads = test.call("two_phase", &[]).unwrap();
        let want = Value::Dict([("learner.model.w".to_string(), Value::Float32(rlgraph_core::spaces::Array::new([2], vec![2.0, -4.0]).unwrap()))].into());
        rlgraph_core::check_close(&grads[0], &want, Tolerance::decimals(5)).unwrap();
        rlgraph_core::check_close(&test.get_variable("model/w").unwrap(), &Value::Float32(rlgraph_core::spaces::Array::new([2], vec![0.8, -1.6]).unwrap()), Tolerance::decimals(5)).unwrap();
    }
}

#[test]
fn optimizer_specs_name_unknown_types_and_keys() {
    let err = OptimizerSpec::parse(&json!({"type": "nadam", "learning_rate": 0.1}), "optimizer_spec")
        .unwrap_err()
        .to_string();
    assert!(err.contains("optimizer_spec.type") && err.contains("nadam"), "{err}");
    let err = OptimizerSpec::parse(&json!({"type": "adam", "learnin_rate": 0.1}), "optimizer_spec")
        .unwrap_err()
        .to_string();
    assert!(err.contains("optimizer_spec.learnin_rate"), "{err}");
}
