//! Device-resident environments against the host environments: from the same states and
//! actions, every copy's observation and reward agree to 1e-5 (relative above 1) and its
//! terminated and truncated flags are identical, on candle and on tch; where an episode
//! ended, the copies' final observation is the host's last one.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::spaces::{Array, Value};
use rlgraph_core::{test_device, Backend, DType, HostTensor, Result};
use rlgraph_envs::{CartPole, Env};
use rlgraph_tensor_envs::{make, ResetStream, TensorEnv};
use rlgraph_tests::both_backends;

const TOLERANCE: f64 = 1e-5;

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= TOLERANCE * want.abs().max(1.0)
}

fn download<B: Backend>(t: &B::Tensor) -> Vec<f64> {
    B::to_host(t).unwrap().data.to_f64()
}

/// The host value as flat f64s.
fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::Float32(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Int32(a) => a.data().iter().map(|&x| x as f64).collect(),
        Value::Uint8(a) => a.data().iter().map(|&x| x as f64).collect(),
        other => panic!("unexpected observation {other:?}"),
    }
}

/// Runs `n` host copies of `id` under random actions for `steps` steps; before each step the
/// tensor copies are set to the host states and step counts, then both step with the same
/// actions and every output is compared. Returns how many (terminations, truncations) the
/// host saw, so a test can insist that both were exercised.
/// `actions` is the number of discrete actions, or 0 for Pendulum's torque.
fn lockstep<B: Backend>(id: &str, n: usize, steps: usize, actions: i64) -> (usize, usize) {
    let device = test_device::<B>();
    let mut hosts: Vec<Box<dyn Env>> = (0..n).map(|i| rlgraph_envs::make(id, i as u64).unwrap()).collect();
    for h in &mut hosts {
        h.reset(None).unwrap();
    }
    let width = hosts[0].state().unwrap().len();
    let mut envs = make::<B>(id, n, 3, device).unwrap();
    let mut elapsed = vec![0usize; n];
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut terminations, mut truncations) = (0, 0);
    for t in 0..steps {
        let states: Vec<f32> = hosts
            .iter()
            .flat_map(|h| h.state().unwrap())
            .map(|x| x as f32)
            .collect();
        envs.set_state(&HostTensor::f32([n, width], states).unwrap(), &elapsed)
            .unwrap();
        let (host_actions, tensor_actions) = if actions == 0 {
            let u: Vec<f32> = (0..n).map(|_| rng.random_range(-2.5f32..2.5)).collect();
            let values = u
                .iter()
                .map(|&x| Value::Float32(Array::new([1], vec![x]).unwrap()))
                .collect::<Vec<_>>();
            (
                values,
                B::from_host(&HostTensor::f32([n, 1], u).unwrap(), device).unwrap(),
            )
        } else {
            let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..actions)).collect();
            let values = a.iter().map(|&x| Value::i32(x as i32)).collect::<Vec<_>>();
            (values, B::from_host(&HostTensor::i64([n], a).unwrap(), device).unwrap())
        };
        let step = envs.step(&tensor_actions).unwrap();
        let obs = download::<B>(&step.observation);
        let reward = download::<B>(&step.reward);
        let terminated = download::<B>(&step.terminated);
        let truncated = download::<B>(&step.truncated);
        let finals = download::<B>(&envs.final_observation().unwrap());
        let w = obs.len() / n;
        for i in 0..n {
            let h = hosts[i].step(&host_actions[i]).unwrap();
            let at = format!("{id} ({}) step {t} copy {i}", B::NAME);
            assert_eq!(terminated[i] == 1.0, h.terminated, "{at}: terminated");
            assert_eq!(truncated[i] == 1.0, h.truncated, "{at}: truncated");
            assert!(
                close(reward[i], h.reward),
                "{at}: reward {} vs host {}",
                reward[i],
                h.reward
            );
            // Where the host's episode ended, its observation is the final one, which the
            // tensor copies replaced by a restart; elsewhere the two observations agree.
            for (j, want) in flat(&h.observation).into_iter().enumerate() {
                let got = finals[i * w + j];
                assert!(close(got, want), "{at}: final observation[{j}] {got} vs host {want}");
            }
            if h.terminated || h.truncated {
                terminations += h.terminated as usize;
                truncations += h.truncated as usize;
                hosts[i].reset(None).unwrap();
                elapsed[i] = 0;
            } else {
                for (j, want) in flat(&h.observation).into_iter().enumerate() {
                    let got = obs[i * w + j];
                    assert!(close(got, want), "{at}: observation[{j}] {got} vs host {want}");
                }
                elapsed[i] += 1;
            }
        }
    }
    (terminations, truncations)
}

