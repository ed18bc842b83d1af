//! Atari as RLgraph configures it, checked against Gymnasium, ALE and OpenCV on the same
//! frames (reference frames come from `tests/python/atari_reference.py`, which uses nothing
//! of this project):
//! - the bridge's RLgraph options (`frameskip` with max-pooling, `max_num_noops`) equal
//!   Gymnasium's `AtariPreprocessing` wrapper frame for frame;
//! - `episodic_life`, `fire_reset` and `clip_rewards` equal the same plain Gymnasium game
//!   driven with the actions they stand for;
//! - RLgraph's preprocessing components (grayscale, area resize to 84x84) are within the
//!   stated rounding of `AtariPreprocessing`'s 84x84 frames, and the area resize alone is
//!   OpenCV's `INTER_AREA` up to OpenCV's rounding to uint8, on candle and on tch.
//!
//! They need the bridge's Python (see `rlgraph_envs::gym::python_for_tests`), else skip.

use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_components::{from_spec, preprocessor_stack};
use rlgraph_core::spaces::{Array, Space, Value};
use rlgraph_core::ComponentTest;
use rlgraph_envs::gym::GymEnv;
use rlgraph_envs::Env;
use rlgraph_tests::both_backends;
use serde_json::{json, Map, Value as Json};

const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/atari_reference.py");

fn python() -> Option<String> {
    rlgraph_envs::gym::python_for_tests().unwrap_or_else(|e| panic!("{e}"))
}

/// What `atari_reference.py` computed.
struct Reference {
    /// Per step: reward, terminated, truncated, lives after it.
    steps: Vec<(f64, bool, bool, i64)>,
    /// Every observation, the reset one first.
    frames: Vec<Vec<u8>>,
    /// `cv2.resize(frame, INTER_AREA)` of each, when asked for.
    resized: Vec<Vec<u8>>,
}

fn reference(python: &str, args: Json) -> Reference {
    let out = Command::new(python)
        .arg(REFERENCE)
        .arg(args.to_string())
        .output()
        .expect("the reference script runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let newline = out.stdout.iter().position(|&b| b == b'\n').expect("a header line");
    let head: Json = serde_json::from_slice(&out.stdout[..newline]).expect("a JSON header");
    assert_eq!(head["dtype"], "uint8");
    let size = |key: &str| -> usize {
        head[key]
            .as_array()
            .map_or(0, |s| s.iter().map(|d| d.as_u64().unwrap() as usize).product())
    };
    let steps: Vec<(f64, bool, bool, i64)> = head["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s[0].as_f64().unwrap(),
                s[1].as_bool().unwrap(),
                s[2].as_bool().unwrap(),
                s[3].as_i64().unwrap(),
            )
        })
        .collect();
    let body = &out.stdout[newline + 1..];
    let (frame, small) = (size("shape"), size("resized_shape"));
    let n = steps.len() + 1;
    assert_eq!(body.len(), n * (frame + small), "the reference's byte count");
    let (frames, resized) = body.split_at(n * frame);
    Reference {
        steps,
        frames: frames.chunks(frame).map(<[u8]>::to_vec).collect(),
        resized: if small > 0 {
            resized.chunks(small).map(<[u8]>::to_vec).collect()
        } else {
            vec![]
        },
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Uint8(a) => a.data().to_vec(),
        other => panic!("expected a uint8 frame, got {}", other.kind_name()),
    }
}

fn bridged(python: &str, id: &str, kwargs: Json) -> GymEnv {
    let kwargs: Map<String, Json> = kwargs.as_object().cloned().unwrap_or_default();
    GymEnv::with_python(python, id, kwargs, 0).unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn random_actions(seed: u64, n: usize, actions: i64) -> Vec<i64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(0..actions)).collect()
}

