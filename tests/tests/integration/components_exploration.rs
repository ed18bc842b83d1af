//! Exploration: epsilon-greedy with decay (RLgraph's 60% / 15% test), Gaussian and
//! Ornstein-Uhlenbeck noise against their defining statistics, on candle and on tch.

use rlgraph_components::{epsilon_exploration, gaussian_noise, ornstein_uhlenbeck_noise, TimeDependent};
use rlgraph_core::spaces::{Array, FloatBox, IntBox, Space, Value};
use rlgraph_core::ComponentTest;
use rlgraph_tests::both_backends;

const N: usize = 10_000;

fn floats(v: Vec<f32>) -> Value {
    Value::Float32(Array::new([v.len()], v).unwrap())
}

fn fraction_true(v: &Value) -> f64 {
    match v {
        Value::Bool(a) => a.data().iter().filter(|b| **b).count() as f64 / a.data().len() as f64,
        other => panic!("{other:?}"),
    }
}

fn mean_std(v: &Value) -> (f64, f64) {
    let xs: Vec<f64> = match v {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        other => panic!("{other:?}"),
    };
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    (
        m,
        (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64).sqrt(),
    )
}

both_backends! {
    fn epsilon_decay_explores_about_60_percent_overall_and_15_percent_at_the_end<B>() {
        let schedule = TimeDependent::Linear { from: 1.0, to: 0.15 };
        let actions = Space::from(IntBox::new(4).unwrap()).with_batch_rank(true);
        let t_space = Space::from(FloatBox::new([])).with_batch_rank(true);
        let mut t = ComponentTest::<B>::new(epsilon_exploration("exploration", schedule, &actions).unwrap(), [("sample", actions.clone()), ("actions", actions.clone()), ("time_percentage", t_space)], 5).unwrap();
        let sample = Value::Int32(Array::new([N], vec![0; N]).unwrap());
        // Uniform time: the mean epsilon is (1.0 + 0.15) / 2 = 0.575; the standard error is 0.005.
        let uniform: Vec<f32> = (0..N).map(|i| i as f32 / N as f32).collect();
        let overall = fraction_true(&t.call("do_explore", &[sample.clone(), floats(uniform)]).unwrap()[0]);
        assert!((overall - 0.575).abs() < 0.02, "explored {overall}");
        // Near the end (t in [0.99, 1]) epsilon is about 0.154.
        let late: Vec<f32> = (0..N).map(|i| 0.99 + 0.01 * i as f32 / N as f32).collect();
        let end = fraction_true(&t.call("do_explore", &[sample.clone(), floats(late)]).unwrap()[0]);
        assert!((end - 0.154).abs() < 0.02, "explored {end}");
        // At t = 0 epsilon is 1: every action is replaced by a uniform random one in range.
        let out = t.call("get_action", &[sample, floats(vec![0.0])]).unwrap();
        let Value::Int32(a) = &out[0] else { panic!("{out:?}") };
        let counts: Vec<usize> = (0..4).map(|k| a.data().iter().filter(|&&x| x == k).count()).collect();
        assert!(counts.iter().all(|&c| (c as f64 - 2500.0).abs() < 200.0), "{counts:?}");
    }

    fn greedy_actions_pass_through_when_epsilon_is_zero<B>() {
        let actions = Space::from(IntBox::new(3).unwrap()).with_batch_rank(true);
        let e = || epsilon_exploration("e", TimeDependent::Constant(0.0), &Space::from(IntBox::new(3).unwrap())).unwrap();
        let mut t = ComponentTest::<B>::new(e(), [("sample", actions.clone()), ("actions", actions), ("time_percentage", Space::from(FloatBox::new([])))], 1).unwrap();
        let a = Value::Int32(Array::new([4], vec![2, 0, 1, 2]).unwrap());
        assert_eq!(t.call("get_action", &[a.clone(), Value::f32(0.3)]).unwrap(), vec![a]);
        let bad = Space::from(IntBox::new(5).unwrap()).with_batch_rank(true);
        let err = ComponentTest::<B>::new(e(), [("sample", bad.clone()), ("actions", bad), ("time_percentage", Space::from(FloatBox::new([])))], 1).err().unwrap();
        assert!(err.to_string().contains("'e'") && err.to_string().contains("'actions'"), "{err}");
    }

    fn container_actions_share_one_decision_per_item_and_draw_each_action<B>() {
        // RLgraph's Exploration: one epsilon decision per batch item, a random choice per
        // action (and per element). With 1000 categories a draw repeats the greedy 0 with
        // probability 1/1000, so "a changed" and "b changed" mark the exploring items.
        let space = Space::from_json_str(r#"{"a": {"type": "int-box", "high": 1000}, "b": {"type": "int-box", "high": 1000, "shape": [2]}}"#).unwrap();
        let batched = space.with_batch_rank(true);
        let e = epsilon_exploration("e", TimeDependent::Constant(0.5), &space).unwrap();
        let mut t = ComponentTest::<B>::new(e, [("sample", batched.clone()), ("actions", batched.clone()), ("time_percentage", Space::from(FloatBox::new([])))], 7).unwrap();
        let greedy = Value::Dict([("a".to_string(), Value::Int32(Array::new([N], vec![0; N]).unwrap())), ("b".to_string(), Value::Int32(Array::new([N, 2], vec![0; 2 * N]).unwrap()))].into());
        let out = t.call("get_action", &[greedy, Value::f32(0.0)]).unwrap();
        let Value::Dict(d) = &out[0] else { panic!("{out:?}") };
        let (Some(Value::Int32(a)), Some(Value::Int32(b))) = (d.get("a"), d.get("b")) else { panic!("{d:?}") };
        assert!(a.data().iter().chain(b.data()).all(|x| (0..1000).contains(x)));
        let changed_a: Vec<bool> = a.data().iter().map(|&x| x != 0).collect();
        let changed_b: Vec<bool> = b.data().chunks(2).map(|r| r[0] != 0 || r[1] != 0).collect();
        let agree = changed_a.iter().zip(&changed_b).filter(|(x, y)| x == y).count();
        assert!(agree as f64 / N as f64 > 0.99, "decisions shared by {agree} of {N} items");
        let explored = changed_a.iter().filter(|&&x| x).count() as f64 / N as f64;
        assert!((explored - 0.5).abs() < 0.02, "explored {explored}");
        // The two elements of b are drawn apart: they are equal for about 1 in 1000 explorers.
        let same = b.data().chunks(2).filter(|r| r[0] != 0 && r[0] == r[1]).count();
        assert!(same < 30, "{same} explorers drew equal elements");
        // Actions of another structure are refused by name.
        let wrong = Space::from(IntBox::new(1000).unwrap()).with_batch_rank(true);
        let e = epsilon_exploration::<B>("e", TimeDependent::Constant(0.5), &space).unwrap();
        let err = ComponentTest::<B>::new(e, [("sample", wrong.clone()), ("actions", wrong), ("time_percentage", Space::from(FloatBox::new([])))], 7).err().unwrap().to_string();
        assert!(err.contains("'actions'") && err.contains("Dict"), "{err}");
    }

    fn gaussian_noise_has_its_moments<B>() {
        let s = Space::from(FloatBox::new([N]));
        let mut t = ComponentTest::<B>::new(gaussian_noise("noise", 0.5, 0.2), [("sample", s)], 3).unwrap();
        let (m, sd) = mean_std(&t.call("get_noise", &[floats(vec![0.0; N])]).unwrap()[0]);
        assert!((m - 0.5).abs() < 0.01 && (sd - 0.2).abs() < 0.01, "{m} {sd}");
    }

    fn ornstein_uhlenbeck_reaches_its_stationary_spread<B>() {
        // x' = (1 - theta) x + theta mu + sigma n has stationary std sigma / sqrt(1 - (1 - theta)^2).
        let (theta, mu, sigma) = (0.15, 0.5, 0.2);
        let mut t = ComponentTest::<B>::new(ornstein_uhlenbeck_noise("ou", vec![200], theta, mu, sigma), [], 4).unwrap();
        let mut samples = vec![];
        for step in 0..600 {
            let v = t.call("get_noise", &[]).unwrap().remove(0);
            if step >= 100 {
                let Value::Float32(a) = v else { panic!() };
                samples.extend(a.data().iter().copied());
            }
        }
        let (m, sd) = mean_std(&floats(samples));
        let want = sigma / (1.0f64 - (1.0 - theta) * (1.0 - theta)).sqrt();
        assert!((m - mu).abs() < 0.02, "mean {m}");
        assert!((sd - want).abs() < 0.03 * want.max(1.0), "std {sd} vs {want}");
    }
}