/// One step from `n` states drawn across each variable's whole range (`ranges`), where
/// every term of the dynamics is large, compared with the host as in `lockstep`.
fn wide_states<B: Backend>(id: &str, ranges: &[(f64, f64)], actions: i64) {
    let (n, device) = (64, test_device::<B>());
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let states: Vec<Vec<f64>> = (0..n)
        .map(|_| ranges.iter().map(|&(lo, hi)| rng.random_range(lo..hi)).collect())
        .collect();
    let mut hosts: Vec<Box<dyn Env>> = (0..n).map(|i| rlgraph_envs::make(id, i as u64).unwrap()).collect();
    let mut envs = make::<B>(id, n, 0, device).unwrap();
    let flat_states: Vec<f32> = states.iter().flatten().map(|&x| x as f32).collect();
    envs.set_state(&HostTensor::f32([n, ranges.len()], flat_states).unwrap(), &vec![0; n])
        .unwrap();
    let (host_actions, tensor_actions): (Vec<Value>, B::Tensor) = if actions == 0 {
        let u: Vec<f32> = (0..n).map(|_| rng.random_range(-2.0f32..2.0)).collect();
        let values = u
            .iter()
            .map(|&x| Value::Float32(Array::new([1], vec![x]).unwrap()))
            .collect();
        (
            values,
            B::from_host(&HostTensor::f32([n, 1], u).unwrap(), device).unwrap(),
        )
    } else {
        let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..actions)).collect();
        let values = a.iter().map(|&x| Value::i32(x as i32)).collect();
        (values, B::from_host(&HostTensor::i64([n], a).unwrap(), device).unwrap())
    };
    let step = envs.step(&tensor_actions).unwrap();
    let (obs, reward) = (download::<B>(&step.observation), download::<B>(&step.reward));
    let terminated = download::<B>(&step.terminated);
    let w = obs.len() / n;
    for i in 0..n {
        // The host starts from the f32-rounded state, as the tensor copy does.
        let rounded: Vec<f64> = states[i].iter().map(|&x| x as f32 as f64).collect();
        hosts[i].set_state(&rounded).unwrap();
        let h = hosts[i].step(&host_actions[i]).unwrap();
        let at = format!("{id} ({}) from {:?}", B::NAME, states[i]);
        assert_eq!(terminated[i] == 1.0, h.terminated, "{at}: terminated");
        assert!(
            close(reward[i], h.reward),
            "{at}: reward {} vs host {}",
            reward[i],
            h.reward
        );
        if !h.terminated {
            for (j, want) in flat(&h.observation).into_iter().enumerate() {
                assert!(
                    close(obs[i * w + j], want),
                    "{at}: observation[{j}] {} vs host {want}",
                    obs[i * w + j]
                );
            }
        }
    }
}

both_backends! {
    fn every_term_matters_from_wide_states<B>() {
        use std::f64::consts::PI;
        wide_states::<B>("CartPole-v1", &[(-2.4, 2.4), (-3.0, 3.0), (-0.2, 0.2), (-3.0, 3.0)], 2);
        wide_states::<B>("MountainCar-v0", &[(-1.2, 0.6), (-0.07, 0.07)], 3);
        wide_states::<B>("Acrobot-v1", &[(-PI, PI), (-PI, PI), (-4.0 * PI, 4.0 * PI), (-9.0 * PI, 9.0 * PI)], 3);
        wide_states::<B>("Pendulum-v1", &[(-3.0 * PI, 3.0 * PI), (-8.0, 8.0)], 0);
    }
}

