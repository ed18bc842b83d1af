//! MinAtar as tensor programs against the native games (`rlgraph-envs`, themselves checked
//! step for step against the `minatar` package): given the same draws, every copy plays the
//! native game's step, scores its reward, ends where it ends, and restarts as the native
//! `reset` starts, on both backends.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::spaces::Value;
use rlgraph_core::{test_device, HostTensor};
use rlgraph_envs::minatar::{Draws, MinAtar};
use rlgraph_envs::Env;
use rlgraph_tensor_envs::{make, philox4x32_10, unit_float, TENSOR_ENV_IDS};
use rlgraph_tests::both_backends;

fn download<B: Backend>(t: &B::Tensor) -> Vec<f64> {
    B::to_host(t).unwrap().data.to_f64()
}

/// Values before the game's in a row: the tick's halves and the sticky action.
const PREFIX: usize = 3;

/// Copy `copy`'s uniforms at `tick`, as the tensor games document them: four from the Philox
/// counter `(tick mod 2^32, copy, tick >> 32, 1)` under the seed's two words, then four from
/// each further last word up to `domains`.
fn uniforms(seed: u64, copy: usize, tick: u64, domains: u32) -> Vec<f32> {
    (1..=domains)
        .flat_map(|d| {
            philox4x32_10(
                [tick as u32, copy as u32, (tick >> 32) as u32, d],
                [seed as u32, (seed >> 32) as u32],
            )
        })
        .map(unit_float)
        .collect()
}

/// Given numbers for the native game, in the order it asks: `rand()` is the next uniform,
/// `randint(low, high)` is `low + floor(u * (high - low))` worked in f32, as the tensor games
/// turn a uniform into an integer.
struct Given(std::collections::VecDeque<f32>);

impl Draws for Given {
    fn rand(&mut self) -> f64 {
        f64::from(
            self.0
                .pop_front()
                .expect("the game asked for more numbers than the step drew"),
        )
    }

    fn randint(&mut self, low: i64, high: i64) -> i64 {
        let u = self
            .0
            .pop_front()
            .expect("the game asked for more numbers than the step drew");
        low + (u * (high - low) as f32).floor() as i64
    }
}

fn board(v: &Value) -> Vec<f64> {
    match v {
        Value::Uint8(a) => a.data().iter().map(|&b| f64::from(b)).collect(),
        other => panic!("a MinAtar board is uint8, got {other:?}"),
    }
}

/// How a game uses a copy's uniforms (`u` below): how many sets of four it draws, and which
/// it hands the native game's step (after the sticky draw, `u[0]`) and its reset.
struct Drawing {
    domains: u32,
    step: fn(&[f32]) -> Vec<f32>,
    reset: fn(&[f32]) -> Vec<f32>,
}

/// Breakout and Space Invaders draw nothing inside a step; Breakout's reset draws its side
/// from `u[1]`.
const BREAKOUT: Drawing = Drawing {
    domains: 1,
    step: |_| vec![],
    reset: |u| vec![u[1]],
};
const SPACE_INVADERS: Drawing = Drawing {
    domains: 1,
    step: |_| vec![],
    reset: |_| vec![],
};
/// Asterix's spawns draw the side, the kind and the free row from `u[1..4]`; its reset draws
/// nothing.
const ASTERIX: Drawing = Drawing {
    domains: 1,
    step: |u| u[1..4].to_vec(),
    reset: |_| vec![],
};
/// Freeway draws its cars (eight speeds, then eight directions) from `u[4..20]`, at a crossing
/// and at a reset alike.
const FREEWAY: Drawing = Drawing {
    domains: 5,
    step: |u| u[4..20].to_vec(),
    reset: |u| u[4..20].to_vec(),
};

