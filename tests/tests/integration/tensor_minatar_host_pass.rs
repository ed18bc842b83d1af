//! The host pass of the tensor MinAtar games (on the CPU each copy steps by the native game,
//! given the tensor program's draws) against the tensor program itself, which
//! `tensor_minatar.rs` holds to the native games: the same boards, rewards, flags, rows and
//! restarts, step for step, actions out of range included, and across a restore.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{test_device, Device, HostTensor};
use rlgraph_tensor_envs::make;
use rlgraph_tests::both_backends;

fn download<B: Backend>(t: &B::Tensor) -> Vec<f64> {
    B::to_host(t).unwrap().data.to_f64()
}

/// Fails naming the first place where `a` and `b` differ (boards are long to print whole).
fn same(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!("{what}: first differ at {i}: host pass {} vs tensor ops {}", a[i], b[i]);
    }
}

/// Steps `id` by the host pass and by tensor ops side by side for `steps` steps from `seed`
/// under random actions (some outside the action set, which both clamp); returns the episodes
/// that ended.
fn host_pass_equals_the_tensor_ops<B: Backend>(id: &str, seed: u64, steps: usize) -> usize {
    let device = test_device::<B>();
    let n = 16;
    let mut host = make::<B>(id, n, seed, device).unwrap();
    let mut ops = make::<B>(id, n, seed, device).unwrap();
    assert_eq!(host.use_host_pass(true).unwrap(), device == Device::Cpu, "{id}");
    assert!(!ops.use_host_pass(false).unwrap());
    same(
        &download::<B>(&host.reset().unwrap()),
        &download::<B>(&ops.reset().unwrap()),
        "reset",
    );
    let actions = rlgraph_envs::make(id, 0)
        .unwrap()
        .action_space()
        .num_categories()
        .unwrap() as i64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ends = 0;
    for t in 0..steps {
        let a: Vec<i64> = (0..n).map(|_| rng.random_range(-1..=actions)).collect();
        let a = B::from_host(&HostTensor::i64([n], a).unwrap(), device).unwrap();
        let (x, y) = (host.step(&a).unwrap(), ops.step(&a).unwrap());
        let at = format!("{id}, step {t}");
        same(
            &download::<B>(&x.observation),
            &download::<B>(&y.observation),
            &format!("{at}: boards"),
        );
        same(
            &download::<B>(&x.reward),
            &download::<B>(&y.reward),
            &format!("{at}: rewards"),
        );
        let ended = download::<B>(&x.terminated);
        same(&ended, &download::<B>(&y.terminated), &format!("{at}: terminated"));
        same(
            &download::<B>(&x.truncated),
            &download::<B>(&y.truncated),
            &format!("{at}: truncated"),
        );
        ends += ended.iter().filter(|&&e| e == 1.0).count();
        if ended.contains(&1.0) {
            same(
                &download::<B>(&host.final_observation().unwrap()),
                &download::<B>(&ops.final_observation().unwrap()),
                &format!("{at}: boards reached"),
            );
        }
        if t % 97 == 0 {
            let (sx, sy) = (host.snapshot().unwrap(), ops.snapshot().unwrap());
            same(&sx.state.data.to_f64(), &sy.state.data.to_f64(), &format!("{at}: rows"));
            assert_eq!(sx.cursors, sy.cursors, "{at}");
            // The host pass takes up the tensor path's copies where it stands.
            host.restore(&sy).unwrap();
        }
    }
    ends
}

both_backends! {
    fn the_host_pass_plays_the_tensor_program<B>() {
        // Enough steps for every game to end episodes (Freeway's last 2,500 frames).
        for (id, steps) in [
            ("MinAtar/Breakout-v1", 1500),
            ("MinAtar/SpaceInvaders-v1", 1500),
            ("MinAtar/Asterix-v1", 1500),
            ("MinAtar/Freeway-v1", 2600),
            ("MinAtar/Seaquest-v1", 1500),
            ("MinAtar/Asterix-v0", 600),
        ] {
            let ends = host_pass_equals_the_tensor_ops::<B>(id, 7, steps);
            assert!(ends >= 4, "{id}: only {ends} episodes ended");
        }
    }
}
