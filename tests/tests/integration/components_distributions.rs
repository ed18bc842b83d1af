//! Categorical, Bernoulli, Normal and squashed Normal: log-probabilities, entropies and KL divergences against
//! their textbook formulas, and seeded sampling frequencies against the probabilities
//! (chi-square at significance 0.001), on candle and on tch.

use rlgraph_components::{distribution, DistributionKind};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{batch, floats};

fn tol() -> Tolerance {
    Tolerance::new(1e-5, 1e-5)
}

both_backends! {
    fn categorical<B>() {
        let p: [f64; 3] = [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0];
        let logits: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|x| x.ln()).collect();
        let params = batch(r#"{"type": "float-box", "shape": [3]}"#);
        let values = batch(r#"{"type": "int-box", "high": 3}"#);
        let mut t = ComponentTest::<B>::new(distribution("categorical", DistributionKind::Categorical), [("parameters", params.clone()), ("values", values), ("other_parameters", params)], 7).unwrap();
        let rows = |n: usize| floats(&[n, 3], logits.iter().copied().cycle().take(3 * n).collect::<Vec<_>>());
        t.assert_call("sample_deterministic", &[rows(2)], &[Value::Int32(Array::new([2], vec![2, 2]).unwrap())], tol());
        let v = Value::Int32(Array::new([3], vec![0, 1, 2]).unwrap());
        t.assert_call("log_prob", &[rows(3), v], &[floats(&[3], p.iter().map(|x| x.ln()).collect::<Vec<_>>())], tol());
        let h: f64 = -p.iter().map(|x| x * x.ln()).sum::<f64>();
        t.assert_call("entropy", &[rows(1)], &[floats(&[1], vec![h])], tol());
        let kl: f64 = p.iter().map(|x| x * (x / (1.0 / 3.0)).ln()).sum();
        t.assert_call("kl_divergence", &[rows(1), floats(&[1, 3], vec![0.0; 3])], &[floats(&[1], vec![kl])], tol());
        // 30,000 seeded draws; chi-square with 2 degrees of freedom, critical value 13.82 at 0.001.
        let n = 30_000;
        let out = t.call("sample_stochastic", &[rows(n)]).unwrap();
        let Value::Int32(a) = &out[0] else { panic!("{out:?}") };
        let chi2: f64 = (0..3).map(|k| {
            let observed = a.data().iter().filter(|&&x| x == k).count() as f64;
            let expected = n as f64 * p[k as usize];
            (observed - expected).powi(2) / expected
        }).sum();
        assert!(chi2 < 13.82, "chi-square {chi2}");
    }

    fn bernoulli<B>() {
        let params = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let values = batch(r#"{"type": "bool-box", "shape": [2]}"#);
        let mut t = ComponentTest::<B>::new(distribution("bernoulli", DistributionKind::Bernoulli), [("parameters", params.clone()), ("values", values), ("other_parameters", params)], 3).unwrap();
        let p = || floats(&[1, 2], vec![0.2, 0.7]);
        let bools = |v: Vec<bool>| Value::Bool(Array::new([1, v.len()], v).unwrap());
        t.assert_call("sample_deterministic", &[p()], &[bools(vec![false, true])], tol());
        t.assert_call("log_prob", &[p(), bools(vec![true, false])], &[floats(&[1, 2], vec![0.2f64.ln(), 0.3f64.ln()])], tol());
        let h = |x: f64| -(x * x.ln() + (1.0 - x) * (1.0 - x).ln());
        t.assert_call("entropy", &[p()], &[floats(&[1, 2], vec![h(0.2), h(0.7)])], tol());
        let kl = |a: f64, b: f64| a * (a / b).ln() + (1.0 - a) * ((1.0 - a) / (1.0 - b)).ln();
        t.assert_call("kl_divergence", &[p(), floats(&[1, 2], vec![0.5, 0.5])], &[floats(&[1, 2], vec![kl(0.2, 0.5), kl(0.7, 0.5)])], tol());
        let n = 20_000;
        let out = t.call("sample_stochastic", &[floats(&[n, 2], [0.2, 0.7].iter().copied().cycle().take(2 * n).collect::<Vec<_>>())]).unwrap();
        let Value::Bool(a) = &out[0] else { panic!() };
        for (col, p) in [(0, 0.2), (1, 0.7)] {
            let freq = a.data().iter().skip(col).step_by(2).filter(|b| **b).count() as f64 / n as f64;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!((freq - p).abs() < 4.0 * se, "column {col}: {freq} vs {p}");
        }
    }

    fn normal<B>() {
        let one = r#"{"type": "float-box", "shape": [2]}"#;
        let params = Space::tuple(vec![batch(one), batch(one)]);
        let mut t = ComponentTest::<B>::new(distribution("normal", DistributionKind::Normal), [("parameters", params.clone()), ("values", batch(one)), ("other_parameters", params)], 9).unwrap();
        let (m, s) = ([0.0, 1.0], [1.0, 2.0]);
        let p = || Value::Tuple(vec![floats(&[1, 2], m), floats(&[1, 2], s)]);
        let v = [0.5, -1.0];
        let lp: Vec<f64> = (0..2).map(|i| -((v[i] - m[i]) / s[i]).powi(2) / 2.0 - s[i].ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()).collect();
        t.assert_call("log_prob", &[p(), floats(&[1, 2], v)], &[floats(&[1, 2], lp)], tol());
        let h: Vec<f64> = s.iter().map(|x| 0.5 + 0.5 * (2.0 * std::f64::consts::PI).ln() + x.ln()).collect();
        t.assert_call("entropy", &[p()], &[floats(&[1, 2], h)], tol());
        // KL(N(m, s) || N(0, 1)) = ln(1 / s) + (s^2 + m^2) / 2 - 1/2
        let kl: Vec<f64> = (0..2).map(|i| (1.0 / s[i]).ln() + (s[i] * s[i] + m[i] * m[i]) / 2.0 - 0.5).collect();
        let std_normal = Value::Tuple(vec![floats(&[1, 2], vec![0.0, 0.0]), floats(&[1, 2], vec![1.0, 1.0])]);
        t.assert_call("kl_divergence", &[p(), std_normal], &[floats(&[1, 2], kl)], tol());
        t.assert_call("sample_deterministic", &[p()], &[floats(&[1, 2], m)], tol());
        let n = 20_000;
        let many = Value::Tuple(vec![floats(&[n, 2], m.iter().copied().cycle().take(2 * n).collect::<Vec<_>>()), floats(&[n, 2], s.iter().copied().cycle().take(2 * n).collect::<Vec<_>>())]);
        let out = t.call("sample_stochastic", &[many]).unwrap();
        let Value::Float32(a) = &out[0] else { panic!() };
        for col in 0..2 {
            let xs: Vec<f64> = a.data().iter().skip(col).step_by(2).map(|&x| x as f64).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
            assert!((mean - m[col]).abs() < 4.0 * s[col] / (n as f64).sqrt() && (sd - s[col]).abs() < 0.03 * s[col], "{col}: {mean} {sd}");
        }
    }

    fn squashed_normal<B>() {
        // tanh-squashed Normal in [-2, 2]; element 0: N(0, 1), element 1: N(1, 0.5).
        let one = r#"{"type": "float-box", "shape": [2]}"#;
        let params = Space::tuple(vec![batch(one), batch(one)]);
        let kind = DistributionKind::SquashedNormal { low: -2.0, high: 2.0 };
        let mut t = ComponentTest::<B>::new(distribution("squashed", kind), [("parameters", params.clone()), ("values", batch(one)), ("other_parameters", params)], 4).unwrap();
        let (m, s): ([f64; 2], [f64; 2]) = ([0.0, 1.0], [1.0, 0.5]);
        let p = |n: usize| Value::Tuple(vec![floats(&[n, 2], m.iter().copied().cycle().take(2 * n).collect::<Vec<_>>()), floats(&[n, 2], s.iter().copied().cycle().take(2 * n).collect::<Vec<_>>())]);
        // By hand for a = 1 under N(0, 1): y = 0.5, u = atanh(0.5) = 0.549306,
        // log N(u) = -u^2/2 - ln(2 pi)/2 = -1.069807, minus ln(1 - y^2) = ln 0.75 = -0.287682,
        // minus ln((2 - -2) / 2) = ln 2: -1.069807 + 0.287682 - 0.693147 = -1.475272.
        // For a = -1.5 under N(1, 0.5): y = -0.75, u = atanh(-0.75) = -0.972955,
        // z = (u - 1) / 0.5 = -3.945910, log N = -z^2/2 - ln 0.5 - ln(2 pi)/2
        // = -7.785103 + 0.693147 - 0.918939 = -8.010895, minus ln(1 - 0.5625) = -0.826679, minus
        // ln 2: -8.010895 + 0.826679 - 0.693147 = -7.877363.
        t.assert_call("log_prob", &[p(1), floats(&[1, 2], vec![1.0, -1.5])], &[floats(&[1, 2], vec![-1.475272, -7.877363])], Tolerance::new(1e-4, 1e-4));
        // Deterministic: the squashed mean, 2 tanh(m).
        t.assert_call("sample_deterministic", &[p(1)], &[floats(&[1, 2], vec![0.0, 2.0 * 1f64.tanh()])], tol());
        // Samples lie in the bounds, their log-probabilities agree with log_prob of the same
        // samples, and the median of element 1 is the squashed median 2 tanh(1).
        let n = 4000;
        let out = t.call("sample_and_log_prob", &[p(n)]).unwrap();
        let again = t.call("log_prob", &[p(n), out[0].clone()]).unwrap();
        let (Value::Float32(a), Value::Float32(lp), Value::Float32(lp2)) = (&out[0], &out[1], &again[0]) else { panic!() };
        assert!(a.data().iter().all(|x| (-2.0..=2.0).contains(x)));
        for (x, y) in lp.data().iter().zip(lp2.data()).filter(|(x, _)| x.abs() < 8.0) {
            assert!((x - y).abs() < 1e-2, "{x} vs {y}");
        }
        let mut col: Vec<f32> = a.data().iter().skip(1).step_by(2).copied().collect();
        col.sort_by(f32::total_cmp);
        let median = col[n / 2] as f64;
        assert!((median - 2.0 * 1f64.tanh()).abs() < 0.05, "{median}");
        // The entropy and KL are the underlying Normal's.
        let h: Vec<f64> = s.iter().map(|x| 0.5 + 0.5 * (2.0 * std::f64::consts::PI).ln() + x.ln()).collect();
        t.assert_call("entropy", &[p(1)], &[floats(&[1, 2], h)], tol());
    }

    fn beta<B>() {
        // Beta(2, 3) and Beta(0.5, 0.5) on [-1, 1], one element each.
        let one = r#"{"type": "float-box", "shape": [1]}"#;
        let params = Space::tuple(vec![batch(one), batch(one)]);
        let kind = DistributionKind::Beta { low: -1.0, high: 1.0 };
        let mut t = ComponentTest::<B>::new(distribution("beta", kind), [("parameters", params.clone()), ("values", batch(one)), ("other_parameters", params)], 6).unwrap();
        let p = |a: f64, b: f64, n: usize| Value::Tuple(vec![floats(&[n, 1], vec![a; n]), floats(&[n, 1], vec![b; n])]);
        // Beta(2, 3) at y = 0.5 (value 0): density 12 * 0.5 * 0.25 = 1.5, over the width 2:
        // ln 1.5 - ln 2 = -0.287682. Beta(0.5, 0.5) at y = 0.5: B = pi, density
        // 0.5^-0.5 0.5^-0.5 / pi = 2 / pi: ln(2 / pi) - ln 2 = -1.144730.
        t.assert_call("log_prob", &[p(2.0, 3.0, 1), floats(&[1, 1], vec![0.0])], &[floats(&[1, 1], vec![-0.287682])], Tolerance::new(1e-5, 1e-5));
        t.assert_call("log_prob", &[p(0.5, 0.5, 1), floats(&[1, 1], vec![0.0])], &[floats(&[1, 1], vec![-1.144730])], Tolerance::new(1e-5, 1e-5));
        // Entropy of Beta(2, 3): ln B(2, 3) - psi(2) - 2 psi(3) + 3 psi(5) = -0.234907 with
        // psi(2) = 1 - g, psi(3) = 1.5 - g, psi(5) = 25/12 - g; plus ln 2 for the width.
        t.assert_call("entropy", &[p(2.0, 3.0, 1)], &[floats(&[1, 1], vec![-0.234907 + 2f64.ln()])], Tolerance::new(1e-5, 1e-5));
        // KL(Beta(2, 3) || Beta(1, 1)) is minus the entropy on [0, 1]: 0.234907.
        t.assert_call("kl_divergence", &[p(2.0, 3.0, 1), p(1.0, 1.0, 1)], &[floats(&[1, 1], vec![0.234907])], Tolerance::new(1e-5, 1e-5));
        // The deterministic action is the mean 2/5 on [0, 1]: -1 + 2 * 0.4 = -0.2.
        t.assert_call("sample_deterministic", &[p(2.0, 3.0, 1)], &[floats(&[1, 1], vec![-0.2])], tol());
        // Samples: mean -0.2, standard deviation 2 * 0.2 = 0.4 (variance ab / ((a+b)^2 (a+b+1))).
        let n = 20_000;
        let out = t.call("sample_stochastic", &[p(2.0, 3.0, n)]).unwrap();
        let Value::Float32(a) = &out[0] else { panic!() };
        let mean = a.data().iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        assert!((mean + 0.2).abs() < 4.0 * 0.4 / (n as f64).sqrt(), "{mean}");
        assert!(a.data().iter().all(|x| (-1.0..=1.0).contains(x)));
    }

    fn gumbel_softmax<B>() {
        let logits_space = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let kind = DistributionKind::GumbelSoftmax { temperature: 1.0 };
        let mut t = ComponentTest::<B>::new(distribution("gumbel", kind), [("parameters", logits_space.clone()), ("values", logits_space.clone()), ("other_parameters", logits_space.clone())], 8).unwrap();
        // Concrete density, n = 2, t = 1: (pi_1 pi_2 / (y_1 y_2)^2) / (pi_1 / y_1 + pi_2 / y_2)^2.
        // pi = (1/4, 3/4), y = (1/2, 1/2): (3/16 * 16) / 2^2 = 3/4.
        let logits = floats(&[1, 2], vec![0.0, 3f64.ln()]);
        t.assert_call("log_prob", &[logits.clone(), floats(&[1, 2], vec![0.5, 0.5])], &[floats(&[1], vec![0.75f64.ln()])], Tolerance::new(1e-5, 1e-5));
        // Uniform logits at t = 1: density 1 everywhere on the simplex, e.g. at (1/4, 3/4).
        t.assert_call("log_prob", &[floats(&[1, 2], vec![0.0, 0.0]), floats(&[1, 2], vec![0.25, 0.75])], &[floats(&[1], vec![0.0])], Tolerance::new(1e-5, 1e-5));
        t.assert_call("sample_deterministic", std::slice::from_ref(&logits), &[floats(&[1, 2], vec![0.0, 1.0])], tol());
        // Entropy is the Categorical's: -(1/4 ln 1/4 + 3/4 ln 3/4) = 0.562335.
        t.assert_call("entropy", &[logits], &[floats(&[1], vec![0.562335])], Tolerance::new(1e-5, 1e-5));
        // At a low temperature samples are nearly one-hot, their argmax distributed as pi.
        let cold = DistributionKind::GumbelSoftmax { temperature: 0.1 };
        let mut t = ComponentTest::<B>::new(distribution("gumbel", cold), [("parameters", logits_space.clone()), ("values", logits_space.clone()), ("other_parameters", logits_space)], 8).unwrap();
        let n = 4000;
        let many = floats(&[n, 2], [0.0, 3f64.ln()].iter().copied().cycle().take(2 * n).collect::<Vec<_>>());
        let out = t.call("sample_stochastic", &[many]).unwrap();
        let Value::Float32(a) = &out[0] else { panic!() };
        let rows: Vec<&[f32]> = a.data().chunks(2).collect();
        assert!(rows.iter().all(|r| (r[0] + r[1] - 1.0).abs() < 1e-5));
        let second = rows.iter().filter(|r| r[1] > r[0]).count() as f64 / n as f64;
        // Binomial(4000, 0.75): standard deviation 0.0068; 5 sigma.
        assert!((second - 0.75).abs() < 0.035, "{second}");
    }

    fn wrong_parameters_name_the_place<B>() {
        let flat = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let spaces = [("parameters", flat.clone()), ("values", flat.clone()), ("other_parameters", flat)];
        let err = ComponentTest::<B>::new(distribution("normal", DistributionKind::Normal), spaces.clone(), 0).err().unwrap().to_string();
        assert!(err.contains("'normal'") && err.contains("'parameters'") && err.contains("Tuple (mean, stddev)"), "{err}");
        let err = ComponentTest::<B>::new(distribution("beta", DistributionKind::Beta { low: 0.0, high: 1.0 }), spaces, 0).err().unwrap().to_string();
        assert!(err.contains("'beta'") && err.contains("'parameters'") && err.contains("(alpha, beta)"), "{err}");
        let scalar = batch(r#"{"type": "float-box", "shape": []}"#);
        let spaces = [("parameters", scalar.clone()), ("values", scalar.clone()), ("other_parameters", scalar)];
        let err = ComponentTest::<B>::new(distribution("gumbel", DistributionKind::GumbelSoftmax { temperature: 1.0 }), spaces, 0).err().unwrap().to_string();
        assert!(err.contains("'gumbel'") && err.contains("'parameters'") && err.contains("category dimension"), "{err}");
    }
}
