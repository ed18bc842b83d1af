//! Image and stateful preprocessors, built from their RLgraph specs: grayscale, crop,
//! bilinear resize (RLgraph's own test images; PyTorch's `interpolate(mode="bilinear",
//! align_corners=False)` worked by hand), transpose, moving standardization (RLgraph's formulas by hand) and frame
//! stacking with reset, on candle and on tch.

use rlgraph_components::{from_spec, preprocessor_stack};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{batch, floats};
use serde_json::json;

fn tol() -> Tolerance {
    Tolerance::new(1e-4, 1e-5)
}

/// The pixels (rows top-down, channels in file order, as `cv2.imread` gives them) and shape of
/// one of RLgraph's test bitmaps under `tests/data/rlgraph/`: 8-bit paletted or 24-bit BMP.
fn read_bmp(name: &str) -> (Vec<f64>, [usize; 3]) {
    let path = format!("{}/data/rlgraph/{name}", env!("CARGO_MANIFEST_DIR"));
    let d = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let u16_at = |i: usize| u16::from_le_bytes([d[i], d[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]]) as usize;
    let (offset, width, height, bits) = (u32_at(10), u32_at(18), u32_at(22) as i32, u16_at(28));
    // Rows are stored bottom-up (a positive height) and padded to four bytes.
    let rows = height.unsigned_abs() as usize;
    let row_len = (width * bits / 8).div_ceil(4) * 4;
    let mut pixels = Vec::with_capacity(rows * width * 3);
    for r in 0..rows {
        let stored = if height > 0 { rows - 1 - r } else { r };
        let row = &d[offset + stored * row_len..];
        for x in 0..width {
            let bgr = match bits {
                8 => {
                    let entry = 14 + u32_at(14) + 4 * row[x] as usize;
                    [d[entry], d[entry + 1], d[entry + 2]]
                }
                24 => [row[3 * x], row[3 * x + 1], row[3 * x + 2]],
                other => panic!("{path}: {other}-bit bitmaps are not read here"),
            };
            pixels.extend(bgr.map(f64::from));
        }
    }
    (pixels, [rows, width, 3])
}

