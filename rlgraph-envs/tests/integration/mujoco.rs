//! The native MuJoCo tasks against Gymnasium's own: from the state Gymnasium starts in, under
//! the same actions (some beyond the ±1 the controls are clamped to), every observation,
//! reward and termination is Gymnasium's; restarts stay within Gymnasium's noise; a snapshot
//! resumes bit for bit; the time limit truncates; bad actions and states are errors.
//!
//! They need a Python with gymnasium and mujoco (`scripts/install-gym.sh`); without one they
//! skip, unless `RLGRAPH_REQUIRE_GYM` is set (the README's test command sets it).

use rlgraph_envs::mujoco::{MujocoEnv, MUJOCO_IDS};
use rlgraph_envs::{Env, EnvError};
use rlgraph_spaces::{Array, Value};
use serde_json::Value as Json;

fn python() -> Option<String> {
    rlgraph_envs::gym::python_for_tests().unwrap_or_else(|e| panic!("{e}"))
}

fn env(python: &str, id: &str, seed: u64) -> MujocoEnv {
    MujocoEnv::with_python(python, id, seed).unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn action(values: &[f64]) -> Value {
    Value::Float64(Array::new([values.len()], values.to_vec()).unwrap())
}

/// Gymnasium's run of each task: its start (`qpos` then `qvel` after `reset(seed=3)`), its
/// `init_qpos`, `dt`, and for each step the action given and what came back.
const REFERENCE: &str = r#"
import json, numpy as np, gymnasium as gym
out = {}
for id in ["Hopper-v5", "Walker2d-v5", "HalfCheetah-v5"]:
    env = gym.make(id).unwrapped
    env.reset(seed=3)
    start = env.data.qpos.tolist() + env.data.qvel.tolist()
    steps = []
    for t in range(300):
        # Beyond +-1 at the peaks: MuJoCo clamps the controls, the cost is of the action.
        a = np.array([1.3 * np.sin(0.05 * t + j) for j in range(env.model.nu)], dtype=np.float64)
        obs, r, term, trunc, info = env.step(a)
        steps.append({"action": a.tolist(), "obs": obs.tolist(), "reward": float(r), "terminated": bool(term)})
        if term:
            break
    out[id] = {"start": start, "init_qpos": env.init_qpos.tolist(), "dt": env.dt, "steps": steps}
print(json.dumps(out))
"#;

fn reference(python: &str) -> Json {
    let out = std::process::Command::new(python)
        .args(["-c", REFERENCE])
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the reference is JSON")
}

fn floats(json: &Json) -> Vec<f64> {
    json.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn obs(value: &Value) -> Vec<f32> {
    match value {
        Value::Float32(a) => a.data().to_vec(),
        other => panic!("expected float32 observations, got {other:?}"),
    }
}

#[test]
fn every_step_equals_gymnasiums_from_the_same_state_and_actions() {
    let Some(python) = python() else { return };
    let reference = reference(&python);
    for id in MUJOCO_IDS {
        let run = &reference[*id];
        let mut native = env(&python, id, 0);
        assert_eq!(native.dt(), run["dt"].as_f64().unwrap(), "{id}: dt");
        native.reset(Some(0)).unwrap();
        native.set_state(&floats(&run["start"])).unwrap();
        let steps = run["steps"].as_array().unwrap();
        assert!(steps.len() > 10, "{id}: the reference ran {} steps", steps.len());
        for (t, expected) in steps.iter().enumerate() {
            let step = native.step(&action(&floats(&expected["action"]))).unwrap();
            let want: Vec<f32> = floats(&expected["obs"]).iter().map(|&x| x as f32).collect();
            assert_eq!(obs(&step.observation), want, "{id}: observation at step {t}");
            let reward = expected["reward"].as_f64().unwrap();
            assert!(
                (step.reward - reward).abs() <= 1e-12 * reward.abs().max(1.0),
                "{id}: reward at step {t}: {} against Gymnasium's {reward}",
                step.reward
            );
            assert_eq!(
                step.terminated,
                expected["terminated"].as_bool().unwrap(),
                "{id}: terminated at {t}"
            );
            assert!(!step.truncated, "{id}: no truncation before 1,000 steps");
        }
        let ended = steps.last().unwrap()["terminated"].as_bool().unwrap();
        // Hopper and Walker2d fall under these actions; HalfCheetah never terminates.
        assert_eq!(ended, *id != "HalfCheetah-v5", "{id}: how the reference run ended");
    }
}

#[test]
fn restarts_are_seeded_and_within_gymnasiums_noise() {
    let Some(python) = python() else { return };
    let reference = reference(&python);
    for id in MUJOCO_IDS {
        let init = floats(&reference[*id]["init_qpos"]);
        let mut a = env(&python, id, 0);
        let mut b = env(&python, id, 0);
        let first = a.reset(Some(11)).unwrap();
        assert_eq!(first, b.reset(Some(11)).unwrap(), "{id}: same seed, same start");
        assert_ne!(first, a.reset(Some(12)).unwrap(), "{id}: another seed, another start");
        let state = a.state().unwrap();
        let (qpos, qvel) = state.split_at(init.len());
        for (q, q0) in qpos.iter().zip(&init) {
            assert!((q - q0).abs() <= 5e-3 * 20.0, "{id}: a start position far from rest");
        }
        match *id {
            // Uniform noise of ±0.005 on positions and velocities.
            "Hopper-v5" | "Walker2d-v5" => {
                assert!(qpos.iter().zip(&init).all(|(q, q0)| (q - q0).abs() <= 5e-3));
                assert!(qvel.iter().all(|v| v.abs() <= 5e-3));
            }
            // Uniform ±0.1 on positions, normal with std 0.1 on velocities.
            _ => {
                assert!(qpos.iter().zip(&init).all(|(q, q0)| (q - q0).abs() <= 0.1));
                assert!(qvel.iter().any(|v| v.abs() > 1e-3) && qvel.iter().all(|v| v.abs() < 0.6));
            }
        }
        assert!(
            qpos.iter().zip(&init).any(|(q, q0)| q != q0),
            "{id}: the start has noise"
        );
    }
}

#[test]
fn a_snapshot_resumes_bit_for_bit_in_a_fresh_env() {
    let Some(python) = python() else { return };
    let mut first = env(&python, "HalfCheetah-v5", 4);
    first.reset(None).unwrap();
    let act = |t: usize| action(&[0.9, -0.4, (t as f64 * 0.3).sin(), 0.2, -1.0, 0.7]);
    for t in 0..25 {
        first.step(&act(t)).unwrap();
    }
    let snapshot = first.snapshot().unwrap();
    let after: Vec<_> = (25..60).map(|t| first.step(&act(t)).unwrap()).collect();
    let mut second = env(&python, "HalfCheetah-v5", 99);
    second.restore_snapshot(&snapshot).unwrap();
    let again: Vec<_> = (25..60).map(|t| second.step(&act(t)).unwrap()).collect();
    assert_eq!(after, again);
    // The restored RNG restarts as the original would.
    assert_eq!(first.reset(None).unwrap(), second.reset(None).unwrap());
}

#[test]
fn halfcheetah_is_truncated_at_gymnasiums_limit_of_1000_steps() {
    let Some(python) = python() else { return };
    let mut cheetah = env(&python, "HalfCheetah-v5", 0);
    cheetah.reset(None).unwrap();
    let zero = action(&[0.0; 6]);
    for t in 1..=1000 {
        let step = cheetah.step(&zero).unwrap();
        assert_eq!(step.truncated, t == 1000, "step {t}");
        assert!(!step.terminated);
    }
    assert!(matches!(cheetah.step(&zero), Err(EnvError::EpisodeOver { .. })));
}

#[test]
fn bad_actions_and_states_are_errors_that_name_the_env() {
    let Some(python) = python() else { return };
    let mut hopper = env(&python, "Hopper-v5", 0);
    hopper.reset(None).unwrap();
    for bad in [
        action(&[0.0, 0.0]),
        action(&[0.0, f64::NAN, 0.0]),
        action(&[f64::INFINITY, 0.0, 0.0]),
    ] {
        let err = hopper.step(&bad).unwrap_err().to_string();
        assert!(
            err.contains("Hopper-v5") && err.contains("not in the action space"),
            "{err}"
        );
    }
    let err = hopper.set_state(&[0.0; 5]).unwrap_err().to_string();
    assert!(
        err.contains("expected 12 values (6 positions, then 6 velocities), got 5"),
        "{err}"
    );
    let mut nan = vec![0.0; 12];
    nan[3] = f64::NAN;
    let err = hopper.set_state(&nan).unwrap_err().to_string();
    assert!(err.contains("value 3 is NaN"), "{err}");
    // Nothing was changed by the refused calls: the episode goes on.
    assert!(hopper.step(&action(&[0.0; 3])).is_ok());
    // Lying down is unhealthy: the episode terminates, and a step after it is refused.
    let mut lying = vec![0.0; 12];
    lying[1] = 0.3;
    hopper.set_state(&lying).unwrap();
    assert!(hopper.step(&action(&[0.0; 3])).unwrap().terminated);
    assert!(matches!(
        hopper.step(&action(&[0.0; 3])),
        Err(EnvError::EpisodeOver { .. })
    ));
    let err = MujocoEnv::with_python(&python, "Hopper-v9", 0)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("known: Hopper-v5, Walker2d-v5, HalfCheetah-v5"), "{err}");
}
