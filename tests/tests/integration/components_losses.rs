//! Loss functions on candle and on tch. The DQN cases are RLgraph's own published test
//! inputs, with the expected values re-derived by hand (in the comments); the others are
//! small cases worked out by hand from each loss's formula.

use rlgraph_components::losses::{
    actor_critic_loss, cross_entropy_loss, dqn_loss, euclidean_distance_loss, impala_loss, ppo_loss, sac_loss,
    ActorCriticLossSpec, ContainerLoss, DqnLossSpec, ImpalaLossSpec, PpoLossSpec, SacLossSpec,
};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{ComponentTest, CoreError, Tolerance};
use rlgraph_tests::both_backends;
use serde_json::json;

fn space(spec: serde_json::Value) -> Space {
    Space::from_json(&spec).unwrap().with_batch_rank(true)
}

fn scalars() -> Space {
    space(json!("float"))
}

fn value(s: &Space, v: serde_json::Value) -> Value {
    s.value_from_json(&v).unwrap()
}

fn scalar(x: f64) -> Value {
    Value::f32(x as f32)
}

fn tol() -> Tolerance {
    Tolerance::decimals(4)
}

/// Input spaces of a DQN loss over `q` Q-values and `a` actions.
fn dqn_spaces(q: &Space, a: &Space, double_q: bool) -> Vec<(&'static str, Space)> {
    let mut v = vec![
        ("q_values_s", q.clone()),
        ("actions", a.clone()),
        ("rewards", scalars()),
        ("terminals", space(json!("bool"))),
        ("qt_values_sp", q.clone()),
        ("loss_per_item", scalars()),
    ];
    if double_q {
        v.push(("q_values_sp", q.clone()));
    }
    v
}

