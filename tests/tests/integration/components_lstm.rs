//! The LSTM layer against a hand-worked step and a brute-force f64 implementation of
//! TensorFlow's `LSTMCell` (gates i, j, f, o; forget bias 1): sequence outputs, final states,
//! sequence lengths, time-major inputs, and the stateful mode with reset, on candle and tch.

use rlgraph_components::from_spec;
use rlgraph_components::layers::{lstm, lstm_unroll, memory_space, sequence_length_space, LstmSpec};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{check_close, ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{floats, sequences};
use serde_json::json;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Brute force: `xs[b][t][f]`, kernel `[(F + U) x 4U]` row-major, bias `[4U]`; returns the
/// outputs `[b][t][u]` (zero past a sequence's length) and the final `(c, h)` per sequence.
#[allow(clippy::type_complexity)]
fn reference(
    xs: &[Vec<Vec<f64>>],
    lengths: &[usize],
    kernel: &[f64],
    bias: &[f64],
    units: usize,
) -> (Vec<Vec<Vec<f64>>>, Vec<(Vec<f64>, Vec<f64>)>) {
    let mut outs = vec![];
    let mut states = vec![];
    for (seq, &len) in xs.iter().zip(lengths) {
        let (mut c, mut h) = (vec![0.0; units], vec![0.0; units]);
        let mut out = vec![];
        for (t, x) in seq.iter().enumerate() {
            if t >= len {
                out.push(vec![0.0; units]);
                continue;
            }
            cell(x, &mut c, &mut h, kernel, bias, units);
            out.push(h.clone());
        }
        outs.push(out);
        states.push((c, h));
    }
    (outs, states)
}

/// One step of TensorFlow's `LSTMCell` (forget bias 1) on `x`, updating `c` and `h`.
fn cell(x: &[f64], c: &mut [f64], h: &mut [f64], kernel: &[f64], bias: &[f64], units: usize) {
    let input: Vec<f64> = x.iter().chain(h.iter()).copied().collect();
    let z: Vec<f64> = (0..4 * units)
        .map(|g| {
            bias[g]
                + input
                    .iter()
                    .enumerate()
                    .map(|(k, v)| v * kernel[k * 4 * units + g])
                    .sum::<f64>()
        })
        .collect();
    for u in 0..units {
        let (i, j, f, o) = (z[u], z[units + u], z[2 * units + u], z[3 * units + u]);
        c[u] = sigmoid(f + 1.0) * c[u] + sigmoid(i) * j.tanh();
        h[u] = sigmoid(o) * c[u].tanh();
    }
}

fn tol() -> Tolerance {
    Tolerance::new(1e-5, 1e-5)
}

both_backends! {
    fn one_step_by_hand<B>() {
        // units 1, x = 1, all weights 0.5, bias 0: every gate is 0.5.
        // c = sigmoid(1.5) * 0 + sigmoid(0.5) tanh(0.5) = 0.287649, h = sigmoid(0.5) tanh(c) = 0.174270.
        let mut t = ComponentTest::<B>::new(lstm::<B>("lstm", LstmSpec::new(1)), [("inputs", sequences(1, false))], 0).unwrap();
        t.set_variable("kernel", &floats(&[2, 4], [0.5; 8])).unwrap();
        let out = t.call("call", &[floats(&[1, 1, 1], [1.0])]).unwrap();
        check_close(&out[0], &floats(&[1, 1, 1], [0.174270]), tol()).unwrap();
        check_close(&out[1], &Value::Tuple(vec![floats(&[1, 1], [0.287649]), floats(&[1, 1], [0.174270])]), tol()).unwrap();
    }

    fn sequences_and_lengths_against_brute_force<B>() {
        let (units, features) = (2, 3);
        let kernel: Vec<f64> = (0..(features + units) * 4 * units).map(|k| ((k * 7 % 11) as f64 - 5.0) / 10.0).collect();
        let bias: Vec<f64> = (0..4 * units).map(|g| (g as f64 - 3.0) / 10.0).collect();
        let xs: Vec<Vec<Vec<f64>>> = (0..2).map(|b| (0..3).map(|t| (0..features).map(|f| ((b * 9 + t * 3 + f) as f64).sin()).collect()).collect()).collect();
        let flat: Vec<f64> = xs.iter().flatten().flatten().copied().collect();
        let spaces = [("inputs", sequences(features, false)), ("sequence_length", sequence_length_space())];
        let mut t = ComponentTest::<B>::new(lstm::<B>("lstm", LstmSpec::new(units)), spaces, 0).unwrap();
        t.set_variable("kernel", &floats(&[features + units, 4 * units], &kernel)).unwrap();
        t.set_variable("bias", &floats(&[4 * units], &bias)).unwrap();
        // Full lengths, then the second sequence cut after two steps.
        for lengths in [[3usize, 3], [3, 2]] {
            let (want, states) = reference(&xs, &lengths, &kernel, &bias, units);
            let lens = Value::Int32(Array::new([2], lengths.iter().map(|&l| l as i32).collect()).unwrap());
            let out = t.call("call", &[floats(&[2, 3, features], &flat), lens]).unwrap();
            let want_flat: Vec<f64> = want.iter().flatten().flatten().copied().collect();
            check_close(&out[0], &floats(&[2, 3, units], &want_flat), tol()).unwrap();
            let c: Vec<f64> = states.iter().flat_map(|s| s.0.clone()).collect();
            let h: Vec<f64> = states.iter().flat_map(|s| s.1.clone()).collect();
            check_close(&out[1], &Value::Tuple(vec![floats(&[2, units], &c), floats(&[2, units], &h)]), tol()).unwrap();
        }
    }

    fn time_major_inputs_give_time_major_outputs<B>() {
        let spec = json!({"type": "lstm", "units": 2, "time_major": true, "scope": "lstm"});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "l").unwrap(), [("inputs", sequences(1, true))], 3).unwrap();
        // [T = 2, B = 2, 1]: the batch-major run of the same data, transposed.
        let tm = floats(&[2, 2, 1], [0.1, 0.2, 0.3, 0.4]);
        let out_tm = t.call("call", &[tm]).unwrap();
        let Value::Float32(a) = &out_tm[0] else { panic!() };
        let kernel = t.get_variable("kernel").unwrap();
        let spec_bm = json!({"type": "lstm", "units": 2, "scope": "lstm"});
        let mut u = ComponentTest::<B>::new(from_spec(&spec_bm, "l").unwrap(), [("inputs", sequences(1, false))], 3).unwrap();
        u.set_variable("kernel", &kernel).unwrap();
        let out_bm = u.call("call", &[floats(&[2, 2, 1], [0.1, 0.3, 0.2, 0.4])]).unwrap();
        let Value::Float32(b) = &out_bm[0] else { panic!() };
        // a[t][b] == b[b][t]
        for t_ in 0..2 {
            for b_ in 0..2 {
                for k in 0..2 {
                    assert!((a.data()[(t_ * 2 + b_) * 2 + k] - b.data()[(b_ * 2 + t_) * 2 + k]).abs() < 1e-6);
                }
            }
        }
        // The declared layout must match the space.
        let err = ComponentTest::<B>::new(from_spec(&spec, "l").unwrap(), [("inputs", sequences(1, false))], 0).err().unwrap().to_string();
        assert!(err.contains("lstm") && err.contains("inputs") && err.contains("time-major"), "{err}");
    }

    fn the_stateful_mode_carries_state_until_reset<B>() {
        let spec = LstmSpec { stateful_batch: Some(1), ..LstmSpec::new(2) };
        let mut t = ComponentTest::<B>::new(lstm::<B>("lstm", spec.clone()), [("inputs", sequences(1, false))], 5).unwrap();
        let whole = t.call("call", &[floats(&[1, 2, 1], [0.5, -1.0])]).unwrap();
        t.call("reset", &[]).unwrap();
        // Two one-step calls continue where the last stopped: the same final state.
        t.call("call", &[floats(&[1, 1, 1], [0.5])]).unwrap();
        let second = t.call("call", &[floats(&[1, 1, 1], [-1.0])]).unwrap();
        check_close(&second[1], &whole[1], tol()).unwrap();
        // After a reset the first step repeats.
        let first = t.call("reset", &[]).and_then(|_| t.call("call", &[floats(&[1, 1, 1], [0.5])])).unwrap();
        let again = {
            t.call("reset", &[]).unwrap();
            t.call("call", &[floats(&[1, 1, 1], [0.5])]).unwrap()
        };
        assert_eq!(first, again);
        // A batch other than the one kept is refused, naming the layer.
        let err = t.call("call", &[floats(&[2, 1, 1], [0.0, 0.0])]).unwrap_err().to_string();
        assert!(err.contains("lstm") && err.contains("keeps 1"), "{err}");
        // A batch-only input is refused at build.
        let flat = Space::from_json_str(r#"{"type": "float-box", "shape": [1], "add_batch_rank": true}"#).unwrap();
        let err = ComponentTest::<B>::new(lstm::<B>("lstm", spec), [("inputs", flat)], 0).err().unwrap().to_string();
        assert!(err.contains("lstm") && err.contains("inputs"), "{err}");
    }

    fn the_unrolled_lstm_carries_memory_and_restarts_at_episode_starts<B>() {
        // Two sequences of three steps, flat [6, 2]; the second restarts its memory at step 2.
        let (units, features, n, len) = (2, 2, 2, 3);
        let kernel: Vec<f64> = (0..(features + units) * 4 * units).map(|k| ((k * 5 % 13) as f64 - 6.0) / 10.0).collect();
        let bias: Vec<f64> = (0..4 * units).map(|g| (g as f64 - 4.0) / 10.0).collect();
        let xs: Vec<Vec<f64>> = (0..n * len).map(|r| (0..features).map(|f| ((r * 3 + f) as f64).cos()).collect()).collect();
        let memory0 = [vec![0.3, -0.2, 0.1, 0.4], vec![-0.5, 0.25, 0.2, -0.1]];
        let starts = [false, false, false, false, false, true];
        let (mut want, mut last) = (vec![], vec![]);
        for (s, m0) in memory0.iter().enumerate() {
            let (mut c, mut h) = (m0[..units].to_vec(), m0[units..].to_vec());
            for t in 0..len {
                let r = s * len + t;
                if starts[r] {
                    c.fill(0.0);
                    h.fill(0.0);
                }
                cell(&xs[r], &mut c, &mut h, &kernel, &bias, units);
                want.extend(h.clone());
            }
            last.push((c, h));
        }
        let flat_space = Space::from_json_str(r#"{"type": "float-box", "shape": [2], "add_batch_rank": true}"#).unwrap();
        let flag_space = Space::from_json_str(r#"{"type": "bool-box", "add_batch_rank": true}"#).unwrap();
        let spaces = [("inputs", flat_space), ("memory", memory_space(units)), ("starts", flag_space)];
        let mut t = ComponentTest::<B>::new(lstm_unroll::<B>("lstm", units, 1.0), spaces, 0).unwrap();
        t.set_variable("kernel", &floats(&[features + units, 4 * units], &kernel)).unwrap();
        t.set_variable("bias", &floats(&[4 * units], &bias)).unwrap();
        let x = floats(&[n * len, features], xs.concat());
        let split = |i: usize| -> Vec<f64> { memory0.iter().flat_map(|m| m[i * units..(i + 1) * units].to_vec()).collect() };
        let memory = Value::Tuple(vec![floats(&[n, units], split(0)), floats(&[n, units], split(1))]);
        let flags = Value::Bool(Array::new([n * len], starts.to_vec()).unwrap());
        let out = t.call("unroll", &[x.clone(), memory.clone(), flags]).unwrap();
        check_close(&out[0], &floats(&[n * len, units], &want), tol()).unwrap();
        let c: Vec<f64> = last.iter().flat_map(|s| s.0.clone()).collect();
        let h: Vec<f64> = last.iter().flat_map(|s| s.1.clone()).collect();
        check_close(&out[1], &Value::Tuple(vec![floats(&[n, units], &c), floats(&[n, units], &h)]), tol()).unwrap();
        // Rows that do not split into the memory's sequences are refused, naming the layer.
        let five = Value::Bool(Array::new([5], vec![false; 5]).unwrap());
        let err = t.call("unroll", &[floats(&[5, features], [0.0; 10]), memory, five]).unwrap_err().to_string();
        assert!(err.contains("lstm") && err.contains("5 input rows"), "{err}");
    }
}