both_backends! {
    fn cartpole_matches_host<B>() {
        let (terminations, _) = lockstep::<B>("CartPole-v1", 16, 120, 2);
        assert!(terminations > 16, "random pushes topple poles: {terminations}");
    }

    fn mountain_car_matches_host<B>() {
        let (_, truncations) = lockstep::<B>("MountainCar-v0", 8, 210, 3);
        assert_eq!(truncations, 8, "every copy hits the 200-step limit once");
    }

    fn acrobot_matches_host<B>() {
        let (_, truncations) = lockstep::<B>("Acrobot-v1", 8, 520, 3);
        assert!(truncations > 0, "some copy swings for 500 steps");
    }

    fn pendulum_matches_host<B>() {
        let (terminations, truncations) = lockstep::<B>("Pendulum-v1", 8, 210, 0);
        assert_eq!((terminations, truncations), (0, 8), "only the time limit ends a pendulum episode");
    }

    fn grid_worlds_match_host<B>() {
        // The grid world is exact integer dynamics, so both run freely from the start field
        // (no re-syncing), ftjb and orientation included, through holes, fire and goals.
        for id in ["GridWorld-2x2", "GridWorld-4x4-xy", "GridWorld-8x16-ftjb-xy+orientation", "GridWorld-4x4-camera"] {
            let n = 6;
            let device = test_device::<B>();
            let mut hosts: Vec<Box<dyn Env>> = (0..n).map(|_| rlgraph_envs::make(id, 0).unwrap()).collect();
            let first: Vec<Vec<f64>> = hosts.iter_mut().map(|h| flat(&h.reset(None).unwrap())).collect();
            let mut envs = make::<B>(id, n, 0, device).unwrap();
            let obs = download::<B>(&envs.reset().unwrap());
            assert_eq!(obs, first.concat(), "{id}: start observations");
            let k = if id.contains("ftjb") { 18 } else { 4 };
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            let mut ends = 0;
            for t in 0..200 {
                let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..k)).collect();
                let step = envs.step(&B::from_host(&HostTensor::i64([n], a.clone()).unwrap(), device).unwrap()).unwrap();
                let obs = download::<B>(&step.observation);
                let (reward, terminated) = (download::<B>(&step.reward), download::<B>(&step.terminated));
                let w = obs.len() / n;
                for i in 0..n {
                    let h = hosts[i].step(&Value::i32(a[i] as i32)).unwrap();
                    let at = format!("{id} ({}) step {t} copy {i}", B::NAME);
                    assert_eq!(terminated[i] == 1.0, h.terminated, "{at}: terminated");
                    assert!(close(reward[i], h.reward), "{at}: reward");
                    let want = if h.terminated { ends += 1; flat(&hosts[i].reset(None).unwrap()) } else { flat(&h.observation) };
                    assert_eq!(&obs[i * w..(i + 1) * w], &want[..], "{at}: observation");
                }
            }
            assert!(ends > 0, "{id}: some episode ends");
        }
    }

    fn cartpole_from_rest_by_hand<B>() {
        // The host test's hand-worked step: force 10 from rest gives x_acc = 4400/451 and
        // theta_acc = -600/41, so after one Euler step x_dot = 0.02 x_acc, theta_dot = 0.02 theta_acc.
        let device = test_device::<B>();
        let mut envs = make::<B>("CartPole-v1", 2, 0, device).unwrap();
        envs.set_state(&HostTensor::f32([2, 4], vec![0.0; 8]).unwrap(), &[0, 0]).unwrap();
        let step = envs.step(&B::from_host(&HostTensor::i64([2], vec![1, 0]).unwrap(), device).unwrap()).unwrap();
        let obs = download::<B>(&step.observation);
        let (x_acc, theta_acc) = (4400.0 / 451.0, -600.0 / 41.0);
        let want = [0.0, 0.02 * x_acc, 0.0, 0.02 * theta_acc, 0.0, -0.02 * x_acc, 0.0, -0.02 * theta_acc];
        for (g, w) in obs.iter().zip(want) {
            assert!(close(*g, w), "{obs:?} vs {want:?}");
        }
    }

    fn time_limit_truncates_and_restarts<B>() {
        // A balanced pole at step 499 survives its 500th step: truncated, not terminated; it
        // restarts inside the step from its next streamed start state.
        let device = test_device::<B>();
        let mut envs = make::<B>("CartPole-v1", 3, 9, device).unwrap();
        envs.set_state(&HostTensor::f32([3, 4], vec![0.0; 12]).unwrap(), &[499, 10, 499]).unwrap();
        let step = envs.step(&B::from_host(&HostTensor::i64([3], vec![1, 1, 0]).unwrap(), device).unwrap()).unwrap();
        assert_eq!(download::<B>(&step.truncated), vec![1.0, 0.0, 1.0]);
        assert_eq!(download::<B>(&step.terminated), vec![0.0, 0.0, 0.0]);
        // Copy i's second start state is row n + i of the stream drawn from seed 9.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let rows: Vec<[f64; 4]> = (0..6).map(|_| CartPole::start_state(&mut rng)).collect();
        let obs = download::<B>(&step.observation);
        for i in [0, 2] {
            for j in 0..4 {
                assert!(close(obs[i * 4 + j], rows[3 + i][j]), "copy {i}: {obs:?} vs {:?}", rows[3 + i]);
            }
        }
        assert!((obs[5] - 0.02 * 4400.0 / 451.0).abs() < 1e-5, "copy 1 stepped on");
    }

    fn reset_stream_cycles_in_order<B>() {
        // Two copies, depth 2: copy i takes rows i, 2 + i, then i again.
        let device = test_device::<B>();
        let mut stream = ResetStream::<B>::new(2, 2, 1, DType::F32, device, 0, {
            let mut k = 0.0;
            move |_| { k += 1.0; vec![k] }
        }).unwrap();
        let only_first = B::from_host(&HostTensor::u8([2], vec![1, 0]).unwrap(), device).unwrap();
        assert_eq!(download::<B>(&stream.next_all().unwrap()), vec![1.0, 2.0]);
        assert_eq!(download::<B>(&stream.next(&only_first).unwrap()), vec![3.0, 4.0]);
        assert_eq!(download::<B>(&stream.next(&only_first).unwrap()), vec![1.0, 4.0]);
    }

    fn bad_actions_are_named_errors<B>() {
        let device = test_device::<B>();
        let mut envs = make::<B>("CartPole-v1", 4, 0, device).unwrap();
        let wrong = B::full(&[3], 0.0, DType::I64, device).unwrap();
        let e = match envs.step(&wrong) {
            Ok(_) => panic!("a shape mismatch is an error"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("CartPole-v1") && e.contains("[4]") && e.contains("[3]"), "{e}");
        let e = match make::<B>("Nope-v0", 4, 0, device) {
            Ok(_) => panic!("an unknown id is an error"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("CartPole-v1"), "lists the known ids: {e}");
        assert!(make::<B>("CartPole-v1", 0, 0, device).is_err(), "zero copies");
        assert!(make::<B>("GridWorld-2x2-ftj", 2, 0, device).is_err(), "dict actions need ftjb");
    }

    fn same_seed_same_run<B>() {
        let run = || -> Result<Vec<f64>> {
            let device = test_device::<B>();
            let mut envs = make::<B>("CartPole-v1", 64, 21, device)?;
            envs.reset()?;
            let mut rng = ChaCha8Rng::seed_from_u64(2);
            let mut last = vec![];
            for _ in 0..100 {
                let a: Vec<i64> = (0..64).map(|_| rng.random_range(0..2)).collect();
                let step = envs.step(&B::from_host(&HostTensor::i64([64], a)?, device)?)?;
                last = download::<B>(&step.observation);
            }
            Ok(last)
        };
        assert_eq!(run().unwrap(), run().unwrap());
    }
}

#[test]
fn backends_give_the_same_run() {
    fn run<B: Backend>() -> Vec<f64> {
        let device = test_device::<B>();
        let mut envs = make::<B>("Acrobot-v1", 32, 4, device).unwrap();
        envs.reset().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut sum = vec![0.0; 32];
        for _ in 0..50 {
            let a: Vec<i64> = (0..32).map(|_| rng.random_range(0..3)).collect();
            let step = envs
                .step(&B::from_host(&HostTensor::i64([32], a).unwrap(), device).unwrap())
                .unwrap();
            for (s, r) in sum.iter_mut().zip(download::<B>(&step.observation)) {
                *s += r;
            }
        }
        sum
    }
    let (c, t) = (run::<rlgraph_tests::Candle>(), run::<rlgraph_tests::Tch>());
    for (a, b) in c.iter().zip(&t) {
        assert!((a - b).abs() < 1e-3, "candle {a} vs tch {b}");
    }
}

both_backends! {
    fn the_fused_cpu_step_equals_the_tensor_ops<B>() {
        // CartPole on the CPU runs as one host pass by default; the same copies stepped by the
        // tensor ops give the same observations, rewards, flags and restarts (a shallow
        // restart stream, so pooled start states cycle), across a reset and a set_state near
        // the time limit. On candle to the bit over 1,000 steps (the pass repeats candle's f32
        // ops in order); on libtorch, whose sin and cos differ in the last bits, within 1e-4
        // over 150 steps (CartPole grows such differences over long episodes).
        let device = test_device::<B>();
        if device != rlgraph_core::Device::Cpu {
            return;
        }
        let host = rlgraph_envs::make("CartPole-v1", 0).unwrap();
        let spaces = || (host.state_space().clone(), host.action_space().clone());
        let n = 64;
        let build = |fused: bool| {
            let dynamics = rlgraph_tensor_envs::CartPoleDynamics::<B>::new(n, device).unwrap();
            let mut env = rlgraph_tensor_envs::Batched::new(dynamics, n, device, 13, 4, spaces()).unwrap();
            env.set_fused(fused).unwrap();
            env
        };
        let (mut fused, mut ops) = (build(true), build(false));
        assert!(fused.fused() && !ops.fused());
        let exact = B::NAME == "candle";
        let same = |a: &B::Tensor, b: &B::Tensor, what: &str, t: usize| {
            let (a, b) = (download::<B>(a), download::<B>(b));
            let ok = a.iter().zip(&b).all(|(x, y)| if exact { x.to_bits() == y.to_bits() } else { (x - y).abs() <= 1e-4 * y.abs().max(1.0) });
            assert!(ok && a.len() == b.len(), "{what} at step {t}: {a:?} vs {b:?}");
        };
        same(&fused.reset().unwrap(), &ops.reset().unwrap(), "reset", 0);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut ended = 0.0;
        for t in 1..=(if exact { 1000 } else { 150 }) {
            if t == 50 {
                same(&fused.reset().unwrap(), &ops.reset().unwrap(), "reset", t);
            }
            if t == 100 {
                let state = HostTensor::f32([n, 4], (0..n * 4).map(|i| (i % 7) as f32 * 0.01).collect()).unwrap();
                let steps: Vec<usize> = (0..n).map(|i| 490 + i % 10).collect();
                same(&fused.set_state(&state, &steps).unwrap(), &ops.set_state(&state, &steps).unwrap(), "set_state", t);
            }
            let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..2)).collect();
            let actions = B::from_host(&HostTensor::i64([n], a).unwrap(), device).unwrap();
            let (x, y) = (fused.step(&actions).unwrap(), ops.step(&actions).unwrap());
            same(&x.observation, &y.observation, "observation", t);
            same(&x.reward, &y.reward, "reward", t);
            same(&x.terminated, &y.terminated, "terminated", t);
            same(&x.truncated, &y.truncated, "truncated", t);
            same(&fused.final_observation().unwrap(), &ops.final_observation().unwrap(), "final observation", t);
            ended += download::<B>(&y.terminated).iter().sum::<f64>() + download::<B>(&y.truncated).iter().sum::<f64>();
        }
        // Hundreds of restarts (random CartPole episodes last about 20 steps), among them the
        // time-limit cuts after set_state's counts of 490 to 499.
        assert!(ended > 300.0, "{ended} episodes ended");
    }
}