/// Plays `n` tensor copies of `id` under random actions for `steps` steps against the native
/// game: before each step the row says the copy's tick, from which the host draws the copy's
/// uniforms and gives them to the native game, set to the row, for its step and, where the
/// episode ended, its reset. Returns (episodes ended, points scored).
fn plays_the_native_game<B: Backend>(id: &str, seed: u64, steps: usize, drawing: Drawing) -> (usize, f64) {
    let device = test_device::<B>();
    let n = 16;
    let mut env = make::<B>(id, n, seed, device).unwrap();
    // The tensor program itself: on the CPU the copies would otherwise step by the native
    // games (the host pass, held to this path by `tensor_minatar_host_pass.rs`).
    env.use_host_pass(false).unwrap();
    env.reset().unwrap();
    let mut native = MinAtar::new(id, 0).unwrap();
    let set: Vec<f64> = native.action_set().iter().map(|&a| a as f64).collect();
    let tag = native.state().unwrap()[0];
    let width = PREFIX + native.state().unwrap().len() - 2;
    let cells = 100 * B::shape(&env.reset().unwrap())[3];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut ends, mut score, mut sticky) = (0, 0.0, 0);
    for t in 0..steps {
        let before = env.snapshot().unwrap().state.data.to_f64();
        let a: Vec<i64> = (0..n).map(|_| rng.random_range(0..set.len() as i64)).collect();
        let step = env
            .step(&B::from_host(&HostTensor::i64([n], a.clone()).unwrap(), device).unwrap())
            .unwrap();
        let reached = download::<B>(&env.final_observation().unwrap());
        let (obs, reward) = (download::<B>(&step.observation), download::<B>(&step.reward));
        let (term, trunc) = (download::<B>(&step.terminated), download::<B>(&step.truncated));
        let after = env.snapshot().unwrap().state.data.to_f64();
        for i in 0..n {
            let at = format!("{id}, step {t}, copy {i}");
            let row = &before[i * width..(i + 1) * width];
            let tick = row[0] as u64 + ((row[1] as u64) << 24);
            let u = uniforms(seed, i, tick, drawing.domains);
            let mut state = vec![tag];
            state.extend(&row[PREFIX - 1..]);
            native.set_state(&state).unwrap_or_else(|e| panic!("{at}: {e}"));
            let given = [vec![u[0]], (drawing.step)(&u)].concat();
            let s = native
                .step_drawing(&Value::i32(a[i] as i32), &mut Given(given.into()))
                .unwrap();
            let played = native.state().unwrap()[1];
            sticky += usize::from(played != set[a[i] as usize]);
            assert_eq!(reward[i], s.reward, "{at}: reward");
            assert_eq!(term[i] == 1.0, s.terminated, "{at}: terminated");
            assert_eq!(trunc[i], 0.0, "{at}: MinAtar has no time limit");
            assert_eq!(
                reached[i * cells..(i + 1) * cells],
                board(&s.observation),
                "{at}: board reached"
            );
            let next = &after[i * width..(i + 1) * width];
            assert_eq!(
                next[..PREFIX],
                [((tick + 1) % (1 << 24)) as f64, ((tick + 1) >> 24) as f64, played],
                "{at}"
            );
            if s.terminated {
                native.reset_drawing(&mut Given((drawing.reset)(&u).into()));
                ends += 1;
            }
            assert_eq!(next[PREFIX..], native.state().unwrap()[2..], "{at}: state");
            assert_eq!(obs[i * cells..(i + 1) * cells], board(&native.board()), "{at}: board");
            score += s.reward;
        }
    }
    // About one step in ten repeats the previous action (less where it was the same).
    let rate = sticky as f64 / (steps * n) as f64;
    assert!(
        rate > 0.03 && rate < 0.1,
        "{id}: {rate} of the steps changed by stickiness"
    );
    (ends, score)
}

both_backends! {
    fn tensor_breakout_plays_the_native_game_given_the_same_draws<B>() {
        // Random play loses a ball every few dozen steps and hits some bricks first.
        for (id, seed, steps) in [("MinAtar/Breakout-v1", 7u64, 2500), ("MinAtar/Breakout-v0", (1u64 << 33) | 5, 800)] {
            let (ends, score) = plays_the_native_game::<B>(id, seed, steps, BREAKOUT);
            assert!(ends > 100 && score > 50.0, "{id}: {ends} episodes ended, {score} scored");
        }
    }
}

both_backends! {
    fn tensor_space_invaders_plays_the_native_game_given_the_same_draws<B>() {
        // Random play shoots aliens for a few hundred steps before a bullet or the wave
        // reaches the cannon; 3,000 steps of 16 copies clear waves and speed the aliens up.
        for (id, seed, steps) in [("MinAtar/SpaceInvaders-v1", 11u64, 3000), ("MinAtar/SpaceInvaders-v0", 12, 800)] {
            let (ends, score) = plays_the_native_game::<B>(id, seed, steps, SPACE_INVADERS);
            assert!(ends > 20 && score > 500.0, "{id}: {ends} episodes ended, {score} scored");
        }
    }
}

