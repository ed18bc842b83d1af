//! Convolution, max pooling and reshape on NHWC images, against a brute-force loop
//! implementation of TensorFlow's `same`/`valid` rules written here, on candle and on tch.

use rand::{Rng, SeedableRng};
use rlgraph_components::from_spec;
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use serde_json::json;

fn images(h: usize, w: usize, c: usize) -> Space {
    Space::from_json_str(&format!(
        r#"{{"type": "float-box", "shape": [{h}, {w}, {c}], "add_batch_rank": true}}"#
    ))
    .unwrap()
}

fn value(shape: &[usize], data: &[f64]) -> Value {
    Value::Float32(Array::new(shape.to_vec(), data.iter().map(|&x| x as f32).collect()).unwrap())
}

/// TensorFlow's output size and leading pad.
fn plan(n: usize, k: usize, s: usize, same: bool) -> (usize, usize) {
    if same {
        let out = n.div_ceil(s);
        (out, ((out - 1) * s + k).saturating_sub(n) / 2)
    } else {
        ((n - k) / s + 1, 0)
    }
}

/// Brute-force NHWC convolution with an OIHW kernel.
#[allow(clippy::too_many_arguments)]
fn conv_ref(
    x: &[f64],
    b: usize,
    h: usize,
    w: usize,
    c: usize,
    kernel: &[f64],
    f: usize,
    k: usize,
    s: usize,
    same: bool,
) -> (Vec<usize>, Vec<f64>) {
    let (oh, ph) = plan(h, k, s, same);
    let (ow, pw) = plan(w, k, s, same);
    let mut out = vec![0.0; b * oh * ow * f];
    for n in 0..b {
        for i in 0..oh {
            for j in 0..ow {
                for o in 0..f {
                    let mut acc = 0.0;
                    for di in 0..k {
                        for dj in 0..k {
                            let (y, xx) = ((i * s + di) as isize - ph as isize, (j * s + dj) as isize - pw as isize);
                            if y < 0 || xx < 0 || y >= h as isize || xx >= w as isize {
                                continue;
                            }
                            for ch in 0..c {
                                acc += x[((n * h + y as usize) * w + xx as usize) * c + ch]
                                    * kernel[((o * c + ch) * k + di) * k + dj];
                            }
                        }
                    }
                    out[((n * oh + i) * ow + j) * f + o] = acc;
                }
            }
        }
    }
    (vec![b, oh, ow, f], out)
}

