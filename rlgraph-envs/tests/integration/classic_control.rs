//! The classic-control environments against single steps of Gymnasium's equations worked out
//! by hand, their limits, seeding and bad actions.

use approx::assert_relative_eq;
use rlgraph_envs::{angle_normalize, make, Acrobot, CartPole, Env, EnvError, MountainCar, Pendulum};
use rlgraph_spaces::{Array, Value};

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        other => panic!("{other:?}"),
    }
}

fn torque(x: f32) -> Value {
    Value::Float32(Array::new([1], vec![x]).unwrap())
}

#[test]
fn cartpole_one_step_from_rest() {
    let mut env = CartPole::new(0);
    env.set_state(&[0.0, 0.0, 0.0, 0.0]).unwrap();
    let step = env.step(&Value::i32(1)).unwrap();
    // force 10, sin 0, cos 1: temp = 10 / 1.1 = 100/11;
    // theta_acc = -temp / (0.5 (4/3 - 0.1/1.1)) = -(100/11) / (41/66) = -600/41;
    // x_acc = temp - 0.05 theta_acc / 1.1 = 100/11 + 300/451 = 4400/451.
    // Euler with tau 0.02: x and theta keep their old (zero) rates.
    let want = [0.0, 0.02 * 4400.0 / 451.0, 0.0, 0.02 * -600.0 / 41.0];
    for (got, want) in env.state().iter().zip(want) {
        assert_relative_eq!(*got, want, epsilon = 1e-12);
    }
    let obs = floats(&step.observation);
    assert_relative_eq!(obs[1], want[1], epsilon = 1e-6);
    assert_eq!((step.reward, step.terminated, step.truncated), (1.0, false, false));
    // The second step moves x by tau times the new velocity.
    env.step(&Value::i32(0)).unwrap();
    assert_relative_eq!(env.state()[0], 0.02 * want[1], epsilon = 1e-12);
}

#[test]
fn cartpole_terminates_outside_the_track_and_refuses_further_steps() {
    let mut env = CartPole::new(0);
    env.set_state(&[2.39, 1.0, 0.0, 0.0]).unwrap();
    let step = env.step(&Value::i32(1)).unwrap();
    // x = 2.39 + 0.02 * 1.0 = 2.41 > 2.4.
    assert!(step.terminated && !step.truncated);
    assert_eq!(step.reward, 1.0);
    assert!(matches!(env.step(&Value::i32(1)), Err(EnvError::EpisodeOver { .. })));
    // 12 degrees of pole angle also ends it.
    env.set_state(&[0.0, 0.0, 0.2094, 1.0]).unwrap();
    assert!(env.step(&Value::i32(1)).unwrap().terminated);
}

#[test]
fn cartpole_resets_are_seeded_and_within_five_hundredths() {
    let mut a = CartPole::new(0);
    let mut b = CartPole::new(99);
    assert_eq!(a.reset(Some(7)).unwrap(), b.reset(Some(7)).unwrap());
    assert_ne!(a.reset(Some(7)).unwrap(), a.reset(Some(8)).unwrap());
    for x in floats(&a.reset(None).unwrap()) {
        assert!((-0.05..0.05).contains(&x));
    }
}

#[test]
fn bad_actions_name_the_env_and_the_space() {
    let mut env = make("CartPole-v1", 0).unwrap();
    env.reset(Some(0)).unwrap();
    let err = env.step(&Value::i32(2)).unwrap_err().to_string();
    assert!(
        err.contains("CartPole-v1") && err.contains('2') && err.contains("IntBox"),
        "{err}"
    );
    assert!(env.step(&Value::f32(1.0)).is_err());
    let mut pendulum = Pendulum::new(0);
    pendulum.reset(Some(0)).unwrap();
    assert!(pendulum.step(&torque(f32::NAN)).is_err());
    assert!(pendulum.step(&Value::i32(1)).is_err());
    assert!(make("CartPole-v9", 0).is_err());
}

#[test]
fn mountain_car_steps_walls_goal_and_time_limit() {
    let mut env = MountainCar::new(0);
    env.set_state(&[-0.5, 0.0]).unwrap();
    let step = env.step(&Value::i32(2)).unwrap();
    // velocity = 0 + (2 - 1) 0.001 + cos(3 * -0.5) (-0.0025); position = -0.5 + velocity.
    let v = 0.001 - 0.0025 * (-1.5f64).cos();
    let obs = floats(&step.observation);
    assert_relative_eq!(obs[0], -0.5 + v, epsilon = 1e-6);
    assert_relative_eq!(obs[1], v, epsilon = 1e-7);
    assert_eq!(step.reward, -1.0);
    // At the left wall a negative velocity is zeroed.
    env.set_state(&[-1.2, -0.01]).unwrap();
    let obs = floats(&env.step(&Value::i32(0)).unwrap().observation);
    assert_eq!(obs, vec![-1.2f32 as f64, 0.0]);
    // Reaching 0.5 with non-negative velocity terminates.
    env.set_state(&[0.49, 0.02]).unwrap();
    assert!(env.step(&Value::i32(2)).unwrap().terminated);
    // Doing nothing from the valley floor never gets there: truncated at step 200.
    env.reset(Some(3)).unwrap();
    for t in 1..=200 {
        let step = env.step(&Value::i32(1)).unwrap();
        assert!(!step.terminated);
        assert_eq!(step.truncated, t == 200, "step {t}");
    }
    assert!(env.step(&Value::i32(1)).is_err());
}