both_backends! {
    fn dqn_single_action_discount_one<B>() {
        let (q, a) = (space(json!({"type": "float-box", "shape": [2]})), space(json!({"type": "int-box", "high": 2})));
        let spec = DqnLossSpec { discount: 1.0, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", spec), dqn_spaces(&q, &a, false), 0).unwrap();
        let inputs = [
            value(&q, json!([[10.0, -10.0], [-0.101, -90.6]])),
            value(&a, json!([0, 1])),
            value(&scalars(), json!([9.4, -1.23])),
            value(&space(json!("bool")), json!([false, false])),
            value(&q, json!([[12.0, -8.0], [22.3, 10.5]])),
        ];
        // 0.5 (9.4 + 12 - 10)^2 = 64.98 and 0.5 (-1.23 + 22.3 + 90.6)^2 = 6235.09445.
        let per_item = [0.5 * 11.4f64.powi(2), 0.5 * 111.67f64.powi(2)];
        let expected = value(&scalars(), json!(per_item));
        t.assert_call("loss_per_item", &inputs, std::slice::from_ref(&expected), Tolerance::new(1e-2, 1e-5));
        let mean = (per_item[0] + per_item[1]) / 2.0;
        t.assert_call("loss_average", std::slice::from_ref(&expected), &[scalar(mean)], Tolerance::new(1e-2, 1e-5));
        t.assert_call("loss", &inputs, &[scalar(mean), expected], Tolerance::new(1e-2, 1e-5));
    }

    fn double_dqn_with_a_terminal<B>() {
        let (q, a) = (space(json!({"type": "float-box", "shape": [3]})), space(json!({"type": "int-box", "high": 3})));
        let spec = DqnLossSpec { discount: 0.9, double_q: true, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", spec), dqn_spaces(&q, &a, true), 0).unwrap();
        let inputs = [
            value(&q, json!([[10.0, -10.0, 12.4], [-0.101, -4.6, -9.3]])),
            value(&a, json!([2, 1])),
            value(&scalars(), json!([10.3, -4.25])),
            value(&space(json!("bool")), json!([false, true])),
            value(&q, json!([[-12.3, 1.2, 1.4], [12.2, -11.5, 9.2]])),
            value(&q, json!([[-10.3, 1.5, 1.4], [8.2, -10.9, 9.3]])),
        ];
        // a' = argmax Q(s') = [1, 2]; Qt(s', a') = [1.2, 0 (terminal)]; Q(s, a) = [12.4, -4.6].
        let per_item = [0.5 * (10.3 + 0.9 * 1.2 - 12.4f64).powi(2), 0.5 * (-4.25 + 4.6f64).powi(2)];
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!(per_item))], tol());
    }

    fn dqn_multi_dimensional_actions<B>() {
        let q = space(json!({"type": "float-box", "shape": [3, 4]}));
        let a = space(json!({"type": "int-box", "high": 4, "shape": [3]}));
        let spec = DqnLossSpec { discount: 0.8, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", spec), dqn_spaces(&q, &a, false), 0).unwrap();
        let inputs = [
            value(&q, json!([[[10.0, -10.0, 9.8, 2.0], [20.2, -0.6, 0.001, 98.1], [10.0, -10.0, 9.8, 2.0]],
                             [[4.1, -11.1, 7.5, 2.1], [21.3, 9.5, -0.101, -90.6], [21.3, 9.5, -0.101, -90.6]]])),
            value(&a, json!([[0, 3, 2], [1, 2, 0]])),
            value(&scalars(), json!([9.4, -1.23])),
            value(&space(json!("bool")), json!([false, true])),
            value(&q, json!([[[12.0, -8.0, 7.8, 4.0], [16.2, -2.6, -6.001, 90.1], [12.0, -8.0, 7.8, 4.0]],
                             [[5.1, -12.1, 8.5, 3.1], [22.3, 10.5, 1.098, -89.2], [22.3, 10.5, 1.098, -89.2]]])),
        ];
        // TD errors are averaged over the three action dimensions before squaring:
        // item 0: (9.4 + 0.8*12 - 10), (9.4 + 0.8*90.1 - 98.1), (9.4 + 0.8*12 - 9.8);
        // item 1 (terminal): (-1.23 + 11.1), (-1.23 + 0.101), (-1.23 - 21.3).
        let d0 = ((9.4 + 0.8 * 12.0 - 10.0) + (9.4 + 0.8 * 90.1 - 98.1) + (9.4 + 0.8 * 12.0 - 9.8)) / 3.0;
        let d1 = ((-1.23 + 11.1) + (-1.23 + 0.101) + (-1.23 - 21.3)) / 3.0;
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([0.5 * d0 * d0, 0.5 * d1 * d1]))], tol());
    }

    fn double_dqn_on_a_two_by_two_action_space<B>() {
        let q = space(json!({"type": "float-box", "shape": [2, 2, 3]}));
        let a = space(json!({"type": "int-box", "high": 3, "shape": [2, 2]}));
        let spec = DqnLossSpec { discount: 1.0, double_q: true, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", spec), dqn_spaces(&q, &a, true), 0).unwrap();
        // Q(s) item i is 1+i .. 15+i in steps of 1 per action; Qt(s') is Q + 0.5, Q(s') is Q + 0.6.
        let block = |offset: f64| -> serde_json::Value {
            json!((0..4).map(|i| {
                let base = i as f64 + 1.0 + offset;
                vec![
                    vec![vec![base, base + 1.0, base + 2.0], vec![base + 3.0, base + 4.0, base + 5.0]],
                    vec![vec![base + 6.0, base + 7.0, base + 8.0], vec![base + 9.0, base + 10.0, base + 11.0]],
                ]
            }).collect::<Vec<_>>())
        };
        let inputs = [
            value(&q, block(0.0)),
            value(&a, json!([[[0, 1], [2, 0]], [[1, 2], [0, 1]], [[2, 0], [1, 2]], [[0, 1], [1, 1]]])),
            value(&scalars(), json!([-1.0, -2.0, -3.0, -4.0])),
            value(&space(json!("bool")), json!([false, false, true, false])),
            value(&q, block(0.5)),
            value(&q, block(0.6)),
        ];
        // RLgraph's derivation: 0.28125, 0.125, 69.03125, 2.53125.
        let d = |r: f64, qt: [f64; 4], qa: [f64; 4]| (0..4).map(|k| r + qt[k] - qa[k]).sum::<f64>() / 4.0;
        let per_item: Vec<f64> = [
            d(-1.0, [3.5, 6.5, 9.5, 12.5], [1.0, 5.0, 9.0, 10.0]),
            d(-2.0, [4.5, 7.5, 10.5, 13.5], [3.0, 7.0, 8.0, 12.0]),
            d(-3.0, [0.0; 4], [5.0, 6.0, 10.0, 14.0]),
            d(-4.0, [6.5, 9.5, 12.5, 15.5], [4.0, 8.0, 11.0, 14.0]),
        ]
        .iter()
        .map(|x| 0.5 * x * x)
        .collect();
        assert_eq!(per_item, vec![0.28125, 0.125, 69.03125, 2.53125]);
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!(per_item))], tol());
    }

    fn dqn_container_actions<B>() {
        let q = space(json!({"a": {"type": "float-box", "shape": [2]}, "b": {"ba": {"type": "float-box", "shape": [3]}, "bb": {"type": "float-box", "shape": [2]}}}));
        let a = space(json!({"a": {"type": "int-box", "high": 2}, "b": {"ba": {"type": "int-box", "high": 3}, "bb": {"type": "int-box", "high": 2}}}));
        let spec = DqnLossSpec { discount: 1.0, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", spec), dqn_spaces(&q, &a, false), 0).unwrap();
        let inputs = [
            value(&q, json!({"a": [[1.0, 2.0]], "b": {"ba": [[0.0, -0.5, 1.2]], "bb": [[-1.0, -2.0]]}})),
            value(&a, json!({"a": [0], "b": {"ba": [0], "bb": [1]}})),
            value(&scalars(), json!([1.0])),
            value(&space(json!("bool")), json!([false])),
            value(&q, json!({"a": [[-1.0, -2.0]], "b": {"ba": [[3.0, 3.1, 3.2]], "bb": [[1.0, -5.2]]}})),
        ];
        // TD errors per component: a: 1 - 1 - 1 = -1, ba: 1 + 3.2 - 0 = 4.2, bb: 1 + 1 + 2 = 4;
        // their mean 2.4, and 0.5 * 2.4^2 = 2.88 (RLgraph's value).
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([2.88]))], tol());
    }

    fn dqn_container_actions_per_action_loss<B>() {
        // The same batch as RLgraph's container case. TD targets per action: a 1 + max(-1, -2)
        // = 0, ba 1 + 3.2 = 4.2, bb 1 + max(1, -5.2) = 2; chosen Q-values 1, 0, -2.
        let q = space(json!({"a": {"type": "float-box", "shape": [2]}, "b": {"ba": {"type": "float-box", "shape": [3]}, "bb": {"type": "float-box", "shape": [2]}}}));
        let a = space(json!({"a": {"type": "int-box", "high": 2}, "b": {"ba": {"type": "int-box", "high": 3}, "bb": {"type": "int-box", "high": 2}}}));
        let inputs = [
            value(&q, json!({"a": [[1.0, 2.0]], "b": {"ba": [[0.0, -0.5, 1.2]], "bb": [[-1.0, -2.0]]}})),
            value(&a, json!({"a": [0], "b": {"ba": [0], "bb": [1]}})),
            value(&scalars(), json!([1.0])),
            value(&space(json!("bool")), json!([false])),
            value(&q, json!({"a": [[-1.0, -2.0]], "b": {"ba": [[3.0, 3.1, 3.2]], "bb": [[1.0, -5.2]]}})),
        ];
        // Own targets: errors -1, 4.2, 4; (0.5 + 0.5 * 17.64 + 0.5 * 16) / 3 = 5.773333.
        let own = DqnLossSpec { discount: 1.0, container_loss: ContainerLoss::PerAction, shared_container_action_target: false, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", own), dqn_spaces(&q, &a, false), 0).unwrap();
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([5.773333]))], tol());
        // Shared target (0 + 4.2 + 2) / 3 = 2.066667: errors 1.066667, 2.066667, 4.066667;
        // (0.568889 + 2.135556 + 8.268889) / 3 = 3.657778.
        let shared = DqnLossSpec { discount: 1.0, container_loss: ContainerLoss::PerAction, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", shared), dqn_spaces(&q, &a, false), 0).unwrap();
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([3.657778]))], tol());
        // RLgraph's averaged TD is the same with or without the shared target.
        let unshared = DqnLossSpec { discount: 1.0, shared_container_action_target: false, ..DqnLossSpec::default() };
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", unshared), dqn_spaces(&q, &a, false), 0).unwrap();
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([2.88]))], tol());
    }

    fn dqn_huber_importance_weights_and_n_step<B>() {
        let (q, a) = (space(json!({"type": "float-box", "shape": [2]})), space(json!({"type": "int-box", "high": 2})));
        let spec = DqnLossSpec { discount: 0.5, huber_loss: true, importance_weights: true, n_step: 2, ..DqnLossSpec::default() };
        let mut spaces = dqn_spaces(&q, &a, false);
        spaces.push(("importance_weights", scalars()));
        let mut t = ComponentTest::<B>::new(dqn_loss("dqn-loss", spec), spaces, 0).unwrap();
        let inputs = [
            value(&q, json!([[1.0, 0.0], [0.0, 2.0]])),
            value(&a, json!([0, 1])),
            value(&scalars(), json!([1.0, 2.0])),
            value(&space(json!("bool")), json!([false, false])),
            value(&q, json!([[4.0, 12.0], [0.0, 1.2]])),
            value(&scalars(), json!([0.5, 2.0])),
        ];
        // gamma^2 = 0.25. Item 0: 1 + 0.25*12 - 1 = 3 -> Huber 3 - 0.5 = 2.5, weighted 1.25.
        // Item 1: 2 + 0.25*1.2 - 2 = 0.3 -> 0.5 * 0.09 = 0.045, weighted 0.09.
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([1.25, 0.09]))], tol());
    }

    fn dqn_wrong_space_names_the_parameter<B>() {
        let (q, a) = (space(json!({"type": "float-box", "shape": [2]})), space(json!({"type": "int-box", "high": 2})));
        let mut spaces = dqn_spaces(&q, &a, false);
        spaces[3] = ("terminals", scalars());
        let err = ComponentTest::<B>::new(dqn_loss("dqn-loss", DqnLossSpec::default()), spaces, 0).err().expect("must fail");
        let text = err.to_string();
        assert!(matches!(err, CoreError::SpaceMismatch { .. }), "{text}");
        assert!(text.contains("dqn-loss") && text.contains("terminals") && text.contains("BoolBox"), "{text}");
    }

    fn actor_critic_by_hand<B>() {
        let spec = ActorCriticLossSpec { discount: 0.5, gae_lambda: 1.0, weight_pg: 1.0, weight_vf: 0.5, weight_entropy: 0.01 };
        let names = ["log_probs", "baseline_values", "rewards", "terminals", "sequence_indices", "entropy"];
        let spaces: Vec<(&str, Space)> = names.iter().map(|&n| (n, if n == "terminals" || n == "sequence_indices" { space(json!("bool")) } else { scalars() })).chain([("loss_per_item", scalars())]).collect();
        let mut t = ComponentTest::<B>::new(actor_critic_loss("actor-critic-loss", spec), spaces, 0).unwrap();
        let f = |v: serde_json::Value| value(&scalars(), v);
        let b = |v: serde_json::Value| value(&space(json!("bool")), v);
        let inputs = [f(json!([0.5f64.ln(), 0.25f64.ln()])), f(json!([1.0, 2.0])), f(json!([1.0, 1.0])), b(json!([false, true])), b(json!([false, true])), f(json!([0.7, 0.3]))];
        // deltas: 1 + 0.5*2 - 1 = 1 and 1 + 0 - 2 = -1; advantages (lambda 1): 1 + 0.5*(-1) = 0.5
        // and -1; value targets 1.5 and 1.
        let item0 = -(0.5f64.ln()) * 0.5 + 0.5 * 0.5 * 0.25 - 0.01 * 0.7;
        let item1 = -(0.25f64.ln()) * -1.0 + 0.5 * 0.5 * 1.0 - 0.01 * 0.3;
        t.assert_call("loss_per_item", &inputs, &[f(json!([item0, item1]))], tol());
    }

    fn ppo_clipping_by_hand<B>() {
        let spec = PpoLossSpec { clip_ratio: 0.2, value_function_clipping: Some(0.2), standardize_advantages: false, weight_vf: 1.0, weight_entropy: 0.1 };
        let names = ["log_probs", "prev_log_probs", "state_values", "prev_state_values", "advantages", "entropy"];
        let spaces: Vec<(&str, Space)> = names.iter().map(|&n| (n, scalars())).chain([("loss_per_item", scalars())]).collect();
        let mut t = ComponentTest::<B>::new(ppo_loss("ppo-loss", spec), spaces, 0).unwrap();
        let f = |v: serde_json::Value| value(&scalars(), v);
        let inputs = [
            f(json!([0.6f64.ln(), 0.6f64.ln()])),
            f(json!([0.4f64.ln(), 0.4f64.ln()])),
            f(json!([1.0, 0.6])),
            f(json!([0.5, 0.5])),
            f(json!([2.0, -2.0])),
            f(json!([0.5, 0.5])),
        ];
        // ratio 1.5, clipped 1.2. Item 0 (A = 2): -min(3, 2.4) = -2.4. Target 2.5; the new
        // value 1.0 is clipped to 0.7: max((1 - 2.5)^2, (0.7 - 2.5)^2) = 3.24.
        // Item 1 (A = -2): -min(-3, -2.4) = 3. Target -1.5; 0.6 is inside the clip range:
        // (0.6 + 1.5)^2 = 4.41 both ways.
        let item0 = -2.4 + 0.5 * 3.24 - 0.05;
        let item1 = 3.0 + 0.5 * 4.41 - 0.05;
        t.assert_call("loss_per_item", &inputs, &[f(json!([item0, item1]))], tol());
    }

    fn ppo_standardized_advantages<B>() {
        let spec = PpoLossSpec { standardize_advantages: true, weight_vf: 0.0, weight_entropy: 0.0, ..PpoLossSpec::default() };
        let names = ["log_probs", "prev_log_probs", "state_values", "prev_state_values", "advantages", "entropy"];
        let spaces: Vec<(&str, Space)> = names.iter().map(|&n| (n, scalars())).chain([("loss_per_item", scalars())]).collect();
        let mut t = ComponentTest::<B>::new(ppo_loss("ppo-loss", spec), spaces, 0).unwrap();
        let f = |v: serde_json::Value| value(&scalars(), v);
        let zeros = || f(json!([0.0, 0.0]));
        // Ratio 1; advantages [1, 3] standardize to [-1, 1], so the loss per item is [1, -1].
        let inputs = [zeros(), zeros(), zeros(), zeros(), f(json!([1.0, 3.0])), zeros()];
        t.assert_call("loss_per_item", &inputs, &[f(json!([1.0, -1.0]))], tol());
    }

    fn impala_on_policy_by_hand<B>() {
        let spec = ImpalaLossSpec { discount: 0.9, reward_clipping: rlgraph_components::losses::RewardClipping::Off, ..ImpalaLossSpec::default() };
        let tb = Space::from_json(&json!("float")).unwrap().with_time_rank(true, true).with_batch_rank(true);
        let tb_bool = Space::from_json(&json!("bool")).unwrap().with_time_rank(true, true).with_batch_rank(true);
        let spaces = vec![
            ("log_probs", tb.clone()), ("behaviour_log_probs", tb.clone()), ("entropy", tb.clone()), ("values", tb.clone()),
            ("rewards", tb.clone()), ("terminals", tb_bool.clone()), ("bootstrap_value", scalars()),
            ("loss_per_item", scalars()),
        ];
        let mut t = ComponentTest::<B>::new(impala_loss("impala-loss", spec), spaces.clone(), 0).unwrap();
        let f = |v: serde_json::Value| value(&tb, v);
        let lp = 0.5f64.ln();
        let inputs = [
            f(json!([[lp], [lp]])), f(json!([[lp], [lp]])), f(json!([[0.0], [0.0]])), f(json!([[0.5], [1.0]])),
            f(json!([[1.0], [2.0]])), value(&tb_bool, json!([[false], [false]])), value(&scalars(), json!([3.0])),
        ];
        // On-policy (rho = c = 1) V-trace is the n-step return: v_1 = 2 + 0.9*3 = 4.7,
        // v_0 = 1 + 0.9*4.7 = 5.23; advantages 1 + 0.9*4.7 - 0.5 = 4.73 and 2 + 0.9*3 - 1 = 3.7.
        let step0 = -lp * 4.73 + 0.5 * 0.5 * (5.23f64 - 0.5).powi(2);
        let step1 = -lp * 3.7 + 0.5 * 0.5 * (4.7f64 - 1.0).powi(2);
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([step0 + step1]))], tol());
        // RLgraph's default reward_clipping "clamp_one": reward 2 counts as 1, so
        // v_1 = 1 + 0.9*3 = 3.7, v_0 = 1 + 0.9*3.7 = 4.33; advantages 3.83 and 2.7.
        let clamped = rlgraph_components::from_spec::<B>(&json!({"type": "impala-loss-function", "discount": 0.9}), "loss").unwrap();
        let mut t = ComponentTest::<B>::new(clamped, spaces.clone(), 0).unwrap();
        let step0 = -lp * 3.83 + 0.25 * (4.33f64 - 0.5).powi(2);
        let step1 = -lp * 2.7 + 0.25 * (3.7f64 - 1.0).powi(2);
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([step0 + step1]))], tol());
        // "soft_asymmetric": 5 tanh(r / 5), so reward 2 counts as 5 tanh(0.4) and 1 as 5 tanh(0.2).
        let soft = rlgraph_components::from_spec::<B>(&json!({"type": "impala-loss-function", "discount": 0.9, "reward_clipping": "soft_asymmetric"}), "loss").unwrap();
        let mut t = ComponentTest::<B>::new(soft, spaces.clone(), 0).unwrap();
        let (r0, r1) = (5.0 * 0.2f64.tanh(), 5.0 * 0.4f64.tanh());
        let (v1, v0) = (r1 + 2.7, r0 + 0.9 * (r1 + 2.7));
        let step0 = -lp * (r0 + 0.9 * v1 - 0.5) + 0.25 * (v0 - 0.5).powi(2);
        let step1 = -lp * (r1 + 2.7 - 1.0) + 0.25 * (v1 - 1.0).powi(2);
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([step0 + step1]))], tol());
        let err = rlgraph_components::from_spec::<B>(&json!({"type": "impala-loss-function", "reward_clipping": "clip"}), "loss").err().unwrap().to_string();
        assert!(err.contains("loss.reward_clipping"), "{err}");
    }

    fn sac_losses_by_hand<B>() {
        let spec = SacLossSpec { discount: 0.5, initial_alpha: 2.0, target_entropy: Some(-1.0) };
        let names = ["rewards", "terminals", "q1", "q2", "qt1_next", "qt2_next", "log_probs_next", "log_probs_sampled", "q1_sampled", "q2_sampled"];
        let spaces: Vec<(&str, Space)> = names.iter().map(|&n| (n, if n == "terminals" { space(json!("bool")) } else { scalars() })).chain([("loss_per_item", scalars())]).collect();
        let mut t = ComponentTest::<B>::new(sac_loss("sac-loss", spec), spaces.clone(), 0).unwrap();
        let f = |x: f64| value(&scalars(), json!([x]));
        let inputs = [f(1.0), value(&space(json!("bool")), json!([false])), f(1.0), f(2.0), f(3.0), f(4.0), f(-1.0), f(-0.5), f(2.0), f(1.0)];
        // alpha 2: y = 1 + 0.5 (min(3, 4) - 2*(-1)) = 3.5; critic 0.5 ((1-3.5)^2 + (2-3.5)^2) = 4.25;
        // actor 2*(-0.5) - min(2, 1) = -2; alpha loss -ln 2 (-0.5 - 1) = 1.5 ln 2.
        t.assert_call("loss_per_item", &inputs, &[f(-2.0), f(4.25), f(1.5 * 2f64.ln())], tol());
        t.assert_call("get_alpha", &[], &[scalar(2.0)], tol());
        // RLgraph's target_entropy=None: the alpha loss is zero, the other two are unchanged.
        for spec in [json!({"type": "sac-loss", "discount": 0.5, "initial_alpha": 2.0, "target_entropy": null}), json!({"type": "sac-loss", "discount": 0.5, "initial_alpha": 2.0})] {
            let loss = rlgraph_components::from_spec::<B>(&spec, "loss_spec").unwrap();
            let mut t = ComponentTest::<B>::new(loss, spaces.clone(), 0).unwrap();
            t.assert_call("loss_per_item", &inputs, &[f(-2.0), f(4.25), f(0.0)], tol());
        }
    }

    fn td3_losses_by_hand<B>() {
        let names = ["rewards", "terminals", "q1", "q2", "qt1_next", "qt2_next"];
        let spaces: Vec<(&str, Space)> = names.iter().map(|&n| (n, if n == "terminals" { space(json!("bool")) } else { scalars() })).collect();
        let mut t = ComponentTest::<B>::new(agents::td3_loss("td3-loss", 0.5), spaces, 0).unwrap();
        let f = |xs: &[f64]| value(&scalars(), json!(xs));
        let terminals = value(&space(json!("bool")), json!([false, true]));
        let inputs = [f(&[1.0, -1.0]), terminals, f(&[1.0, 0.0]), f(&[2.0, -2.0]), f(&[3.0, 9.0]), f(&[4.0, 5.0])];
        // y = (1 + 0.5 min(3, 4), -1 + 0) = (2.5, -1); q1: ((1 - 2.5)^2 + (0 + 1)^2) / 2 = 1.625,
        // q2: ((2 - 2.5)^2 + (-2 + 1)^2) / 2 = 0.625; the critic loss is their sum.
        t.assert_call("critic_loss", &inputs, &[scalar(2.25)], tol());
        t.assert_call("actor_loss", &[f(&[1.0, 2.0])], &[scalar(-1.5)], tol());
    }

    fn supervised_losses_by_hand<B>() {
        let logits = space(json!({"type": "float-box", "shape": [3]}));
        let labels = space(json!({"type": "int-box", "high": 3}));
        let mut t = ComponentTest::<B>::new(cross_entropy_loss("cross-entropy"), [("parameters", logits.clone()), ("labels", labels.clone()), ("loss_per_item", scalars())], 0).unwrap();
        // softmax(ln 1, ln 2, ln 3) = (1/6, 2/6, 3/6): -ln(3/6) = ln 2, -ln(1/6) = ln 6.
        let x = value(&logits, json!([[0.0, 2f64.ln(), 3f64.ln()], [0.0, 2f64.ln(), 3f64.ln()]]));
        t.assert_call("loss_per_item", &[x.clone(), value(&labels, json!([2, 0]))], &[value(&scalars(), json!([2f64.ln(), 6f64.ln()]))], tol());
        let points = space(json!({"type": "float-box", "shape": [2]}));
        let mut t = ComponentTest::<B>::new(euclidean_distance_loss("euclidean"), [("parameters", points.clone()), ("labels", points.clone()), ("loss_per_item", scalars())], 0).unwrap();
        t.assert_call("loss", &[value(&points, json!([[3.0, 4.0], [1.0, 1.0]])), value(&points, json!([[0.0, 0.0], [1.0, 2.0]]))], &[scalar(3.0), value(&scalars(), json!([5.0, 1.0]))], tol());
    }
}