both_backends! {
    fn conv2d_with_rlgraphs_kernel_spec_and_no_biases<B>() {
        // RLgraph test_conv2d_layer: Conv2DLayer(filters=4, kernel_size=2, strides=1,
        // padding="valid", kernel_spec=0.5, biases_spec=False) on two 2x2x3 images:
        // 0.5 * (1 + ... + 12) = 39 and 0.5 * (0.1 + ... + 1.2) = 3.9 in each of the 4 filters.
        let spec = json!({"type": "conv2d", "filters": 4, "kernel_size": 2, "strides": 1, "padding": "valid", "kernel_spec": 0.5, "biases_spec": false});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images(2, 2, 3))], 0).unwrap();
        let mut data: Vec<f64> = (1..=12).map(f64::from).collect();
        data.extend((1..=12).map(|i| f64::from(i) / 10.0));
        let want = value(&[2, 1, 1, 4], &[39.0, 39.0, 39.0, 39.0, 3.9, 3.9, 3.9, 3.9]);
        t.assert_call("call", &[value(&[2, 2, 2, 3], &data)], &[want], Tolerance::new(1e-4, 1e-5));
        let vars: Vec<String> = t.executor().variable_infos().iter().map(|i| i.path.clone()).collect();
        assert_eq!(vars, ["conv2d/kernel"]);
        let both = json!({"type": "conv2d", "filters": 1, "kernel_size": 2, "kernel_spec": 0.5, "weights_spec": 1.0});
        let err = from_spec::<B>(&both, "spec").err().unwrap().to_string();
        assert!(err.contains("spec.kernel_spec") && err.contains("not both"), "{err}");
    }

    fn conv2d_same_by_hand<B>() {
        // 3x3 image 1..9, 3x3 kernel of ones, same padding: each output is a neighbourhood sum.
        let spec = json!({"type": "conv2d", "filters": 1, "kernel_size": 3, "strides": 1, "padding": "same", "weights_spec": 1.0, "use_bias": false});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images(3, 3, 1))], 0).unwrap();
        let x = value(&[1, 3, 3, 1], &(1..=9).map(f64::from).collect::<Vec<_>>());
        let want = value(&[1, 3, 3, 1], &[12.0, 21.0, 16.0, 27.0, 45.0, 33.0, 24.0, 39.0, 28.0]);
        t.assert_call("call", &[x], &[want], Tolerance::decimals(4));
    }

    fn conv2d_matches_the_brute_force_reference<B>() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for (h, w, c, f, k, s, same) in [(5, 6, 2, 3, 3, 2, true), (7, 7, 3, 2, 4, 2, true), (6, 5, 2, 2, 3, 1, false), (8, 8, 1, 2, 2, 3, false)] {
            let kernel: Vec<f64> = (0..f * c * k * k).map(|_| rng.random_range(-1.0..1.0)).collect();
            let bias: Vec<f64> = (0..f).map(|_| rng.random_range(-1.0..1.0)).collect();
            let x: Vec<f64> = (0..2 * h * w * c).map(|_| rng.random_range(-1.0..1.0)).collect();
            let spec = json!({"type": "conv2d", "filters": f, "kernel_size": k, "strides": s, "padding": if same { "same" } else { "valid" },
                              "weights_spec": kernel, "biases_spec": bias, "activation": "relu"});
            let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images(h, w, c))], 0).unwrap();
            let (shape, mut want) = conv_ref(&x, 2, h, w, c, &kernel, f, k, s, same);
            for (i, v) in want.iter_mut().enumerate() {
                *v = (*v + bias[i % f]).max(0.0);
            }
            t.assert_call("call", &[value(&[2, h, w, c], &x)], &[value(&shape, &want)], Tolerance::new(1e-5, 1e-4));
        }
    }

    fn a_softmax_activation_runs_over_each_pixels_filters<B>() {
        // A 1x1 kernel [[1, 0], [0, 2]] (filter o reads channel o, the second doubled), no
        // bias: pixel (a, b) becomes softmax([a, 2b]) over the two filters, as RLgraph's
        // softmax over the last axis of NHWC maps.
        let spec = json!({"type": "conv2d", "filters": 2, "kernel_size": 1, "strides": 1, "use_bias": false,
                          "weights_spec": [1.0, 0.0, 0.0, 2.0], "activation": "softmax"});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images(1, 3, 2))], 0).unwrap();
        let x = [0.0f64, 0.0, 1.0, 0.5, -1.0, 1.0];
        let mut want = vec![];
        for pixel in x.chunks(2) {
            let (a, b) = (pixel[0], 2.0 * pixel[1]);
            let z = a.exp() + b.exp();
            want.extend([a.exp() / z, b.exp() / z]);
        }
        t.assert_call("call", &[value(&[1, 1, 3, 2], &x)], &[value(&[1, 1, 3, 2], &want)], Tolerance::decimals(5));
    }

    fn stacked_conv_layers_and_crelu_match_the_brute_force_reference<B>() {
        // Two conv layers in a row (the second takes the first's output in the layout the
        // first leaves it), then the same with CReLU, which doubles the channels in NHWC
        // order: [relu(y), relu(-y)] along the last axis.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let (h, w, c, f1, f2) = (6, 5, 2, 3, 2);
        let mut draw = |n: usize| -> Vec<f64> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (k1, b1, k2, b2, x) = (draw(f1 * c * 9), draw(f1), draw(f2 * f1 * 4), draw(f2), draw(2 * h * w * c));
        for activation in ["tanh", "crelu"] {
            let spec = json!([
                {"type": "conv2d", "filters": f1, "kernel_size": 3, "strides": 1, "padding": "same",
                 "weights_spec": k1, "biases_spec": b1, "activation": "relu", "scope": "one"},
                {"type": "conv2d", "filters": f2, "kernel_size": 2, "strides": 2, "padding": "valid",
                 "weights_spec": k2, "biases_spec": b2, "activation": activation, "scope": "two"}
            ]);
            let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images(h, w, c))], 0).unwrap();
            let (s1, mut y1) = conv_ref(&x, 2, h, w, c, &k1, f1, 3, 1, true);
            for (i, v) in y1.iter_mut().enumerate() {
                *v = (*v + b1[i % f1]).max(0.0);
            }
            let (s2, mut y2) = conv_ref(&y1, 2, s1[1], s1[2], f1, &k2, f2, 2, 2, false);
            for (i, v) in y2.iter_mut().enumerate() {
                *v += b2[i % f2];
            }
            let (shape, want) = if activation == "tanh" {
                (s2, y2.iter().map(|v| v.tanh()).collect::<Vec<_>>())
            } else {
                let mut doubled = Vec::with_capacity(2 * y2.len());
                for pixel in y2.chunks(f2) {
                    doubled.extend(pixel.iter().map(|v| v.max(0.0)));
                    doubled.extend(pixel.iter().map(|v| (-v).max(0.0)));
                }
                (vec![s2[0], s2[1], s2[2], 2 * f2], doubled)
            };
            t.assert_call("call", &[value(&[2, h, w, c], &x)], &[value(&shape, &want)], Tolerance::new(1e-5, 1e-4));
        }
    }

    fn max_pool_valid_and_same<B>() {
        let x = value(&[1, 3, 3, 1], &[1.0, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0, -8.0, -9.0]);
        let valid = json!({"type": "max-pool2d", "pool_size": 2, "strides": 1});
        let mut t = ComponentTest::<B>::new(from_spec(&valid, "spec").unwrap(), [("inputs", images(3, 3, 1))], 0).unwrap();
        t.assert_call("call", std::slice::from_ref(&x), &[value(&[1, 2, 2, 1], &[5.0, 5.0, 7.0, 5.0])], Tolerance::decimals(5));
        // Same, stride 2: windows rows/cols {0,1} and {2}; the -inf padding never wins, so the
        // lone corner -9 stays -9.
        let same = json!({"type": "maxpool2d", "pool_size": 2, "strides": 2, "padding": "same"});
        let mut t = ComponentTest::<B>::new(from_spec(&same, "spec").unwrap(), [("inputs", images(3, 3, 1))], 0).unwrap();
        t.assert_call("call", &[x], &[value(&[1, 2, 2, 1], &[5.0, 3.0, 7.0, -9.0])], Tolerance::decimals(5));
    }

    fn windows_that_cannot_slide_are_refused_by_name<B>() {
        // Strides or windows of 0 are refused where the spec says them.
        for (spec, key) in [
            (json!({"type": "conv2d", "filters": 2, "kernel_size": 3, "strides": 0}), "spec.strides"),
            (json!({"type": "conv2d", "filters": 2, "kernel_size": 0}), "spec.kernel_size"),
            (json!({"type": "conv2d", "filters": 0, "kernel_size": 2}), "spec.filters"),
            (json!({"type": "max-pool2d", "pool_size": 0}), "spec.pool_size"),
            (json!({"type": "max-pool2d", "pool_size": 2, "strides": 0}), "spec.strides"),
        ] {
            let err = from_spec::<B>(&spec, "spec").err().unwrap_or_else(|| panic!("accepts {spec}")).to_string();
            assert!(err.contains(key) && err.contains("at least 1"), "{spec}: {err}");
        }
        // A valid-padding window larger than the image leaves nothing to compute.
        for spec in [
            json!({"type": "conv2d", "filters": 2, "kernel_size": 5, "padding": "valid", "scope": "big"}),
            json!({"type": "max-pool2d", "pool_size": 5, "padding": "valid", "scope": "big"}),
        ] {
            let err = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images(4, 6, 1))], 0)
                .err()
                .unwrap_or_else(|| panic!("{spec} builds on 4x6 images"))
                .to_string();
            assert!(err.contains("big") && err.contains("inputs") && err.contains("at least 5x5"), "{err}");
        }
        // With same padding the same window is fine: ceil(4 / 1) x ceil(6 / 1) outputs.
        let same = json!({"type": "max-pool2d", "pool_size": 5, "strides": 1, "padding": "same"});
        let mut t = ComponentTest::<B>::new(from_spec(&same, "spec").unwrap(), [("inputs", images(4, 6, 1))], 0).unwrap();
        let out = t.call("call", &[value(&[1, 4, 6, 1], &[0.0; 24])]).unwrap();
        assert_eq!(out[0].shape(), Some(&[1, 4, 6, 1][..]));
    }

    fn a_variable_too_large_for_any_machine_is_refused_before_allocating<B>() {
        // 4 inputs x 1e9 units is 4e9 weights, beyond the 2^30 a variable may hold.
        let spec = json!({"type": "dense", "units": 1_000_000_000u64, "scope": "huge"});
        let states = Space::from_json_str(r#"{"type": "float-box", "shape": [4], "add_batch_rank": true}"#).unwrap();
        let err = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", states)], 0)
            .err()
            .expect("a 16 GB weight matrix is refused")
            .to_string();
        assert!(err.contains("huge/weights") || err.contains("huge/kernel"), "{err}");
        assert!(err.contains("4000000000 elements") && err.contains("1073741824"), "{err}");
    }

    fn nature_dqn_network_infers_its_shapes<B>() {
        let spec = rlgraph_tests::dummies::nature_dqn_spec();
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "network_spec").unwrap(), [("inputs", images(84, 84, 4))], 0).unwrap();
        let (_, out) = t.call_sampled("call", Some(2)).unwrap();
        assert_eq!(out[0].shape().unwrap(), &[2, 6]);
        let fc = t.get_variable("fc/kernel").unwrap();
        // 84 -> 20 -> 9 -> 7: 7 * 7 * 64 = 3136 inputs to the first dense layer.
        assert_eq!(fc.shape().unwrap(), &[3136, 512]);
    }

    fn reshape_keeps_the_batch_and_checks_the_count<B>() {
        let spec = json!({"type": "reshape", "new_shape": [3, 2]});
        let s = Space::from_json_str(r#"{"type": "float-box", "shape": [6], "add_batch_rank": true}"#).unwrap();
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", s)], 0).unwrap();
        let x = value(&[1, 6], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        t.assert_call("call", &[x], &[value(&[1, 3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])], Tolerance::decimals(6));
        let bad = Space::from_json_str(r#"{"type": "float-box", "shape": [5], "add_batch_rank": true}"#).unwrap();
        let err = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", bad)], 0).err().unwrap().to_string();
        assert!(err.contains("'reshape'") && err.contains("'inputs'") && err.contains("new shape [3, 2]"), "{err}");
    }
}