#[test]
fn pendulum_step_reward_and_clipping() {
    let mut env = Pendulum::new(0);
    env.set_state(&[0.0, 0.0]).unwrap();
    let step = env.step(&torque(2.0)).unwrap();
    // cost = 0 + 0 + 0.001 * 2^2; thdot = (15 sin 0 + 3 * 2) * 0.05 = 0.3; theta = 0.3 * 0.05.
    assert_relative_eq!(step.reward, -0.004, epsilon = 1e-12);
    let obs = floats(&step.observation);
    assert_relative_eq!(obs[0], 0.015f64.cos(), epsilon = 1e-6);
    assert_relative_eq!(obs[1], 0.015f64.sin(), epsilon = 1e-6);
    assert_relative_eq!(obs[2], 0.3, epsilon = 1e-6);
    // A torque of 5 is clipped to 2: the same step again.
    env.set_state(&[0.0, 0.0]).unwrap();
    assert_eq!(env.step(&torque(5.0)).unwrap().observation, step.observation);
    // Cost uses the normalized angle: at theta = 3 pi / 2 it is (pi/2)^2.
    assert_relative_eq!(
        angle_normalize(1.5 * std::f64::consts::PI),
        -std::f64::consts::FRAC_PI_2,
        epsilon = 1e-12
    );
    env.set_state(&[1.5 * std::f64::consts::PI, 0.0]).unwrap();
    let r = env.step(&torque(0.0)).unwrap().reward;
    assert_relative_eq!(r, -std::f64::consts::FRAC_PI_2.powi(2), epsilon = 1e-12);
    env.reset(Some(0)).unwrap();
    let truncated: Vec<bool> = (0..200).map(|_| env.step(&torque(0.0)).unwrap().truncated).collect();
    assert_eq!(truncated.iter().position(|&t| t), Some(199));
}

#[test]
fn acrobot_rest_is_an_equilibrium_and_torque_accelerates_the_second_link() {
    let mut env = Acrobot::new(0);
    env.set_state(&[0.0, 0.0, 0.0, 0.0]).unwrap();
    let step = env.step(&Value::i32(1)).unwrap();
    let obs = floats(&step.observation);
    for (got, want) in obs.iter().zip([1.0, 0.0, 1.0, 0.0, 0.0, 0.0]) {
        assert_relative_eq!(*got, want, epsilon = 1e-6);
    }
    assert_eq!((step.reward, step.terminated), (-1.0, false));
    // At rest with torque +1: d1 = 0.25 + 2.25 + 2 = 4.5, d2 = 1.75, so
    // ddtheta2 = 1 / (1.25 - 1.75^2 / 4.5) = 1.756 and ddtheta1 = -1.75 ddtheta2 / 4.5 = -0.683.
    // Over dt = 0.2 the velocities are about 0.2 times these; gravity, restoring at angles
    // of a few hundredths of a radian, changes that by a few percent.
    env.set_state(&[0.0, 0.0, 0.0, 0.0]).unwrap();
    let obs = floats(&env.step(&Value::i32(2)).unwrap().observation);
    let dd2 = 1.0 / (1.25 - 1.75f64.powi(2) / 4.5);
    let dd1 = -1.75 * dd2 / 4.5;
    assert_relative_eq!(obs[5], 0.2 * dd2, max_relative = 0.1);
    assert_relative_eq!(obs[4], 0.2 * dd1, max_relative = 0.1);
    // Upright, the tip is above the bar: terminal, reward 0.
    env.set_state(&[std::f64::consts::PI, 0.0, 0.0, 0.0]).unwrap();
    let step = env.step(&Value::i32(1)).unwrap();
    assert_eq!((step.reward, step.terminated), (0.0, true));
}

#[test]
fn set_state_refuses_non_finite_values_and_values_beyond_gymnasiums_bounds() {
    let refused = |env: &mut dyn Env, state: &[f64], name: &str| {
        let err = env.set_state(state).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
    };
    let mut cartpole = make("CartPole-v1", 0).unwrap();
    refused(cartpole.as_mut(), &[f64::NAN, 0.0, 0.0, 0.0], "x is NaN");
    refused(cartpole.as_mut(), &[0.0, f64::INFINITY, 0.0, 0.0], "x_dot is inf");
    // Gymnasium's observation bounds: |x| <= 2 * 2.4, |theta| <= 2 * 12 degrees.
    refused(cartpole.as_mut(), &[4.81, 0.0, 0.0, 0.0], "x is 4.81");
    refused(cartpole.as_mut(), &[0.0, 0.0, -0.42, 0.0], "theta is -0.42");
    cartpole.set_state(&[4.79, 1e6, 0.41, -1e6]).unwrap();
    let mut car = make("MountainCar-v0", 0).unwrap();
    refused(car.as_mut(), &[-1.21, 0.0], "position is -1.21");
    refused(car.as_mut(), &[0.0, 0.071], "velocity is 0.071");
    let mut pendulum = make("Pendulum-v1", 0).unwrap();
    refused(pendulum.as_mut(), &[0.0, 8.5], "theta_dot is 8.5");
    refused(pendulum.as_mut(), &[f64::NEG_INFINITY, 0.0], "theta is -inf");
    pendulum.set_state(&[100.0, -8.0]).unwrap();
    let mut acrobot = make("Acrobot-v1", 0).unwrap();
    refused(acrobot.as_mut(), &[0.0, 0.0, 13.0, 0.0], "dtheta1 is 13");
    refused(acrobot.as_mut(), &[0.0, 0.0, 0.0, -29.0], "dtheta2 is -29");
    acrobot.set_state(&[7.0, -7.0, 12.5, -28.2]).unwrap();
}
