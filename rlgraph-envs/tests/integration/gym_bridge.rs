//! The Gymnasium bridge against Gymnasium itself: CartPole-v1 through the bridge equals the
//! native CartPole step by step from the same state, Pong's spaces convert as declared, many
//! copies in one process step as one process per copy does, a class registered nowhere is
//! made from its file, and
//! every failure (no Python, an unknown id, a bad action or state, a step after the end) is
//! an error that names it.
//!
//! These tests need a Python with gymnasium and ale-py: `$RLGRAPH_PYTHON`, else the
//! checkout's `.gym-venv/` (which `scripts/install-gym.sh` makes). Without one they skip,
//! unless `RLGRAPH_REQUIRE_GYM` is set (the README's test command sets it), and then fail.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_envs::gym::{GymBatch, GymEnv};
use rlgraph_envs::{CartPole, Env, EnvError, EnvGroup, Stepping, VectorEnv};
use rlgraph_spaces::{Array, Dtype, FloatBox, IntBox, Space, Value};
use serde_json::Map;

/// The Python to test with, or `None` to skip.
fn python() -> Option<String> {
    rlgraph_envs::gym::python_for_tests().unwrap_or_else(|e| panic!("{e}"))
}

fn gym(python: &str, id: &str) -> GymEnv {
    GymEnv::with_python(python, id, Map::new(), 0).unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[test]
fn cartpole_through_the_bridge_equals_native_cartpole_step_by_step() {
    let Some(python) = python() else { return };
    let mut bridged = gym(&python, "CartPole-v1");
    let mut native = CartPole::new(0);
    assert_eq!(
        bridged.action_space(),
        native.action_space(),
        "Discrete(2) is IntBox(2)"
    );
    // Gymnasium 1.x's bounds, as float32: 2 * 2.4, infinite, 2 * 12 degrees in radians.
    let theta = (2.0 * 12.0 * 2.0 * std::f64::consts::PI / 360.0) as f32 as f64;
    let high = [4.8f32 as f64, f64::INFINITY, theta, f64::INFINITY];
    let low = high.iter().map(|h| -h).collect();
    assert_eq!(
        bridged.state_space(),
        &Space::from(FloatBox::per_element([4], low, high.to_vec()).unwrap())
    );

    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Random actions end episodes early (termination); a balancing controller reaches the
    // 500-step limit (truncation). Both must agree on every observation and flag.
    for (episode, controlled) in [(0, false), (1, false), (2, true)] {
        let start: Vec<f64> = (0..4).map(|_| rng.random_range(-0.05..0.05)).collect();
        bridged.reset(Some(episode)).unwrap();
        native.reset(Some(episode)).unwrap();
        bridged.set_state(&start).unwrap();
        native.set_state(&start).unwrap();
        assert_eq!(bridged.state(), Some(start.clone()), "the state reads back");
        let mut observation = start.clone();
        for t in 0.. {
            let push_right = match controlled {
                true => observation[2] + 0.5 * observation[3] > 0.0,
                false => rng.random_bool(0.5),
            };
            let action = Value::i32(push_right as i32);
            let (a, b) = (bridged.step(&action).unwrap(), native.step(&action).unwrap());
            assert_eq!(a, b, "episode {episode}, step {t}");
            if a.terminated || a.truncated {
                assert_eq!(a.truncated, controlled, "episode {episode} ended at step {t}");
                if controlled {
                    assert_eq!(t + 1, 500, "the time limit");
                }
                break;
            }
            observation = match &a.observation {
                Value::Float32(x) => x.data().iter().map(|&v| v as f64).collect(),
                other => panic!("{other:?}"),
            };
        }
        // Both refuse to step on after the end.
        assert!(matches!(
            bridged.step(&Value::i32(0)),
            Err(EnvError::EpisodeOver { .. })
        ));
    }
}

#[test]
fn pong_spaces_and_frames_convert_as_gymnasium_declares_them() {
    let Some(python) = python() else { return };
    let mut kwargs = Map::new();
    kwargs.insert("repeat_action_probability".into(), 0.0.into());
    let mut pong = GymEnv::with_python(&python, "ALE/Pong-v5", kwargs, 3).unwrap();
    assert_eq!(pong.id(), "gym:ALE/Pong-v5");
    // Box(0, 255, (210, 160, 3), uint8) and Discrete(6).
    let frames = IntBox::with_bounds(0, 256)
        .unwrap()
        .with_dtype(Dtype::Uint8)
        .unwrap()
        .with_shape([210, 160, 3]);
    assert_eq!(pong.state_space(), &Space::from(frames));
    assert_eq!(pong.action_space(), &Space::from(IntBox::new(6).unwrap()));
    let first = pong.reset(None).unwrap();
    assert!(pong.state_space().contains(&first));
    let mut total = 0.0;
    for i in 0..50 {
        let step = pong.step(&Value::i32(i % 6)).unwrap();
        assert!(pong.state_space().contains(&step.observation));
        total += step.reward;
    }
    assert!((-21.0..=21.0).contains(&total));
    // Same seed, same frames: the first reset without a seed used the one given at start.
    let mut again = GymEnv::with_python(&python, "ALE/Pong-v5", Map::new(), 3).unwrap();
    assert_eq!(again.reset(None).unwrap(), first);
}

#[test]
fn copies_step_in_parallel_processes_with_auto_reset() {
    let Some(python) = python() else { return };
    let copies = |stepping| {
        let envs: Vec<Box<dyn Env>> = (0..3)
            .map(|_| Box::new(gym(&python, "CartPole-v1")) as Box<dyn Env>)
            .collect();
        VectorEnv::new(envs, stepping).unwrap()
    };
    let (mut threaded, mut sequential) = (copies(Stepping::Threaded), copies(Stepping::Sequential));
    assert_eq!(
        threaded.reset_all(Some(5)).unwrap(),
        sequential.reset_all(Some(5)).unwrap()
    );
    let mut resets = 0;
    for _ in 0..60 {
        let actions = vec![Value::i32(1); 3];
        let (a, b) = (threaded.step(&actions).unwrap(), sequential.step(&actions).unwrap());
        assert_eq!(a, b);
        resets += a.iter().filter(|s| s.reset_observation.is_some()).count();
    }
    // Always pushing right topples the pole within a few dozen steps, so every copy resets.
    assert!(resets >= 3, "{resets} resets");
}

#[test]
fn failures_are_errors_that_name_what_failed() {
    let Some(python) = python() else { return };
    let err = GymEnv::with_python("/nonexistent/python3", "CartPole-v1", Map::new(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("/nonexistent/python3") && err.contains("RLGRAPH_PYTHON"),
        "{err}"
    );
    let err = GymEnv::with_python(&python, "NoSuchEnv-v9", Map::new(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("gym:NoSuchEnv-v9") && err.contains("gymnasium.make('NoSuchEnv-v9')"),
        "{err}"
    );
    let err = rlgraph_envs::make("gym:", 0).err().unwrap().to_string();
    assert!(err.contains("no Gymnasium id"), "{err}");
    let err = rlgraph_envs::make("gym:CartPole-v1?max_episode_steps", 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("not key=value"), "{err}");

    let mut env = gym(&python, "CartPole-v1");
    assert!(
        matches!(env.step(&Value::i32(0)), Err(EnvError::EpisodeOver { .. })),
        "no reset yet"
    );
    env.reset(Some(0)).unwrap();
    let err = env.step(&Value::i32(2)).unwrap_err().to_string();
    assert!(err.contains("action 2") && err.contains("gym:CartPole-v1"), "{err}");
    let err = env.set_state(&[0.0; 3]).unwrap_err().to_string();
    assert!(err.contains("expected 4 values, got 3"), "{err}");
    let err = env.set_state(&[0.0, f64::NAN, 0.0, 0.0]).unwrap_err().to_string();
    assert!(err.contains("NaN"), "{err}");
    // The environment is unharmed by the refusals.
    assert!(env.step(&Value::i32(1)).is_ok());
    // Keyword arguments reach gymnasium.make: a 3-step limit truncates the third step.
    let mut short = GymEnv::from_id_with_python(&python, "gym:CartPole-v1?max_episode_steps=3", 0).unwrap();
    short.reset(Some(0)).unwrap();
    let flags: Vec<bool> = (0..3).map(|_| short.step(&Value::i32(0)).unwrap().truncated).collect();
    assert_eq!(flags, [false, false, true]);
}

#[test]
fn bridged_environments_render_with_render_mode_rgb_array() {
    let Some(python) = python() else { return };
    // Pong's RGB rendering is its observation (Gymnasium's obs_type "rgb" is the screen).
    let mut kwargs = Map::new();
    kwargs.insert("render_mode".into(), "rgb_array".into());
    let mut pong = GymEnv::with_python(&python, "ALE/Pong-v5", kwargs, 3).unwrap();
    let Value::Uint8(screen) = pong.reset(None).unwrap() else {
        panic!("Pong frames are bytes")
    };
    let frame = pong.render().unwrap();
    assert_eq!((frame.width, frame.height), (160, 210));
    assert_eq!(frame.pixels, screen.data());
    // Without the render mode the bridge says how to ask for it.
    let mut plain = GymEnv::with_python(&python, "ALE/Pong-v5", Map::new(), 3).unwrap();
    plain.reset(None).unwrap();
    let err = plain.render().unwrap_err().to_string();
    assert!(err.contains("render") && err.contains("render_mode=rgb_array"), "{err}");
}

/// A vector of one bridge process per copy, copy `i` seeded `seed + i`: the reference a
/// batch must equal.
fn one_process_per_copy(python: &str, id: &str, copies: u64, seed: u64) -> VectorEnv {
    let envs: Vec<Box<dyn Env>> = (0..copies)
        .map(|i| Box::new(GymEnv::from_id_with_python(python, id, seed + i).unwrap()) as Box<dyn Env>)
        .collect();
    VectorEnv::new(envs, Stepping::Sequential).unwrap()
}

#[test]
fn batches_of_copies_in_one_process_step_as_one_process_per_copy() {
    let Some(python) = python() else { return };
    // A 15-step limit makes truncations as well as CartPole's terminations; Pendulum has float
    // actions and ends only by truncation (at Gymnasium's 200 steps).
    for (id, random_action) in [
        (
            "gym:CartPole-v1?max_episode_steps=15",
            (|rng: &mut ChaCha8Rng| Value::i32(rng.random_range(0..2))) as fn(&mut ChaCha8Rng) -> Value,
        ),
        ("gym:Pendulum-v1", |rng| {
            Value::Float32(Array::new(vec![1], vec![rng.random_range(-2.0f32..2.0)]).unwrap())
        }),
    ] {
        // Five copies as batches of two and three, seeded as five separate copies are.
        let batch = |copies, seed| {
            Box::new(GymBatch::from_id_with_python(&python, id, copies, seed).unwrap()) as Box<dyn EnvGroup>
        };
        let mut batched = VectorEnv::from_groups(vec![batch(2, 10), batch(3, 12)], Stepping::Threaded).unwrap();
        let mut reference = one_process_per_copy(&python, id, 5, 10);
        assert_eq!(batched.len(), 5);
        assert_eq!(batched.state_space(), reference.state_space(), "{id}");
        assert_eq!(batched.action_space(), reference.action_space(), "{id}");
        assert!(!batched.can_snapshot(), "bridged copies cannot be checkpointed");
        // The first reset takes each copy's own seed; a later one reseeds copy i with 3 + i.
        assert_eq!(
            batched.reset_all(None).unwrap(),
            reference.reset_all(None).unwrap(),
            "{id}"
        );
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut ends, mut truncations) = (0, 0);
        for t in 0..420 {
            if t == 210 {
                assert_eq!(
                    batched.reset_all(Some(3)).unwrap(),
                    reference.reset_all(Some(3)).unwrap(),
                    "{id}"
                );
            }
            let actions: Vec<Value> = (0..5).map(|_| random_action(&mut rng)).collect();
            let (a, b) = (batched.step(&actions).unwrap(), reference.step(&actions).unwrap());
            assert_eq!(a, b, "{id}, step {t}");
            ends += a.iter().filter(|s| s.reset_observation.is_some()).count();
            truncations += a.iter().filter(|s| s.step.truncated).count();
        }
        assert!(
            ends >= 10 && truncations >= 5,
            "{id}: {ends} episode ends, {truncations} truncations"
        );
    }
}

#[test]
fn a_batch_refuses_bad_input_by_name_and_steps_on() {
    let Some(python) = python() else { return };
    let err = GymBatch::from_id_with_python(&python, "gym:CartPole-v1", 0, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("at least one copy"), "{err}");
    let err = GymBatch::from_id_with_python(&python, "gym:NoSuchEnv-v9", 2, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("gymnasium.make('NoSuchEnv-v9')"), "{err}");
    let mut batch = GymBatch::from_id_with_python(&python, "gym:CartPole-v1", 2, 0).unwrap();
    let mut out = vec![];
    let two = [Value::i32(0), Value::i32(1)];
    assert!(
        matches!(batch.step_into(&two, &mut out), Err(EnvError::EpisodeOver { .. })),
        "no reset yet"
    );
    batch.reset_all(Some(0)).unwrap();
    let err = batch.step_into(&two[..1], &mut out).unwrap_err().to_string();
    assert!(err.contains("1 actions") && err.contains("each of 2 copies"), "{err}");
    let err = batch
        .step_into(&[Value::i32(0), Value::i32(2)], &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("action 2") && err.contains("gym:CartPole-v1"), "{err}");
    assert!(out.is_empty(), "a refused step adds nothing");
    batch.step_into(&two, &mut out).unwrap();
    assert_eq!(out.len(), 2, "the batch is unharmed by the refusals");
}

/// A user's Gymnasium class, registered nowhere: a walk on the integers that pays 1 and ends
/// at `goal`; beside it, names that are not environments.
const WALK: &str = r#"
import gymnasium as gym
import numpy as np


class Walk(gym.Env):
    def __init__(self, goal=5):
        self.goal = goal
        self.observation_space = gym.spaces.Box(-100.0, 100.0, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.pos = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 0
        return np.array([self.pos], dtype=np.float32), {}

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        done = self.pos == self.goal
        return np.array([self.pos], dtype=np.float32), float(done), done, False, {}


not_an_env = 3


def make_list():
    return []
"#;

#[test]
fn a_class_registered_nowhere_is_named_by_its_file_and_takes_keywords() {
    let Some(python) = python() else { return };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("gym_class_of_ones_own");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("walk_env.py");
    std::fs::write(&file, WALK).unwrap();
    let id = format!("gym:{}:Walk?goal=3", file.display());
    let mut env = GymEnv::from_id_with_python(&python, &id, 0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(env.reset(Some(0)).unwrap().to_json(), serde_json::json!([0.0]));
    // Three steps right reach the goal of 3 (the keyword, not the class's default of 5).
    let steps: Vec<_> = (0..3).map(|_| env.step(&Value::i32(1)).unwrap()).collect();
    let seen: Vec<_> = steps
        .iter()
        .map(|s| (s.observation.to_json(), s.reward, s.terminated))
        .collect();
    assert_eq!(
        seen,
        [
            (serde_json::json!([1.0]), 0.0, false),
            (serde_json::json!([2.0]), 0.0, false),
            (serde_json::json!([3.0]), 1.0, true),
        ]
    );

    for (name, expected) in [
        ("Missing", "has no Missing"),
        ("not_an_env", "is a int, not a class or function"),
        ("make_list", "make_list() made a list, not a gymnasium.Env"),
    ] {
        let id = format!("gym:{}:{name}", file.display());
        let err = GymEnv::from_id_with_python(&python, &id, 0).err().unwrap().to_string();
        assert!(err.contains(expected), "{name}: {err}");
    }
    let err = GymEnv::from_id_with_python(&python, "gym:/nonexistent/walk_env.py:Walk", 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("no Python file /nonexistent/walk_env.py"), "{err}");
}
