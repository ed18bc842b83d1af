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
# One zero-action step from states that cross one health bound each, or stay just inside.
crafted = []
for id, name, qpos_at, qvel_at in [
    ("Hopper-v5", "state beyond 100", {1: 1.5}, {0: 150.0}),
    ("Hopper-v5", "state within 100", {1: 1.5}, {0: 99.0}),
    ("Hopper-v5", "z below 0.7", {1: 0.65, 3: -0.8, 4: -1.0}, {}),
    ("Hopper-v5", "z high (no upper bound)", {1: 2.5}, {}),
    ("Hopper-v5", "angle beyond 0.2", {2: 0.21}, {}),
    ("Hopper-v5", "angle within 0.2", {2: 0.19}, {}),
    ("Walker2d-v5", "z above 2", {1: 2.05}, {}),
    ("Walker2d-v5", "z below 0.8", {1: 0.7, 3: -0.8, 4: -1.0, 6: -0.8, 7: -1.0}, {}),
    ("Walker2d-v5", "angle beyond 1", {2: 1.02}, {}),
    ("Walker2d-v5", "fast joint (no state bound)", {}, {3: 150.0}),
]:
    env = gym.make(id).unwrapped
    env.reset(seed=0)
    qpos, qvel = env.init_qpos.copy(), env.init_qvel.copy()
    for i, v in qpos_at.items():
        qpos[i] = v
    for i, v in qvel_at.items():
        qvel[i] = v
    env.set_state(qpos, qvel)
    obs, r, term, trunc, info = env.step(np.zeros(env.model.nu))
    crafted.append({"id": id, "name": name, "state": qpos.tolist() + qvel.tolist(), "obs": obs.tolist(),
                    "reward": float(r), "terminated": bool(term)})
out["crafted"] = crafted
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
            assert_eq!(
                step.reward,
                expected["reward"].as_f64().unwrap(),
                "{id}: reward at step {t}"
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
fn every_health_bound_ends_an_episode_where_gymnasiums_does() {
    let Some(python) = python() else { return };
    let reference = reference(&python);
    let cases = reference["crafted"].as_array().unwrap();
    // Each case crosses one bound, or stays inside it; Gymnasium's verdicts, as the script names them.
    let verdicts: Vec<(&str, bool)> = cases
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["terminated"].as_bool().unwrap()))
        .collect();
    let ending: Vec<&str> = verdicts.iter().filter(|(_, ends)| *ends).map(|(n, _)| *n).collect();
    assert_eq!(
        ending,
        [
            "state beyond 100",
            "z below 0.7",
            "angle beyond 0.2",
            "z above 2",
            "z below 0.8",
            "angle beyond 1"
        ]
    );
    for case in cases {
        let (id, name) = (case["id"].as_str().unwrap(), case["name"].as_str().unwrap());
        let mut native = env(&python, id, 0);
        native.reset(Some(0)).unwrap();
        native.set_state(&floats(&case["state"])).unwrap();
        let nu = native.action_space().flat_dim();
        let step = native.step(&action(&vec![0.0; nu])).unwrap();
        let want: Vec<f32> = floats(&case["obs"]).iter().map(|&x| x as f32).collect();
        assert_eq!(obs(&step.observation), want, "{id}, {name}: observation");
        assert_eq!(step.reward, case["reward"].as_f64().unwrap(), "{id}, {name}: reward");
        assert_eq!(
            step.terminated,
            case["terminated"].as_bool().unwrap(),
            "{id}, {name}: terminated"
        );
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

/// The sample standard deviation of `xs`.
fn std_dev(xs: &[f64]) -> f64 {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

#[test]
fn restart_noise_has_gymnasiums_distributions() {
    let Some(python) = python() else { return };
    let reference = reference(&python);
    for id in MUJOCO_IDS {
        let init = floats(&reference[*id]["init_qpos"]);
        let mut native = env(&python, id, 21);
        let (mut position_noise, mut velocities) = (vec![], vec![]);
        for _ in 0..400 {
            native.reset(None).unwrap();
            let state = native.state().unwrap();
            let (qpos, qvel) = state.split_at(init.len());
            position_noise.extend(qpos.iter().zip(&init).map(|(q, q0)| q - q0));
            velocities.extend_from_slice(qvel);
        }
        // Uniform on [-s, s) has std s/sqrt(3); HalfCheetah's velocities are normal with std s.
        // 2,400 or more draws put the sample std within 3% of the truth (5 standard errors).
        let (s, normal_velocities) = match *id {
            "HalfCheetah-v5" => (0.1, true),
            _ => (5e-3, false),
        };
        let uniform = s / 3f64.sqrt();
        let close = |got: f64, want: f64| (got / want - 1.0).abs() < 0.05;
        assert!(
            close(std_dev(&position_noise), uniform),
            "{id}: position noise std {}",
            std_dev(&position_noise)
        );
        assert!(
            position_noise.iter().all(|x| x.abs() <= s),
            "{id}: position noise beyond {s}"
        );
        let velocity_std = std_dev(&velocities);
        match normal_velocities {
            true => {
                assert!(close(velocity_std, s), "{id}: velocity std {velocity_std}");
                assert!(velocities.iter().any(|v| v.abs() > 2.0 * s), "{id}: a normal's tails");
            }
            false => {
                assert!(close(velocity_std, uniform), "{id}: velocity std {velocity_std}");
                assert!(
                    velocities.iter().all(|v| v.abs() <= s),
                    "{id}: velocity noise beyond {s}"
                );
            }
        }
    }
}

#[test]
fn a_snapshot_of_one_task_is_refused_by_another() {
    let Some(python) = python() else { return };
    let mut walker = env(&python, "Walker2d-v5", 0);
    walker.reset(None).unwrap();
    let snapshot = walker.snapshot().unwrap();
    let mut cheetah = env(&python, "HalfCheetah-v5", 0);
    cheetah.reset(None).unwrap();
    let err = cheetah.restore_snapshot(&snapshot).unwrap_err().to_string();
    assert!(
        err.contains("the snapshot is of Walker2d-v5, not HalfCheetah-v5"),
        "{err}"
    );
    let mut short = cheetah.snapshot().unwrap();
    short.state.pop();
    let err = cheetah.restore_snapshot(&short).unwrap_err().to_string();
    assert!(err.contains("another MuJoCo version"), "{err}");
    // Nothing was changed by the refusals.
    assert_eq!(cheetah.state().unwrap(), {
        let mut again = env(&python, "HalfCheetah-v5", 0);
        again.reset(None).unwrap();
        again.state().unwrap()
    });
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
