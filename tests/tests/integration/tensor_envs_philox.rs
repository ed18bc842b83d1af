//! Philox restarts for device-resident environments: the generator as backend ops equals the
//! host generator (itself checked against Random123's published answers), every restart is
//! the documented draw for its copy and count, the CPU host pass gives the tensor ops' numbers,
//! and snapshots carry the counts.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{test_device, Device, HostTensor};
use rlgraph_envs::{Acrobot, CartPole, Env};
use rlgraph_tensor_envs::{
    make_with, philox4x32_10, philox4x32_10_tensors, unit_float, Batched, CartPoleDynamics, Restarts, TensorEnv,
};
use rlgraph_tests::both_backends;

fn download<B: Backend>(t: &B::Tensor) -> Vec<f64> {
    B::to_host(t).unwrap().data.to_f64()
}

/// Copy `copy`'s `k`-th start state in the box `(low, high)`, as `Restarts::Philox`
/// documents it: the counter `(k, copy, 0, 0)` under the seed's two words, each word's top
/// 24 bits a uniform in `[0, 1)`, scaled into the box in f32.
fn expected_draw(seed: u64, copy: usize, k: u64, low: &[f64], high: &[f64]) -> Vec<f64> {
    let words = philox4x32_10(
        [k as u32, copy as u32, (k >> 32) as u32, 0],
        [seed as u32, (seed >> 32) as u32],
    );
    (0..low.len())
        .map(|j| f64::from(unit_float(words[j]) * (high[j] - low[j]) as f32 + low[j] as f32))
        .collect()
}

both_backends! {
    fn philox_as_backend_ops_equals_the_host_generator<B>() {
        // Random123's three known answers, then 400 counters drawn at random (with the
        // extremes) under two keys: every word the same as the host's.
        let device = test_device::<B>();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut counters: Vec<[u32; 4]> = vec![[0; 4], [u32::MAX; 4], [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344]];
        counters.extend((0..400).map(|_| std::array::from_fn(|_| rng.random::<u32>())));
        for key in [[0xa409_3822, 0x299f_31d0], [u32::MAX, 7]] {
            let word = |j: usize| {
                let values = counters.iter().map(|c| i64::from(c[j])).collect();
                B::from_host(&HostTensor::i64([counters.len()], values).unwrap(), device).unwrap()
            };
            let words = philox4x32_10_tensors::<B>([word(0), word(1), word(2), word(3)], key).unwrap();
            let got: Vec<Vec<f64>> = words.iter().map(download::<B>).collect();
            for (i, c) in counters.iter().enumerate() {
                let want = philox4x32_10(*c, key);
                for j in 0..4 {
                    assert_eq!(got[j][i], f64::from(want[j]), "counter {c:x?} key {key:x?} word {j}");
                }
            }
        }
        assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
    }
}

both_backends! {
    fn every_philox_restart_is_the_draw_for_its_copy_and_count<B>() {
        // 32 CartPoles under random actions for 400 steps, as tensor ops and (on the CPU) as
        // the host pass: building the copies takes draw 0 of each and the reset draw 1, and
        // every copy that ends starts again from its next draw, inside Gymnasium's ±0.05 box. Candle's
        // two paths give these numbers to the bit; libtorch's within 1e-6.
        let device = test_device::<B>();
        let (n, seed) = (32, 0x1_0000_0007u64);
        let (low, high) = CartPole::START_BOX;
        let host = CartPole::new(0);
        let spaces = || (host.state_space().clone(), host.action_space().clone());
        let fused_too = device == Device::Cpu;
        for fused in [false, true].into_iter().filter(|&f| !f || fused_too) {
            let dynamics = CartPoleDynamics::<B>::new(n, device).unwrap();
            let mut env = Batched::with_restarts(dynamics, n, device, seed, Restarts::Philox, spaces()).unwrap();
            env.set_fused(fused).unwrap();
            assert_eq!(env.fused(), fused);
            let exact = B::NAME == "candle";
            let check = |got: &[f64], copy: usize, k: u64, t: usize| {
                let want = expected_draw(seed, copy, k, &low, &high);
                for (g, w) in got.iter().zip(&want) {
                    let ok = if exact { g == w } else { (g - w).abs() <= 1e-6 };
                    assert!(ok, "fused {fused}, step {t}, copy {copy}, restart {k}: {got:?} vs {want:?}");
                    assert!((-0.05..0.05).contains(g), "{g} outside the start box");
                }
            };
            let obs = download::<B>(&env.reset().unwrap());
            for i in 0..n {
                check(&obs[i * 4..i * 4 + 4], i, 1, 0);
            }
            let mut restarts = vec![2u64; n];
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut ended_total = 0;
            for t in 1..=400 {
                let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..2)).collect();
                let step = env.step(&B::from_host(&HostTensor::i64([n], a).unwrap(), device).unwrap()).unwrap();
                let (obs, term, trunc) = (download::<B>(&step.observation), download::<B>(&step.terminated), download::<B>(&step.truncated));
                for i in 0..n {
                    if term[i] + trunc[i] > 0.0 {
                        check(&obs[i * 4..i * 4 + 4], i, restarts[i], t);
                        restarts[i] += 1;
                        ended_total += 1;
                    }
                }
            }
            // Random CartPole episodes last about 20 steps: hundreds of restarts, many
            // copies past their tenth.
            assert!(ended_total > 300, "{ended_total} restarts");
        }
    }
}

both_backends! {
    fn philox_restarts_survive_a_snapshot_and_a_pool_refuses_their_counts<B>() {
        // Acrobot (tensor ops everywhere) with Philox restarts, stepped 60 steps, snapshotted
        // and restored into fresh copies: the next 60 steps agree to the bit, restarts
        // included. The same counts given to copies with a restart pool are refused by name.
        let device = test_device::<B>();
        let n = 8;
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let draws: Vec<Vec<i64>> = (0..120).map(|_| (0..n).map(|_| rng.random_range(0..3)).collect()).collect();
        let act = |t: usize| B::from_host(&HostTensor::i64([n], draws[t].clone()).unwrap(), device).unwrap();
        let mut first = make_with::<B>("Acrobot-v1", n, 5, device, Restarts::Philox).unwrap();
        first.reset().unwrap();
        for t in 0..60 {
            first.step(&act(t)).unwrap();
        }
        let snapshot = first.snapshot().unwrap();
        assert!(snapshot.cursors.iter().any(|&c| c > 0), "no copy restarted: {:?}", snapshot.cursors);
        let mut fresh = make_with::<B>("Acrobot-v1", n, 5, device, Restarts::Philox).unwrap();
        fresh.reset().unwrap();
        fresh.restore(&snapshot).unwrap();
        for t in 60..120 {
            let (a, b) = (first.step(&act(t)).unwrap(), fresh.step(&act(t)).unwrap());
            assert_eq!(download::<B>(&a.observation), download::<B>(&b.observation), "step {t}");
            assert_eq!(download::<B>(&a.terminated), download::<B>(&b.terminated), "step {t}");
        }
        let (low, high) = Acrobot::START_BOX;
        assert_eq!(low.len(), 4);
        assert!(low.iter().zip(&high).all(|(l, h)| l < h));
        let mut pooled = rlgraph_tensor_envs::make::<B>("Acrobot-v1", n, 5, device).unwrap();
        pooled.reset().unwrap();
        let err = pooled.restore(&snapshot).unwrap_err().to_string();
        assert!(err.contains("Philox"), "{err}");
    }
}
