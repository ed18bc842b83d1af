//! GAE over time-major device tensors (`gae_time_major`): a case worked by hand, and random
//! rollouts against a brute-force sum of discounted TD errors, on candle and on tch.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_components::helpers::gae_time_major;
use rlgraph_core::{test_device, Backend, HostTensor};
use rlgraph_tests::both_backends;

fn run<B: Backend>(
    values: &[f64],
    rewards: &[f64],
    terminated: &[u8],
    truncated: &[u8],
    n: usize,
    g: f64,
    l: f64,
) -> Vec<f64> {
    let device = test_device::<B>();
    let t = rewards.len() / n;
    let f = |v: &[f64], rows: usize| {
        B::from_host(
            &HostTensor::f32([rows, n], v.iter().map(|&x| x as f32).collect()).unwrap(),
            device,
        )
        .unwrap()
    };
    let u = |v: &[u8]| B::from_host(&HostTensor::u8([t, n], v.to_vec()).unwrap(), device).unwrap();
    let out = gae_time_major::<B>(&f(values, t + 1), &f(rewards, t), &u(terminated), &u(truncated), g, l).unwrap();
    assert_eq!(B::shape(&out), vec![t, n]);
    B::to_host(&out).unwrap().data.to_f64()
}

/// `A_t = sum_l (g l)^l delta_{t+l}` summed to the end of t's episode or the rollout, with
/// `delta_t = r_t + g V_next - V_t` (V_next 0 after a terminal, V_t after a cut).
fn brute_force(
    values: &[f64],
    rewards: &[f64],
    terminated: &[u8],
    truncated: &[u8],
    n: usize,
    g: f64,
    l: f64,
) -> Vec<f64> {
    let t_len = rewards.len() / n;
    let at = |t: usize, i: usize| t * n + i;
    let delta = |t: usize, i: usize| {
        let next = if terminated[at(t, i)] == 1 {
            0.0
        } else if truncated[at(t, i)] == 1 {
            values[at(t, i)]
        } else {
            values[at(t + 1, i)]
        };
        rewards[at(t, i)] + g * next - values[at(t, i)]
    };
    let mut out = vec![0.0; rewards.len()];
    for i in 0..n {
        for t in 0..t_len {
            let mut sum = 0.0;
            for k in t..t_len {
                sum += (g * l).powi((k - t) as i32) * delta(k, i);
                if terminated[at(k, i)] == 1 || truncated[at(k, i)] == 1 {
                    break;
                }
            }
            out[at(t, i)] = sum;
        }
    }
    out
}

fn assert_close(got: &[f64], want: &[f64]) {
    for (k, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() < 1e-4 * b.abs().max(1.0),
            "element {k}: {a} vs {b}\n{got:?}\n{want:?}"
        );
    }
}

both_backends! {
    fn gae_by_hand<B>() {
        // gamma = lambda = 0.5, values 1..4, rewards 1. Column 0 runs on: deltas 1, 0.5, 0, so
        // A = 1 + 0.25 (0.5 + 0.25 * 0), 0.5, 0. Column 1 terminates at t = 1: delta_1 = 1 - 2,
        // A_0 = 1 - 0.25. Column 2 is cut at t = 1: delta_1 = 1 + 0.5 * 2 - 2 = 0, A_0 = 1.
        let values = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0];
        let rewards = [1.0; 9];
        let terminated = [0, 0, 0, 0, 1, 0, 0, 0, 0];
        let truncated = [0, 0, 0, 0, 0, 1, 0, 0, 0];
        let got = run::<B>(&values, &rewards, &terminated, &truncated, 3, 0.5, 0.5);
        assert_close(&got, &[1.125, 0.75, 1.0, 0.5, -1.0, 0.0, 0.0, 0.0, 0.0]);
    }

    fn gae_matches_brute_force<B>() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (t, n) = (17, 5);
        let values: Vec<f64> = (0..(t + 1) * n).map(|_| rng.random_range(-2.0..2.0)).collect();
        let rewards: Vec<f64> = (0..t * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let terminated: Vec<u8> = (0..t * n).map(|_| rng.random_bool(0.15) as u8).collect();
        let truncated: Vec<u8> = terminated.iter().map(|&d| (d == 0 && rng.random_bool(0.1)) as u8).collect();
        let got = run::<B>(&values, &rewards, &terminated, &truncated, n, 0.99, 0.95);
        assert_close(&got, &brute_force(&values, &rewards, &terminated, &truncated, n, 0.99, 0.95));
    }
}