both_backends! {
    fn a_snapshot_restored_into_fresh_copies_continues_them_exactly<B>() {
        // Copies stepped 40 steps under random actions, snapshotted, then stepped 40 more; new
        // copies of the same id, count and seed, restored from the snapshot, give the same 40
        // steps to the bit, restarts from the start-state stream included. CartPole runs the
        // fused host pass on the CPU, Acrobot the tensor ops.
        let device = test_device::<B>();
        for (id, actions) in [("CartPole-v1", 2), ("Acrobot-v1", 3)] {
            let n = 16;
            let mut rng = ChaCha8Rng::seed_from_u64(21);
            let draws: Vec<Vec<i64>> = (0..80).map(|_| (0..n).map(|_| rng.random_range(0..actions)).collect()).collect();
            let act = |t: usize| B::from_host(&HostTensor::i64([n], draws[t].clone()).unwrap(), device).unwrap();
            let mut first = make::<B>(id, n, 3, device).unwrap();
            let mut seen = download::<B>(&first.reset().unwrap());
            for t in 0..40 {
                seen = download::<B>(&first.step(&act(t)).unwrap().observation);
            }
            let snapshot = first.snapshot().unwrap();
            let mut fresh = make::<B>(id, n, 3, device).unwrap();
            fresh.reset().unwrap();
            let restored = fresh.restore(&snapshot).unwrap();
            assert_eq!(download::<B>(&restored), seen, "{id}: the restored copies observe what the first ones did");
            let mut ended = 0.0;
            for t in 40..80 {
                let (a, b) = (first.step(&act(t)).unwrap(), fresh.step(&act(t)).unwrap());
                for (x, y, what) in [
                    (&a.observation, &b.observation, "observation"),
                    (&a.reward, &b.reward, "reward"),
                    (&a.terminated, &b.terminated, "terminated"),
                    (&a.truncated, &b.truncated, "truncated"),
                ] {
                    let (x, y) = (download::<B>(x), download::<B>(y));
                    assert!(x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()), "{id} {what} at step {t}: {x:?} vs {y:?}");
                }
                ended += download::<B>(&a.terminated).iter().sum::<f64>();
            }
            if id == "CartPole-v1" {
                assert!(ended > 0.0, "random pushes topple some poles after the restore");
            }
            // A snapshot of other copies is refused by name and changes nothing.
            let mut wrong = snapshot.clone();
            wrong.cursors[1] = wrong.cursors[0];
            let err = fresh.restore(&wrong).unwrap_err().to_string();
            assert!(err.contains(id) && err.contains("copy 1's cursor"), "{err}");
            let mut short = snapshot.clone();
            short.elapsed.pop();
            let err = fresh.restore(&short).unwrap_err().to_string();
            assert!(err.contains("step counts"), "{err}");
        }
    }
}