both_backends! {
    fn grayscale_weighs_the_colours<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [1, 2, 3]}"#);
        let x = floats(&[1, 1, 2, 3], [255.0, 0.0, 0.0, 10.0, 20.0, 30.0]);
        // 0.299 * 255 = 76.245; 0.299 * 10 + 0.587 * 20 + 0.114 * 30 = 18.15.
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "grayscale"}), "p").unwrap(), [("inputs", s.clone())], 0).unwrap();
        t.assert_call("call", std::slice::from_ref(&x), &[floats(&[1, 1, 2], [76.245, 18.15])], tol());
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "grayscale", "keep_rank": true}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[x], &[floats(&[1, 1, 2, 1], [76.245, 18.15])], tol());
        // Four channels are not RGB.
        let rgba = batch(r#"{"type": "float-box", "shape": [2, 2, 4]}"#);
        let err = ComponentTest::<B>::new(from_spec(&json!({"type": "grayscale", "scope": "gray"}), "p").unwrap(), [("inputs", rgba)], 0).err().unwrap().to_string();
        assert!(err.contains("gray") && err.contains("inputs") && err.contains("3 colours"), "{err}");
    }

    fn image_crop_takes_the_window<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [3, 3, 1]}"#);
        let x = floats(&[1, 3, 3, 1], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        let spec = json!({"type": "image_crop", "x": 1, "y": 0, "width": 2, "height": 2});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", s.clone())], 0).unwrap();
        t.assert_call("call", &[x], &[floats(&[1, 2, 2, 1], [1.0, 2.0, 4.0, 5.0])], tol());
        let outside = json!({"type": "image_crop", "x": 2, "y": 0, "width": 2, "height": 2, "scope": "crop"});
        let err = ComponentTest::<B>::new(from_spec(&outside, "p").unwrap(), [("inputs", s.clone())], 0).err().unwrap().to_string();
        assert!(err.contains("crop") && err.contains("inputs"), "{err}");
        // A window whose end overflows usize is outside too (it once overflowed the check).
        let huge = json!({"type": "image_crop", "x": u64::MAX, "y": 0, "width": 2, "height": 2, "scope": "crop"});
        let err = ComponentTest::<B>::new(from_spec(&huge, "p").unwrap(), [("inputs", s)], 0).err().unwrap().to_string();
        assert!(err.contains("crop") && err.contains("must lie inside"), "{err}");
    }

    fn image_resize_bilinear_is_rlgraphs_on_its_own_images<B>() {
        // RLgraph's test_image_resize: its 16x16x3 bitmap resized to 4x4 with `bilinear` must
        // give its 4x4x3 bitmap (both files are RLgraph's own, read as cv2.imread reads them).
        let (source, [h, w, c]) = read_bmp("16x16x3_image.bmp");
        let (expected, want_shape) = read_bmp("4x4x3_image_resized.bmp");
        assert_eq!((h, w, c, want_shape), (16, 16, 3, [4, 4, 3]));
        let s = Space::from_json_str(r#"{"type": "float-box", "shape": [16, 16, 3]}"#).unwrap();
        let spec = json!({"type": "image-resize", "width": 4, "height": 4, "interpolation": "bilinear"});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.call("reset", &[]).unwrap();
        t.assert_call("call", &[floats(&[16, 16, 3], source)], &[floats(&[4, 4, 3], expected)], tol());
        // By hand, TensorFlow 1's placement src = j * n_in / n_out: 1x4 -> 1x2 takes sources 0
        // and 2 exactly, and 1x2 -> 1x4 takes 0, 0.5, 1 and 1.5 (clamped to the last pixel).
        let s = batch(r#"{"type": "float-box", "shape": [1, 4, 1]}"#);
        let spec = json!({"type": "image-resize", "width": 2, "height": 1, "interpolation": "bilinear"});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 4, 1], [0.0, 1.0, 2.0, 3.0])], &[floats(&[1, 1, 2, 1], [0.0, 2.0])], tol());
        let s = batch(r#"{"type": "float-box", "shape": [1, 2, 1]}"#);
        let spec = json!({"type": "image-resize", "width": 4, "height": 1, "interpolation": "bilinear"});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 2, 1], [0.0, 4.0])], &[floats(&[1, 1, 4, 1], [0.0, 2.0, 4.0, 4.0])], tol());
    }

    fn image_resize_bilinear_half_pixel_is_pytorchs<B>() {
        // Up: 2x2 -> 4x4. Source rows for outputs 0..4 are (i + 0.5) / 2 - 0.5 = -0.25 (-> 0),
        // 0.25, 0.75, 1.25 (-> 1): [0, 4] becomes [0, 1, 3, 4] along each axis.
        let s = batch(r#"{"type": "float-box", "shape": [2, 2, 1]}"#);
        let x = floats(&[1, 2, 2, 1], [0.0, 4.0, 8.0, 12.0]);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 4, "height": 4, "interpolation": "bilinear_half_pixel"}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        let want = [0.0, 1.0, 3.0, 4.0, 2.0, 3.0, 5.0, 6.0, 6.0, 7.0, 9.0, 10.0, 8.0, 9.0, 11.0, 12.0];
        t.assert_call("call", &[x], &[floats(&[1, 4, 4, 1], want)], tol());
        // Down: 1x4 -> 1x2. Sources 0.5 and 2.5: [0, 1, 2, 3] becomes [0.5, 2.5].
        let s = batch(r#"{"type": "float-box", "shape": [1, 4, 1]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 2, "height": 1, "interpolation": "bilinear-half-pixel"}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 4, 1], [0.0, 1.0, 2.0, 3.0])], &[floats(&[1, 1, 2, 1], [0.5, 2.5])], tol());
    }

    fn image_resize_defaults_to_rlgraphs_area_interpolation<B>() {
        // 4x4 -> 2x2 with no `interpolation` key: each output is the mean of its 2x2 block.
        let s = batch(r#"{"type": "float-box", "shape": [4, 4, 1]}"#);
        let x = floats(&[1, 4, 4, 1], (0..16).map(f64::from).collect::<Vec<_>>());
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 2, "height": 2}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        // Block means: (0+1+4+5)/4 = 2.5, (2+3+6+7)/4 = 4.5, 10.5, 12.5.
        t.assert_call("call", &[x], &[floats(&[1, 2, 2, 1], [2.5, 4.5, 10.5, 12.5])], tol());
        // 1x3 -> 1x2 (scale 1.5): pixel 1 is split in halves between both outputs,
        // (0 + 0.5*3)/1.5 = 1 and (0.5*3 + 6)/1.5 = 5; both channels alike.
        let s = batch(r#"{"type": "float-box", "shape": [1, 3, 2]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 2, "height": 1, "interpolation": "area"}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 3, 2], [0.0, 0.0, 3.0, 30.0, 6.0, 60.0])], &[floats(&[1, 1, 2, 2], [1.0, 10.0, 5.0, 50.0])], tol());
        // Enlarging 1x2 -> 1x4 by area repeats each pixel (TensorFlow's AREA).
        let s = batch(r#"{"type": "float-box", "shape": [1, 2, 1]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 4, "height": 1}), "p").unwrap(), [("inputs", s.clone())], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 2, 1], [1.0, 7.0])], &[floats(&[1, 1, 4, 1], [1.0, 1.0, 7.0, 7.0])], tol());
        // Nearest by key: 1x4 -> 1x2 takes pixels floor(0 * 2) = 0 and floor(1 * 2) = 2.
        let s4 = batch(r#"{"type": "float-box", "shape": [1, 4, 1]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 2, "height": 1, "interpolation": "nearest"}), "p").unwrap(), [("inputs", s4)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 4, 1], [5.0, 6.0, 7.0, 8.0])], &[floats(&[1, 1, 2, 1], [5.0, 7.0])], tol());
        let err = from_spec::<B>(&json!({"type": "image-resize", "width": 2, "height": 1, "interpolation": "bicubic"}), "p").err().unwrap().to_string();
        assert!(err.contains("p.interpolation") && err.contains("bicubic") && err.contains("area"), "{err}");
    }

    fn grayscale_takes_custom_weights_and_casts_integer_images_back<B>() {
        // RLgraph's GrayScale(weights=...): the last dimension has one entry per weight.
        let s = batch(r#"{"type": "float-box", "shape": [1, 2]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "grayscale", "weights": [0.25, 0.75]}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 2], [4.0, 8.0])], &[floats(&[1, 1], [7.0])], tol());
        // uint8 RGB in, uint8 gray out, truncated as RLgraph's cast: 0.587 * 10 = 5.87 -> 5,
        // 0.299 * 255 = 76.245 -> 76.
        let s = batch(r#"{"type": "int-box", "shape": [1, 2, 3], "low": 0, "high": 256, "dtype": "uint8"}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "grayscale"}), "p").unwrap(), [("inputs", s.clone())], 0).unwrap();
        let x = s.value_from_json(&json!([[[[0, 10, 0], [255, 0, 0]]]])).unwrap();
        let out = t.call("call", &[x]).unwrap();
        let want = Value::Uint8(Array::new(vec![1, 1, 2], vec![5, 76]).unwrap());
        assert_eq!(out, vec![want]);
        let err = ComponentTest::<B>::new(from_spec(&json!({"type": "grayscale", "weights": [0.5, 0.5], "scope": "gray"}), "p").unwrap(), [("inputs", s)], 0).err().unwrap().to_string();
        assert!(err.contains("gray") && err.contains("2 colours"), "{err}");
    }

    fn transpose_permutes_item_dimensions<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [2, 3]}"#);
        let x = floats(&[1, 2, 3], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "transpose"}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[x], &[floats(&[1, 3, 2], [1.0, 4.0, 2.0, 5.0, 3.0, 6.0])], tol());
        // HWC -> CHW on a 1x2x2 image with two channels.
        let s = batch(r#"{"type": "float-box", "shape": [1, 2, 2]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "transpose", "perm": [2, 0, 1]}), "p").unwrap(), [("inputs", s.clone())], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 2, 2], [1.0, 2.0, 3.0, 4.0])], &[floats(&[1, 2, 1, 2], [1.0, 3.0, 2.0, 4.0])], tol());
        let err = ComponentTest::<B>::new(from_spec(&json!({"type": "transpose", "perm": [0, 0, 1]}), "p").unwrap(), [("inputs", s)], 0).err().unwrap().to_string();
        assert!(err.contains("perm") && err.contains("inputs"), "{err}");
    }

    fn moving_standardize_tracks_running_statistics<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [1]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "moving_standardize"}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        // [1, 3]: n = 1: mean 1, s 0; n = 2: d = 2, mean 2, s = 4 * 1/2 = 2; std = sqrt(2) + 1e-6.
        let r2 = 2f64.sqrt() + 1e-6;
        t.assert_call("call", &[floats(&[2, 1], [1.0, 3.0])], &[floats(&[2, 1], [-1.0 / r2, 1.0 / r2])], tol());
        // [5]: n = 3: d = 3, mean 3, s = 2 + 9 * 2/3 = 8; std = sqrt(8 / 2) + 1e-6 = 2.000001.
        t.assert_call("call", &[floats(&[1, 1], [5.0])], &[floats(&[1, 1], [2.0 / 2.000001])], tol());
        // After a reset the statistics start again: one item 4 has mean 4 and variance 4^2.
        t.call("reset", &[]).unwrap();
        t.assert_call("call", &[floats(&[1, 1], [4.0])], &[floats(&[1, 1], [0.0])], tol());
        // Text has no statistics.
        let text = batch(r#"{"type": "text-box"}"#);
        let spec = json!({"type": "moving_standardize", "scope": "standardize"});
        let err = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", text)], 0).err().unwrap().to_string();
        assert!(err.contains("standardize") && err.contains("inputs"), "{err}");
    }

    fn sequence_stacks_frames_and_resets<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [2]}"#);
        let spec = json!({"type": "sequence", "sequence_length": 3, "batch_size": 1, "add_rank": true});
        let stack = preprocessor_stack::<B>("stack", vec![from_spec(&spec, "p").unwrap()]);
        let mut t = ComponentTest::<B>::new(stack, [("inputs", s.clone())], 0).unwrap();
        // The first frame fills every slot; then the oldest drops out.
        t.assert_call("preprocess", &[floats(&[1, 2], [1.0, 2.0])], &[floats(&[1, 2, 3], [1.0, 1.0, 1.0, 2.0, 2.0, 2.0])], tol());
        t.assert_call("preprocess", &[floats(&[1, 2], [3.0, 4.0])], &[floats(&[1, 2, 3], [1.0, 1.0, 3.0, 2.0, 2.0, 4.0])], tol());
        // The stack's reset reaches the sequence.
        assert_eq!(t.call("reset", &[]).unwrap().len(), 1);
        t.assert_call("preprocess", &[floats(&[1, 2], [5.0, 6.0])], &[floats(&[1, 2, 3], [5.0, 5.0, 5.0, 6.0, 6.0, 6.0])], tol());
        // Without a new rank the frames are concatenated along the last dimension.
        let flat = json!({"type": "sequence", "sequence_length": 2, "add_rank": false});
        let mut t = ComponentTest::<B>::new(from_spec(&flat, "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 2], [1.0, 2.0])], &[floats(&[1, 4], [1.0, 2.0, 1.0, 2.0])], tol());
        t.assert_call("call", &[floats(&[1, 2], [3.0, 4.0])], &[floats(&[1, 4], [1.0, 2.0, 3.0, 4.0])], tol());
        // A batch of two streams when one was declared is an error naming the component.
        let err = t.call("call", &[floats(&[2, 2], [0.0; 4])]).unwrap_err().to_string();
        assert!(err.contains("sequence") && err.contains("1 streams"), "{err}");
    }

    fn round_to_uint8_rounds_halves_up_and_saturates<B>() {
        let s = batch(r#"{"type": "float-box", "shape": [7]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "round_to_uint8"}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        let x = floats(&[1, 7], [-3.0, 0.49, 0.5, 76.245, 254.5, 255.2, 1e9]);
        let out = t.call("call", &[x]).unwrap();
        assert_eq!(out[0], Value::Uint8(Array::new([1, 7], vec![0, 0, 1, 76, 255, 255, 255]).unwrap()));
        // Bytes stay as they are.
        let bytes = batch(r#"{"type": "int-box", "low": 0, "high": 256, "dtype": "uint8", "shape": [3]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "round-to-uint8"}), "p").unwrap(), [("inputs", bytes)], 0).unwrap();
        let x = Value::Uint8(Array::new([1, 3], vec![0, 17, 255]).unwrap());
        assert_eq!(t.call("call", std::slice::from_ref(&x)).unwrap()[0], x);
    }

    fn sequence_keeps_bytes_as_bytes<B>() {
        // Atari's stack: 2x1 grayscale frames, four deep, concatenated in the last dimension;
        // the first frame fills every slot, as for floats.
        let s = batch(r#"{"type": "int-box", "low": 0, "high": 256, "dtype": "uint8", "shape": [2, 1]}"#);
        let spec = json!({"type": "sequence", "sequence_length": 4, "add_rank": false});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", s)], 0).unwrap();
        let frame = |a: u8, b: u8| Value::Uint8(Array::new([1, 2, 1], vec![a, b]).unwrap());
        let stack = |v: Vec<u8>| Value::Uint8(Array::new([1, 2, 4], v).unwrap());
        assert_eq!(t.call("call", &[frame(1, 200)]).unwrap()[0], stack(vec![1, 1, 1, 1, 200, 200, 200, 200]));
        assert_eq!(t.call("call", &[frame(2, 255)]).unwrap()[0], stack(vec![1, 1, 1, 2, 200, 200, 200, 255]));
    }

    fn sequence_stacks_a_tuple_leaf_by_leaf_as_rlgraphs_container_test<B>() {
        // RLgraph's test_sequence_preprocessor_with_container_space: Tuple(FloatBox(1),
        // FloatBox(2, 2)), four frames concatenated in the last dimension; as RLgraph has it,
        // without a batch rank, and with a batch of one stream.
        let tuple = r#"[{"type": "float-box", "shape": [1]}, {"type": "float-box", "shape": [2, 2]}]"#;
        let spec = json!({"type": "sequence", "sequence_length": 4, "add_rank": false});
        for batched in [false, true] {
            let space = Space::from_json_str(tuple).unwrap().with_batch_rank(batched);
            let mut t = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", space)], 0).unwrap();
            // Shapes with the batch dimension of one where the space has one.
            let shape = |dims: &[usize]| -> Vec<usize> { if batched { [&[1], dims].concat() } else { dims.to_vec() } };
            let pair = |x: f64, y: [f64; 4]| Value::Tuple(vec![floats(&shape(&[1]), [x]), floats(&shape(&[2, 2]), y)]);
            let out = |x: [f64; 4], y: [f64; 16]| Value::Tuple(vec![floats(&shape(&[4]), x), floats(&shape(&[2, 8]), y)]);
            for _ in 0..3 {
                t.call("reset", &[]).unwrap();
                t.assert_call(
                    "call",
                    &[pair(0.5, [0.6, 0.7, 0.8, 0.9])],
                    &[out([0.5; 4], [0.6, 0.7, 0.6, 0.7, 0.6, 0.7, 0.6, 0.7, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9])],
                    tol(),
                );
                t.assert_call(
                    "call",
                    &[pair(0.6, [1.1; 4])],
                    &[out([0.5, 0.5, 0.5, 0.6], [0.6, 0.7, 0.6, 0.7, 0.6, 0.7, 1.1, 1.1, 0.8, 0.9, 0.8, 0.9, 0.8, 0.9, 1.1, 1.1])],
                    tol(),
                );
                t.assert_call(
                    "call",
                    &[pair(0.7, [2.0, 2.1, 2.2, 2.3])],
                    &[out([0.5, 0.5, 0.6, 0.7], [0.6, 0.7, 0.6, 0.7, 1.1, 1.1, 2.0, 2.1, 0.8, 0.9, 0.8, 0.9, 1.1, 1.1, 2.2, 2.3])],
                    tol(),
                );
            }
        }
        // Unbatched, the input is one stream: several declared streams are refused by name.
        let several = json!({"type": "sequence", "sequence_length": 4, "batch_size": 2, "add_rank": false});
        let unbatched = Space::from_json_str(r#"{"type": "float-box", "shape": [2]}"#).unwrap();
        let err = ComponentTest::<B>::new(from_spec(&several, "p").unwrap(), [("inputs", unbatched)], 0).err().unwrap().to_string();
        assert!(err.contains("sequence") && err.contains("batch rank") && err.contains("batch_size 2"), "{err}");
        // A text leaf has no frames to stack, and the refusal names it.
        let text = batch(r#"{"a": {"type": "float-box"}, "t": {"type": "text-box"}}"#);
        let err = ComponentTest::<B>::new(from_spec(&spec, "p").unwrap(), [("inputs", text)], 0).err().unwrap().to_string();
        assert!(err.contains("inputs/t") && err.contains("numeric"), "{err}");
    }
}

both_backends! {
    fn image_binary_marks_non_black_pixels<B>() {
        // RLgraph's ImageBinary: 1 where a pixel's channels sum above 0. Pixels (0,0,0),
        // (0,1,0), (2,0,0), (0,0,0) give 0, 1, 1, 0; with threshold 1.5 only (2,0,0) passes.
        let images = batch(r#"{"type": "float-box", "shape": [2, 2, 3]}"#);
        let x = floats(&[1, 2, 2, 3], vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let spec = serde_json::json!({"type": "image-binary"});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images.clone())], 0).unwrap();
        t.assert_call("call", std::slice::from_ref(&x), &[floats(&[1, 2, 2], vec![0.0, 1.0, 1.0, 0.0])], tol());
        let spec = serde_json::json!({"type": "image-binary", "threshold": 1.5, "keep_rank": true});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", images)], 0).unwrap();
        t.assert_call("call", &[x], &[floats(&[1, 2, 2, 1], vec![0.0, 0.0, 1.0, 0.0])], tol());
    }

    fn reshape_flattens_categories_by_default_as_rlgraph<B>() {
        // RLgraph's flatten_categories defaults to true: an IntBox(3) item [2, 0] becomes
        // one-hot [0, 0, 1, 1, 0, 0]; false keeps the ints.
        let ids = batch(r#"{"type": "int-box", "high": 3, "shape": [2]}"#);
        let x = Value::Int32(Array::new([1, 2], vec![2, 0]).unwrap());
        let spec = serde_json::json!({"type": "reshape", "flatten": true});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", ids.clone())], 0).unwrap();
        t.assert_call("call", std::slice::from_ref(&x), &[floats(&[1, 6], vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0])], tol());
        t.call("reset", &[]).unwrap();
        let spec = serde_json::json!({"type": "reshape", "flatten": true, "flatten_categories": false});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", ids.clone())], 0).unwrap();
        t.assert_call("call", std::slice::from_ref(&x), std::slice::from_ref(&x), tol());
        // A per-key count on a primitive input names no leaf.
        let keyed = serde_json::json!({"type": "reshape", "flatten": true, "flatten_categories": {"a": 4}, "scope": "flat"});
        let err = ComponentTest::<B>::new(from_spec(&keyed, "spec").unwrap(), [("inputs", ids)], 0).err().unwrap().to_string();
        assert!(err.contains("flat") && err.contains("flatten_categories.a"), "{err}");
    }

    fn reshape_flattens_a_dict_leaf_by_leaf_as_rlgraphs_split_graph_test<B>() {
        // RLgraph's test_split_graph_on_reshape_flatten (test_preprocess_layers.py): floats are
        // flattened per leaf, and only "d", named in flatten_categories, is one-hot by 3.
        let space = batch(
            r#"{"a": [{"type": "float-box", "shape": [1, 1, 2]}, {"type": "float-box", "shape": [1, 2, 2]}],
                "b": {"type": "float-box", "shape": [2, 2, 3]},
                "c": {"type": "float-box", "shape": [2]},
                "d": {"type": "int-box", "high": 3}}"#,
        );
        let b: Vec<f64> = (1..=24).map(|i| f64::from(i) / 100.0).collect();
        let input = Value::Dict(
            [
                ("a".to_string(), Value::Tuple(vec![
                    floats(&[2, 1, 1, 2], [3.0, 5.0, 1.0, 5.2]),
                    floats(&[2, 1, 2, 2], [3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8]),
                ])),
                ("b".to_string(), floats(&[2, 2, 2, 3], &b)),
                ("c".to_string(), floats(&[2, 2], [0.1, 0.2, 0.3, 0.4])),
                ("d".to_string(), Value::Int32(Array::new([2], vec![2, 0]).unwrap())),
            ]
            .into(),
        );
        let expected = Value::Dict(
            [
                ("a".to_string(), Value::Tuple(vec![
                    floats(&[2, 2], [3.0, 5.0, 1.0, 5.2]),
                    floats(&[2, 4], [3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8]),
                ])),
                ("b".to_string(), floats(&[2, 12], &b)),
                ("c".to_string(), floats(&[2, 2], [0.1, 0.2, 0.3, 0.4])),
                ("d".to_string(), floats(&[2, 3], [0.0, 0.0, 1.0, 1.0, 0.0, 0.0])),
            ]
            .into(),
        );
        let spec = json!({"type": "reshape", "flatten": true, "flatten_categories": {"d": 3}});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", space.clone())], 0).unwrap();
        t.call("reset", &[]).unwrap();
        t.assert_call("call", std::slice::from_ref(&input), &[expected], tol());
        // RLgraph strips only the leading "/" of a flat key; "/d" names the same leaf here.
        let rooted = json!({"type": "reshape", "flatten": true, "flatten_categories": {"/d": 3}});
        assert!(ComponentTest::<B>::new(from_spec(&rooted, "spec").unwrap(), [("inputs", space.clone())], 0).is_ok());
        // A key that names no leaf is refused with the leaves there are; so is one-hot on a float.
        let typo = json!({"type": "reshape", "flatten": true, "flatten_categories": {"e": 3}, "scope": "flat"});
        let err = ComponentTest::<B>::new(from_spec(&typo, "spec").unwrap(), [("inputs", space.clone())], 0).err().unwrap().to_string();
        assert!(err.contains("flat") && err.contains("flatten_categories.e") && err.contains("a/_T0_, a/_T1_, b, c, d"), "{err}");
        let float = json!({"type": "reshape", "flatten": true, "flatten_categories": {"c": 3}});
        let err = ComponentTest::<B>::new(from_spec(&float, "spec").unwrap(), [("inputs", space)], 0).err().unwrap().to_string();
        assert!(err.contains("inputs/c") && err.contains("IntBox with at most 3 categories"), "{err}");
    }

    fn concat_joins_a_dict_observation_into_one_float_vector<B>() {
        // A Gymnasium-style Dict: keys sorted (flags, position, target); the bools and the
        // int become floats, each leaf is flattened past the batch rank, and the pieces join
        // in that order: 2 + 2x2 + 1 = 7 features per item.
        let space = batch(
            r#"{"position": {"type": "float-box", "shape": [2, 2]}, "target": {"type": "int-box", "high": 3},
                "flags": {"type": "bool-box", "shape": [2]}}"#,
        );
        let input = Value::Dict(
            [
                ("flags".to_string(), Value::Bool(Array::new([2, 2], vec![true, false, false, true]).unwrap())),
                ("position".to_string(), floats(&[2, 2, 2], [0.1, 0.2, 0.3, 0.4, -1.0, -2.0, -3.0, -4.0])),
                ("target".to_string(), Value::Int32(Array::new([2], vec![2, 0]).unwrap())),
            ]
            .into(),
        );
        let want = floats(&[2, 7], [1.0, 0.0, 0.1, 0.2, 0.3, 0.4, 2.0, 0.0, 1.0, -1.0, -2.0, -3.0, -4.0, 0.0]);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "concat"}), "p").unwrap(), [("inputs", space)], 0).unwrap();
        t.call("reset", &[]).unwrap();
        t.assert_call("call", &[input], &[want], tol());
        // A single tensor is flattened the same way.
        let image = batch(r#"{"type": "float-box", "shape": [1, 3]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "concat"}), "p").unwrap(), [("inputs", image)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 3], [5.0, 6.0, 7.0])], &[floats(&[1, 3], [5.0, 6.0, 7.0])], tol());
    }

    fn reshape_takes_a_new_shape_per_flat_key<B>() {
        // "a" (2x2 floats) becomes [4]; "b" (3 ints below 4) becomes [3, 1] and stays int;
        // a leaf not named keeps its shape.
        let space = batch(
            r#"{"a": {"type": "float-box", "shape": [2, 2]}, "b": {"type": "int-box", "high": 4, "shape": [3]},
                "c": {"type": "float-box", "shape": [2]}}"#,
        );
        let ints = Value::Int32(Array::new([1, 3], vec![3, 0, 1]).unwrap());
        let input = Value::Dict(
            [
                ("a".to_string(), floats(&[1, 2, 2], [1.0, 2.0, 3.0, 4.0])),
                ("b".to_string(), ints),
                ("c".to_string(), floats(&[1, 2], [5.0, 6.0])),
            ]
            .into(),
        );
        let spec = json!({"type": "reshape", "new_shape": {"a": [4], "b": [3, 1]}});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", space.clone())], 0).unwrap();
        let expected = Value::Dict(
            [
                ("a".to_string(), floats(&[1, 4], [1.0, 2.0, 3.0, 4.0])),
                ("b".to_string(), Value::Int32(Array::new([1, 3, 1], vec![3, 0, 1]).unwrap())),
                ("c".to_string(), floats(&[1, 2], [5.0, 6.0])),
            ]
            .into(),
        );
        t.assert_call("call", std::slice::from_ref(&input), &[expected], tol());
        // One-hot before the new shape: [3, 0, 1] by 4 is 12 floats; "a" keeps its shape.
        let spec = json!({"type": "reshape", "new_shape": {"b": [12]}, "flatten_categories": {"b": 4}});
        let mut t = ComponentTest::<B>::new(from_spec(&spec, "spec").unwrap(), [("inputs", space.clone())], 0).unwrap();
        let one_hot = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let expected = Value::Dict(
            [
                ("a".to_string(), floats(&[1, 2, 2], [1.0, 2.0, 3.0, 4.0])),
                ("b".to_string(), floats(&[1, 12], one_hot)),
                ("c".to_string(), floats(&[1, 2], [5.0, 6.0])),
            ]
            .into(),
        );
        t.assert_call("call", &[input], &[expected], tol());
        // A shape that does not hold the leaf's elements names the leaf.
        let wrong = json!({"type": "reshape", "new_shape": {"a": [3]}});
        let err = ComponentTest::<B>::new(from_spec(&wrong, "spec").unwrap(), [("inputs", space)], 0).err().unwrap().to_string();
        assert!(err.contains("inputs/a") && err.contains("new shape [3]"), "{err}");
        // RLgraph asserts that flatten and new_shape are not given together.
        let both = json!({"type": "reshape", "flatten": true, "new_shape": [4]});
        let err = from_spec::<B>(&both, "spec").err().unwrap().to_string();
        assert!(err.contains("spec.new_shape") && err.contains("not both"), "{err}");
        let bad = json!({"type": "reshape", "new_shape": {"a": [-1]}});
        let err = from_spec::<B>(&bad, "spec").err().unwrap().to_string();
        assert!(err.contains("spec.new_shape.a"), "{err}");
    }

    fn every_preprocessor_has_reset<B>() {
        // RLgraph's PreprocessorStack resets each member; every preprocessor must take it.
        use serde_json::json;
        let specs = [
            json!({"type": "clip", "min": 0.0, "max": 1.0}),
            json!({"type": "convert-type", "to_dtype": "float32"}),
            json!({"type": "divide", "divisor": 2.0}),
            json!({"type": "multiply", "factor": 2.0}),
            json!({"type": "normalize"}),
            json!({"type": "grayscale"}),
            json!({"type": "image-crop", "x": 0, "y": 0, "width": 1, "height": 1}),
            json!({"type": "image-resize", "width": 2, "height": 2}),
            json!({"type": "image-binary"}),
            json!({"type": "transpose"}),
            json!({"type": "moving-standardize"}),
            json!({"type": "sequence", "sequence_length": 2}),
            json!({"type": "reshape", "flatten": true}),
            json!({"type": "reshape", "fold_time_rank": true}),
        ];
        for spec in specs {
            let c = from_spec::<B>(&spec, "spec").unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert!(c.api_methods().iter().any(|m| m.name == "reset"), "{spec} has no reset");
        }
    }
}
