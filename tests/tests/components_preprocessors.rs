//! Image and stateful preprocessors, built from their RLgraph specs: grayscale, crop,
//! bilinear resize (against PyTorch's `interpolate(mode="bilinear", align_corners=False)`,
//! worked by hand), transpose, moving standardization (RLgraph's formulas by hand) and frame
//! stacking with reset, on candle and on tch.

use rlgraph_components::{from_spec, preprocessor_stack};
use rlgraph_core::{ComponentTest, Tolerance};
use rlgraph_tests::both_backends;
use rlgraph_tests::values::{batch, floats};
use serde_json::json;

fn tol() -> Tolerance {
    Tolerance::new(1e-4, 1e-5)
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
        let err = ComponentTest::<B>::new(from_spec(&outside, "p").unwrap(), [("inputs", s)], 0).err().unwrap().to_string();
        assert!(err.contains("crop") && err.contains("inputs"), "{err}");
    }

    fn image_resize_is_pytorchs_bilinear<B>() {
        // Up: 2x2 -> 4x4. Source rows for outputs 0..4 are (i + 0.5) / 2 - 0.5 = -0.25 (-> 0),
        // 0.25, 0.75, 1.25 (-> 1): [0, 4] becomes [0, 1, 3, 4] along each axis.
        let s = batch(r#"{"type": "float-box", "shape": [2, 2, 1]}"#);
        let x = floats(&[1, 2, 2, 1], [0.0, 4.0, 8.0, 12.0]);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 4, "height": 4}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        let want = [0.0, 1.0, 3.0, 4.0, 2.0, 3.0, 5.0, 6.0, 6.0, 7.0, 9.0, 10.0, 8.0, 9.0, 11.0, 12.0];
        t.assert_call("call", &[x], &[floats(&[1, 4, 4, 1], want)], tol());
        // Down: 1x4 -> 1x2. Sources 0.5 and 2.5: [0, 1, 2, 3] becomes [0.5, 2.5].
        let s = batch(r#"{"type": "float-box", "shape": [1, 4, 1]}"#);
        let mut t = ComponentTest::<B>::new(from_spec(&json!({"type": "image-resize", "width": 2, "height": 1}), "p").unwrap(), [("inputs", s)], 0).unwrap();
        t.assert_call("call", &[floats(&[1, 1, 4, 1], [0.0, 1.0, 2.0, 3.0])], &[floats(&[1, 1, 2, 1], [0.5, 2.5])], tol());
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
}