#[test]
fn frameskip_and_noop_resets_equal_gymnasiums_atari_preprocessing() {
    let Some(python) = python() else { return };
    let actions = random_actions(1, 120, 6);
    // RGB at the original size, so that the comparison sees the skipping and pooling only.
    let want = reference(
        &python,
        json!({"id": "PongNoFrameskip-v4", "seed": 3, "actions": actions,
               "atari_preprocessing": {"noop_max": 30, "frame_skip": 4, "screen_size": [160, 210], "grayscale_obs": false}}),
    );
    let mut env = bridged(
        &python,
        "PongNoFrameskip-v4",
        json!({"frameskip": 4, "max_num_noops": 30}),
    );
    assert_eq!(
        bytes(&env.reset(Some(3)).unwrap()),
        want.frames[0],
        "the frame after the no-ops"
    );
    for (t, &a) in actions.iter().enumerate() {
        let step = env.step(&Value::i32(a as i32)).unwrap();
        let (reward, terminated, truncated, _) = want.steps[t];
        assert_eq!(
            (step.reward, step.terminated, step.truncated),
            (reward, terminated, truncated),
            "step {t}"
        );
        assert!(
            bytes(&step.observation) == want.frames[t + 1],
            "step {t}: the max of the last two frames"
        );
    }
}

#[test]
fn episodic_life_fire_reset_and_reward_clipping_equal_the_plain_game_driven_by_hand() {
    let Some(python) = python() else { return };
    let make = json!({"frameskip": 1, "repeat_action_probability": 0.0});
    let mut options = make.clone();
    options["episodic_life"] = json!(true);
    options["fire_reset"] = json!(true);
    options["clip_rewards"] = json!(true);
    let mut env = bridged(&python, "ALE/Breakout-v5", options);
    // Play until the first life is lost, then on for 30 steps of the next life.
    let agent = random_actions(2, 3000, 4);
    let mut seen = vec![bytes(&env.reset(Some(1)).unwrap())];
    let mut steps = vec![];
    let mut lost_at = None;
    for (t, &a) in agent.iter().enumerate() {
        let step = env.step(&Value::i32(a as i32)).unwrap();
        seen.push(bytes(&step.observation));
        steps.push((step.reward, step.terminated));
        if step.terminated {
            lost_at = Some(t);
            seen.push(bytes(&env.reset(None).unwrap()));
        }
        if lost_at.is_some_and(|k| t >= k + 30) {
            break;
        }
    }
    let k = lost_at.expect("random play loses a life within 3000 frames");
    // The same game by hand: FIRE and 2 after the reset; after the lost life one no-op
    // (the game goes on, it does not restart), FIRE and 2 again.
    let mut by_hand = vec![1, 2];
    by_hand.extend(&agent[..=k]);
    by_hand.extend([0, 1, 2]);
    by_hand.extend(&agent[k + 1..steps.len()]);
    let want = reference(
        &python,
        json!({"id": "ALE/Breakout-v5", "make": make, "seed": 1, "actions": by_hand, "continue_on_end": true}),
    );
    // Reference frame i follows by_hand[..i]; ours are offset by the presses.
    let frame_of = |i: usize| &want.frames[i];
    assert!(seen[0] == *frame_of(2), "the reset frame follows FIRE and 2");
    for (t, &(ours, ended)) in steps.iter().enumerate() {
        let i = if t <= k { t + 3 } else { t + 6 };
        let (reward, _, _, lives) = want.steps[i - 1];
        let sign = if reward > 0.0 {
            1.0
        } else if reward < 0.0 {
            -1.0
        } else {
            0.0
        };
        assert_eq!(ours, sign, "step {t}: the reward's sign");
        assert_eq!(ended, t == k, "step {t}: only the lost life ends the agent's episode");
        if t == k {
            assert_eq!(lives, 4, "the first life is lost at step {k}");
        }
        let at = if t <= k { t + 1 } else { t + 2 };
        assert!(seen[at] == *frame_of(i), "step {t}: the frame");
    }
    assert!(
        seen[k + 2] == *frame_of(k + 6),
        "after the lost life: no-op, FIRE, 2, and the same game"
    );
}

/// The bridged RGB frames of `ALE/Pong-v5` (no frame skip, no sticky actions) and the
/// reference's frames for the same seed and actions.
fn pong_frames(python: &str, make: Json, extra: Json) -> (Vec<Vec<u8>>, Reference) {
    let actions = random_actions(5, 150, 6);
    let mut env = bridged(python, "ALE/Pong-v5", make.clone());
    let mut frames = vec![bytes(&env.reset(Some(5)).unwrap())];
    for &a in &actions {
        frames.push(bytes(&env.step(&Value::i32(a as i32)).unwrap().observation));
    }
    let mut args = json!({"id": "ALE/Pong-v5", "make": make, "seed": 5, "actions": actions});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    (frames, reference(python, args))
}

