//! Sequence helpers, GAE and V-trace on candle and on tch, each against a reference written
//! here from the definitions (explicit sums, not the recursions the library uses), with
//! terminals in mid-sequence.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_components::helpers::{gae, sequence_helper, sequence_lengths, v_trace};
use rlgraph_core::spaces::{Space, Value};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use serde_json::json;

fn floats() -> Space {
    Space::from_json(&json!("float")).unwrap().with_batch_rank(true)
}

fn bools() -> Space {
    Space::from_json(&json!("bool")).unwrap().with_batch_rank(true)
}

fn f(v: &[f64]) -> Value {
    floats().value_from_json(&json!(v)).unwrap()
}

fn b(v: &[bool]) -> Value {
    bools().value_from_json(&json!(v)).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    match v {
        Value::Int32(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Int64(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        other => panic!("{other:?}"),
    }
}

/// Twelve steps: episodes end (terminal) at 3 and 8, a sequence is cut without a terminal
/// at 5, and the batch ends at 11.
fn episode_marks() -> (Vec<bool>, Vec<bool>) {
    let terminals: Vec<bool> = (0..12).map(|t| t == 3 || t == 8).collect();
    let ends: Vec<bool> = (0..12).map(|t| t == 3 || t == 5 || t == 8 || t == 11).collect();
    (terminals, ends)
}

/// GAE from its definition: A_t = sum_{l=0}^{end-t} (gamma lambda)^l delta_{t+l}, summed to
/// the end of t's sequence, with delta_t = r_t + gamma V_next - V_t and V_next = 0 after a
/// terminal, V_t itself at a cut, and V_{t+1} otherwise.
fn reference_gae(v: &[f64], r: &[f64], terminals: &[bool], ends: &[bool], gamma: f64, lambda: f64) -> Vec<f64> {
    let n = v.len();
    let delta = |t: usize| {
        let next = if terminals[t] {
            0.0
        } else if ends[t] || t + 1 == n {
            v[t]
        } else {
            v[t + 1]
        };
        r[t] + gamma * next - v[t]
    };
    (0..n)
        .map(|t| {
            let mut end = t;
            while !(ends[end] || terminals[end]) && end + 1 < n {
                end += 1;
            }
            (t..=end)
                .map(|k| (gamma * lambda).powi((k - t) as i32) * delta(k))
                .sum()
        })
        .collect()
}

/// V-trace from the sum in Espeholt et al. (2018), eq. (1):
/// v_s = V(x_s) + sum_{t=s}^{T-1} (prod_{i=s}^{t-1} gamma_i c_i) delta_t.
fn reference_vtrace(
    log_rhos: &[f64],
    discounts: &[f64],
    r: &[f64],
    v: &[f64],
    bootstrap: f64,
    rho_bar: f64,
    c_bar: f64,
) -> (Vec<f64>, Vec<f64>) {
    let n = v.len();
    let value_at = |t: usize| if t < n { v[t] } else { bootstrap };
    let rho = |t: usize| log_rhos[t].exp();
    let delta = |t: usize| rho(t).min(rho_bar) * (r[t] + discounts[t] * value_at(t + 1) - v[t]);
    let vs: Vec<f64> = (0..n)
        .map(|s| {
            let mut total = v[s];
            for t in s..n {
                let trace: f64 = (s..t).map(|i| discounts[i] * rho(i).min(c_bar)).product();
                total += trace * delta(t);
            }
            total
        })
        .collect();
    let vs_at = |t: usize| if t < n { vs[t] } else { bootstrap };
    let pg = (0..n)
        .map(|s| rho(s).min(rho_bar) * (r[s] + discounts[s] * vs_at(s + 1) - v[s]))
        .collect();
    (vs, pg)
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[test]
fn sequence_lengths_of_rlgraphs_cases() {
    assert_eq!(sequence_lengths(&[false; 4]), vec![4]);
    assert_eq!(sequence_lengths(&[false, false, true, false]), vec![3, 1]);
    assert_eq!(sequence_lengths(&[true; 4]), vec![1, 1, 1, 1]);
}

both_backends! {
    fn sequence_helper_component<B>() {
        let spaces = [("sequence_indices", bools()), ("values", floats()), ("terminals", bools())];
        let mut t = ComponentTest::<B>::new(sequence_helper("sequence-helper", 0.5), spaces, 0).unwrap();
        for (marks, want) in [
            (vec![false; 4], vec![4.0]),
            (vec![false, false, true, false], vec![3.0, 1.0]),
            (vec![true; 4], vec![1.0; 4]),
        ] {
            let out = t.call("calc_sequence_lengths", &[b(&marks)]).unwrap();
            assert_eq!(numbers(&out[0]), want);
        }
        let marks = [false, false, true, false];
        // Decays 0.5^k with k the place in the sequence: [1, 0.5, 0.25, 1].
        t.assert_call("calc_sequence_decays", &[b(&marks)], &[f(&[1.0, 0.5, 0.25, 1.0])], Tolerance::decimals(6));
        // Reverse discounting restarts after the end at 2: [1 + 0.5*(2 + 0.5*3), 2 + 0.5*3, 3, 4].
        t.assert_call("reverse_apply_decays_to_sequence", &[f(&[1.0, 2.0, 3.0, 4.0]), b(&marks)], &[f(&[2.75, 3.5, 3.0, 4.0])], Tolerance::decimals(6));
        // Next values: V1, V2, 0 (terminal at 2), and V3 itself at the final cut.
        let terminals = [false, false, true, false];
        t.assert_call("bootstrap_values", &[f(&[1.0, 2.0, 3.0, 4.0]), b(&terminals), b(&marks)], &[f(&[2.0, 3.0, 0.0, 4.0])], Tolerance::decimals(6));
    }

    fn gae_against_its_definition<B>() {
        let (terminals, ends) = episode_marks();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let v: Vec<f64> = (0..12).map(|_| rng.random_range(-1.0..1.0)).collect();
        let r: Vec<f64> = (0..12).map(|_| rng.random_range(-1.0..1.0)).collect();
        let (gamma, lambda) = (0.9, 0.8);
        let spaces = [("baseline_values", floats()), ("rewards", floats()), ("terminals", bools()), ("sequence_indices", bools())];
        let mut t = ComponentTest::<B>::new(gae("gae", gamma, lambda), spaces, 0).unwrap();
        let inputs = [f(&v), f(&r), b(&terminals), b(&ends)];
        let got = numbers(&t.call("calc_gae_values", &inputs).unwrap()[0]);
        close(&got, &reference_gae(&v, &r, &terminals, &ends, gamma, lambda), 1e-5);
        // With lambda 0 the advantages are the TD errors.
        let td = numbers(&t.call("calc_td_errors", &inputs).unwrap()[0]);
        close(&td, &reference_gae(&v, &r, &terminals, &ends, gamma, 0.0), 1e-5);
    }

    fn v_trace_against_the_papers_sum<B>() {
        let (t_len, batch) = (7, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut draw = |lo: f64, hi: f64| -> Vec<f64> { (0..t_len * batch).map(|_| rng.random_range(lo..hi)).collect() };
        let log_rhos = draw(-1.0, 1.0);
        let rewards = draw(-1.0, 1.0);
        let values = draw(-1.0, 1.0);
        // gamma 0.95 with terminals mid-rollout (discount 0) at a few steps.
        let discounts: Vec<f64> = (0..t_len * batch).map(|i| if i % 5 == 3 { 0.0 } else { 0.95 }).collect();
        let bootstrap = [0.3, -0.2, 0.7];
        let (rho_bar, c_bar) = (1.0, 0.9);
        let tb = Space::from_json(&json!("float")).unwrap().with_time_rank(true, true).with_batch_rank(true);
        let spaces = [("log_rhos", tb.clone()), ("discounts", tb.clone()), ("rewards", tb.clone()), ("values", tb.clone()), ("bootstrap_value", floats())];
        let mut t = ComponentTest::<B>::new(v_trace("v-trace", rho_bar, c_bar, rho_bar), spaces, 0).unwrap();
        let grid = |x: &[f64]| tb.value_from_json(&json!(x.chunks(batch).collect::<Vec<_>>())).unwrap();
        let out = t.call("get_v_trace_values", &[grid(&log_rhos), grid(&discounts), grid(&rewards), grid(&values), f(&bootstrap)]).unwrap();
        let (vs, pg) = (numbers(&out[0]), numbers(&out[1]));
        for col in 0..batch {
            let column = |x: &[f64]| (0..t_len).map(|s| x[s * batch + col]).collect::<Vec<_>>();
            let (want_vs, want_pg) = reference_vtrace(&column(&log_rhos), &column(&discounts), &column(&rewards), &column(&values), bootstrap[col], rho_bar, c_bar);
            close(&column(&vs), &want_vs, 1e-5);
            close(&column(&pg), &want_pg, 1e-5);
        }
    }

    fn mismatched_lengths_are_an_error<B>() {
        let spaces = [("baseline_values", floats()), ("rewards", floats()), ("terminals", bools()), ("sequence_indices", bools())];
        let mut t = ComponentTest::<B>::new(gae("gae", 0.9, 0.9), spaces, 0).unwrap();
        let err = t.call("calc_gae_values", &[f(&[1.0, 2.0]), f(&[1.0]), b(&[false, false]), b(&[false, true])]).unwrap_err().to_string();
        assert!(err.contains("gae") && err.contains("rewards"), "{err}");
    }
}