both_backends! {
    fn tensor_asterix_plays_the_native_game_given_the_same_draws<B>() {
        // Random play meets an enemy within a few dozen steps and takes some gold first; the
        // longer episodes of 3,000 steps of 16 copies ramp the speeds up (a test without the
        // spawn's ramp fails).
        for (id, seed, steps) in [("MinAtar/Asterix-v1", 31u64, 3000), ("MinAtar/Asterix-v0", 32, 800)] {
            let (ends, score) = plays_the_native_game::<B>(id, seed, steps, ASTERIX);
            assert!(ends > 100 && score > 50.0, "{id}: {ends} episodes ended, {score} scored");
        }
    }
}

both_backends! {
    fn tensor_freeway_plays_the_native_game_given_the_same_draws<B>() {
        // Random play seldom crosses (a dozen times in 5,200 steps of 16 copies; each crossing
        // draws new cars), and every episode ends on its 2,501st step: 32 of them here.
        for (id, seed, steps) in [("MinAtar/Freeway-v1", 21u64, 5200), ("MinAtar/Freeway-v0", 22, 600)] {
            let (ends, score) = plays_the_native_game::<B>(id, seed, steps, FREEWAY);
            assert!(score >= 5.0 || steps < 2501, "{id}: {score} scored");
            if steps > 2501 {
                assert_eq!(ends, 32, "{id}");
            }
        }
    }
}

both_backends! {
    fn tensor_breakout_resumes_from_a_snapshot_and_refuses_another_game<B>() {
        // The draw counters live in the rows, so restored copies play the same 200 steps
        // (restarts included) as the copies they were saved from; a CartPole snapshot does
        // not fit, and an unknown game is refused with the known ids.
        let device = test_device::<B>();
        let n = 8;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let draws: Vec<Vec<i64>> = (0..400).map(|_| (0..n).map(|_| rng.random_range(0..3)).collect()).collect();
        let act = |t: usize| B::from_host(&HostTensor::i64([n], draws[t].clone()).unwrap(), device).unwrap();
        let mut first = make::<B>("MinAtar/Breakout-v1", n, 3, device).unwrap();
        first.reset().unwrap();
        for t in 0..200 {
            first.step(&act(t)).unwrap();
        }
        let saved = first.snapshot().unwrap();
        let mut fresh = make::<B>("MinAtar/Breakout-v1", n, 3, device).unwrap();
        fresh.restore(&saved).unwrap();
        let mut ended = 0.0;
        for t in 200..400 {
            let (a, b) = (first.step(&act(t)).unwrap(), fresh.step(&act(t)).unwrap());
            assert_eq!(download::<B>(&a.observation), download::<B>(&b.observation), "step {t}");
            assert_eq!(download::<B>(&a.reward), download::<B>(&b.reward), "step {t}");
            ended += download::<B>(&a.terminated).iter().sum::<f64>();
        }
        assert!(ended > 0.0, "no copy restarted in the compared steps");
        let mut cartpole = make::<B>("CartPole-v1", n, 3, device).unwrap();
        let e = fresh.restore(&cartpole.snapshot().unwrap()).unwrap_err().to_string();
        assert!(e.contains("MinAtar/Breakout-v1") && e.contains("[8, 111]"), "{e}");
        let e = make::<B>("MinAtar/Pong-v1", n, 3, device).err().unwrap().to_string();
        assert!(e.contains("MinAtar/Pong-v1") && e.contains("MinAtar/Breakout-v1"), "{e}");
        // Every tensor game listed among the tensor ids is made, with its native spaces.
        let games: Vec<_> = TENSOR_ENV_IDS.iter().filter(|id| id.starts_with("MinAtar/")).collect();
        assert_eq!(games.len(), 8, "{games:?}");
        for id in games {
            let envs = make::<B>(id, 2, 0, device).unwrap();
            let native = MinAtar::new(id, 0).unwrap();
            assert_eq!((envs.state_space(), envs.action_space()), (native.state_space(), native.action_space()), "{id}");
        }
    }
}