both_backends! {
    fn losses_build_from_rlgraph_specs<B>() {
        let (q, a) = (space(json!({"type": "float-box", "shape": [3]})), space(json!({"type": "int-box", "high": 3})));
        let spec = json!({"type": "DQN-Loss-Function", "double_q": true, "discount": 0.9});
        let loss = rlgraph_components::from_spec::<B>(&spec, "loss_spec").unwrap();
        let mut t = ComponentTest::<B>::new(loss, dqn_spaces(&q, &a, true), 0).unwrap();
        let inputs = [
            value(&q, json!([[10.0, -10.0, 12.4]])),
            value(&a, json!([2])),
            value(&scalars(), json!([10.3])),
            value(&space(json!("bool")), json!([false])),
            value(&q, json!([[-12.3, 1.2, 1.4]])),
            value(&q, json!([[-10.3, 1.5, 1.4]])),
        ];
        t.assert_call("loss_per_item", &inputs, &[value(&scalars(), json!([0.5 * (10.3 + 0.9 * 1.2 - 12.4f64).powi(2)]))], tol());
        for ty in ["ppo-loss-function", "actor_critic_loss_function", "impala-loss-function", "sac-loss-function", "categorical-cross-entropy-loss", "euclidian-distance-loss", "gae", "sequence-helper", "v-trace"] {
            rlgraph_components::from_spec::<B>(&json!({"type": ty}), "loss_spec").unwrap_or_else(|e| panic!("{ty}: {e}"));
        }
        let err = rlgraph_components::from_spec::<B>(&json!({"type": "dqn-loss-function", "discont": 0.9}), "loss_spec").err().unwrap().to_string();
        assert!(err.contains("discont"), "{err}");
    }
}