#[test]
fn recording_or_compiling_a_step_on_the_cpu_is_refused_by_name() {
    use rlgraph_core::{Device, RuntimeKernels};
    use rlgraph_tensor_envs::{default_depth, Batched, Captured, CartPoleDynamics, OneKernel};
    use rlgraph_tests::Tch;
    let n = 8;
    let copies = || {
        let spaces = (
            CartPole::new(0).state_space().clone(),
            CartPole::new(0).action_space().clone(),
        );
        Batched::new(
            CartPoleDynamics::<Tch>::new(n, Device::Cpu).unwrap(),
            n,
            Device::Cpu,
            0,
            default_depth(n),
            spaces,
        )
        .unwrap()
    };
    let actions = Tch::full(&[n], 1.0, DType::I64, Device::Cpu).unwrap();
    let refusals = [
        Captured::new(copies(), &actions).err().map(|e| e.to_string()),
        OneKernel::new(copies()).err().map(|e| e.to_string()),
        // The capabilities themselves say the same.
        rlgraph_core::capture::<Tch, _>(Device::Cpu, || Ok(()))
            .err()
            .map(|e| e.to_string()),
        Tch::compile(Device::Cpu, "", "k").err().map(|e| e.to_string()),
    ];
    for (i, message) in refusals.into_iter().enumerate() {
        let message = message.unwrap_or_else(|| panic!("case {i} was not refused"));
        assert!(message.contains("cpu is not a CUDA device"), "case {i}: {message}");
    }
}