/// The frames as one uint8 batch `[n, h, w, c]`.
fn batch_of(frames: &[Vec<u8>], shape: [usize; 3]) -> Value {
    let data: Vec<u8> = frames.concat();
    Value::Uint8(Array::new(vec![frames.len(), shape[0], shape[1], shape[2]], data).unwrap())
}

fn floats_of(v: &Value) -> Vec<f64> {
    match v {
        Value::Float32(a) => a.data().iter().map(|&x| f64::from(x)).collect(),
        other => panic!("expected float32, got {}", other.kind_name()),
    }
}

fn uint8_space(shape: [usize; 3]) -> Space {
    Space::from_json(&json!({"type": "int-box", "shape": shape, "low": 0, "high": 256, "dtype": "uint8"}))
        .unwrap()
        .with_batch_rank(true)
}

both_backends! {
    fn rlgraph_grayscale_and_area_resize_match_gymnasiums_atari_preprocessing<B>() {
        let Some(python) = python() else { return };
        let make = json!({"frameskip": 1, "repeat_action_probability": 0.0});
        let (rgb, want) = pong_frames(&python, make, json!({"atari_preprocessing": {"noop_max": 0, "frame_skip": 1, "screen_size": 84, "grayscale_obs": true}}));
        // RLgraph's Atari preprocessing (apex_pong.json): grayscale keeping the rank, resize
        // to 84x84 by area.
        let stack = preprocessor_stack::<B>("stack", vec![
            from_spec(&json!({"type": "grayscale", "keep_rank": true}), "gray").unwrap(),
            from_spec(&json!({"type": "image_resize", "width": 84, "height": 84}), "resize").unwrap(),
        ]);
        let mut t = ComponentTest::<B>::new(stack, [("inputs", uint8_space([210, 160, 3]))], 0).unwrap();
        let ours = floats_of(&t.call("preprocess", &[batch_of(&rgb, [210, 160, 3])]).unwrap()[0]);
        // The bound: ALE grays round(0.2989 r + 0.587 g + 0.114 b), RLgraph truncates
        // 0.299 r + 0.587 g + 0.114 b, so per source pixel ours - ALE's lies in
        // (-1 - 0.0001 * 255, 0.5 + 0.0001 * 255) = (-1.026, 0.526); the area mean keeps that
        // range, and OpenCV's uint8 result adds at most 0.5 of rounding: |ours - theirs| < 1.53.
        assert_eq!(ours.len(), want.frames.len() * 84 * 84);
        let theirs: Vec<f64> = want.frames.concat().into_iter().map(f64::from).collect();
        let worst = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst < 1.53, "max |ours - AtariPreprocessing| = {worst}");
        // Not identical by chance: the frames hold real content (paddles, score, ball).
        assert!(theirs.iter().any(|&v| v != theirs[0]));
    }

    fn area_resize_is_opencvs_inter_area_on_ale_grayscale_frames<B>() {
        let Some(python) = python() else { return };
        let make = json!({"frameskip": 1, "repeat_action_probability": 0.0, "obs_type": "grayscale"});
        let (gray, want) = pong_frames(&python, make, json!({"area_resize": [84, 84]}));
        assert!(gray == want.frames, "the bridge carries ALE's grayscale frames unchanged");
        let resize = from_spec::<B>(&json!({"type": "image_resize", "width": 84, "height": 84, "interpolation": "area"}), "resize").unwrap();
        let mut t = ComponentTest::<B>::new(resize, [("inputs", uint8_space([210, 160, 1]))], 0).unwrap();
        let ours = floats_of(&t.call("call", &[batch_of(&gray, [210, 160, 1])]).unwrap()[0]);
        let theirs: Vec<f64> = want.resized.concat().into_iter().map(f64::from).collect();
        assert_eq!(ours.len(), theirs.len());
        // OpenCV rounds its float area mean to uint8 (at most 0.5 off); f32 sums add ~1e-4.
        let worst = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst <= 0.5 + 1e-3, "max |ours - cv2 INTER_AREA| = {worst}");
    }
}
