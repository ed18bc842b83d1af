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
use rlgraph_tensor_envs::{make, minatar_row, minatar_state, philox4x32_10, unit_float, TensorEnv, TENSOR_ENV_IDS};
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
/// it hands the native game's step (after the sticky draw, `u[0]`; the native state before
/// the step says which draws it makes) and its reset.
struct Drawing {
    domains: u32,
    step: fn(&[f32], &[f64]) -> Vec<f32>,
    reset: fn(&[f32]) -> Vec<f32>,
}

/// Breakout and Space Invaders draw nothing inside a step; Breakout's reset draws its side
/// from `u[1]`.
const BREAKOUT: Drawing = Drawing {
    domains: 1,
    step: |_, _| vec![],
    reset: |u| vec![u[1]],
};
const SPACE_INVADERS: Drawing = Drawing {
    domains: 1,
    step: |_, _| vec![],
    reset: |_| vec![],
};
/// Asterix's spawns draw the side, the kind and the free row from `u[1..4]`; its reset draws
/// nothing.
const ASTERIX: Drawing = Drawing {
    domains: 1,
    step: |u, _| u[1..4].to_vec(),
    reset: |_| vec![],
};
/// Freeway draws its cars (eight speeds, then eight directions) from `u[4..20]`, at a crossing
/// and at a reset alike.
const FREEWAY: Drawing = Drawing {
    domains: 5,
    step: |u, _| u[4..20].to_vec(),
    reset: |u| u[4..20].to_vec(),
};

/// Seaquest's enemy spawn (on its timer, the state's eighth value) draws the side, the kind
/// and the row from `u[1..4]`, then its diver spawn (on the ninth) the side and the row from
/// `u[4..6]`; its reset draws nothing.
const SEAQUEST: Drawing = Drawing {
    domains: 2,
    step: |u, state| {
        let mut given = vec![];
        if state[8] == 0.0 {
            given.extend(&u[1..4]);
        }
        if state[9] == 0.0 {
            given.extend(&u[4..6]);
        }
        given
    },
    reset: |_| vec![],
};

/// An action among `k` for a copy in native state `state`.
type Policy = fn(&[f64], usize, &mut ChaCha8Rng) -> i64;

/// Any action, uniformly.
const RANDOM: Policy = |_, k, rng| rng.random_range(0..k as i64);

/// Seaquest under random play seldom picks up a diver, and so never surfaces with one: half
/// the time this goes for the nearest diver, and surfaces with six aboard or with one or more
/// once the oxygen runs low.
const DIVING: Policy = |state, k, rng| {
    let (oxygen, aboard, x, y) = (state[2], state[3], state[4], state[5]);
    if rng.random_bool(0.5) {
        return rng.random_range(0..k as i64);
    }
    if aboard >= 6.0 || (aboard > 0.0 && oxygen < 60.0) {
        return 2;
    }
    // Past the 13 values and the four lists before them, the divers: x, y, heading, timer.
    let mut at = 15;
    for width in [3, 3, 4, 5] {
        at += 1 + width * state[at] as usize;
    }
    let divers = &state[at + 1..];
    match divers
        .chunks(4)
        .min_by_key(|d| ((d[0] - x).abs() + (d[1] - y).abs()) as i64)
    {
        Some(d) if d[1] > y => 4,
        Some(d) if d[1] < y => 2,
        Some(d) if d[0] < x => 1,
        Some(d) if d[0] > x => 3,
        _ => [0, 1, 3, 4, 5][rng.random_range(0..5)],
    }
};

/// Stays at the surface (no up or down), where nothing reaches the sub.
const SURFACED: Policy = |_, _, rng| [0, 1, 3, 5][rng.random_range(0..4)];

/// Seaquest's start with an enemy spawning every step, each moving every third: the most
/// enemies, bullets and shots in one step that the rules allow.
fn crowded(id: &str) -> Vec<f64> {
    let mut state = MinAtar::new(id, 0).unwrap().state().unwrap();
    // The spawn speed and timer, the move speed and the ramp index.
    for (at, v) in [(7, 1.0), (8, 0.0), (10, 2.0), (11, 40.0)] {
        state[at] = v;
    }
    state
}

/// Seaquest below the surface with two fish on one cell that a bullet is about to reach (the
/// first fish goes), and two subs on one cell about to move onto another bullet (the last sub
/// takes it): the bullets, the fish (x, y, heading, timer) and the subs (then the move and shot
/// timers) differ only in their clocks, so the state shows which went.
fn twins(id: &str) -> Vec<f64> {
    let state = MinAtar::new(id, 0).unwrap().state().unwrap();
    let game = [200.0, 1.0, 5.0, 5.0, 0.0, 20.0, 10.0, 20.0, 5.0, 0.0, 3.0, 0.0, 0.0];
    let bullets = [2.0, 3.0, 5.0, 0.0, 4.0, 6.0, 0.0, 0.0];
    let fish = [2.0, 2.0, 5.0, 1.0, 3.0, 2.0, 5.0, 1.0, 4.0];
    let subs = [2.0, 2.0, 6.0, 1.0, 0.0, 4.0, 2.0, 6.0, 1.0, 0.0, 6.0, 0.0];
    [&state[..2], &game, &bullets, &fish, &subs].concat()
}

/// What a run met: episodes ended, points scored, the largest and the smallest of each of the
/// first 15 values of the native states stepped to, and the longest such state.
#[derive(Debug)]
struct Met {
    ends: usize,
    score: f64,
    peaks: Vec<f64>,
    lows: Vec<f64>,
    longest: usize,
}

/// Plays `n` tensor copies of `id` under random actions for `steps` steps against the native
/// game: before each step the row says the copy's tick, from which the host draws the copy's
/// uniforms and gives them to the native game, set to the row, for its step and, where the
/// episode ended, its reset. Returns (episodes ended, points scored).
fn plays_the_native_game<B: Backend>(id: &str, seed: u64, steps: usize, drawing: Drawing) -> (usize, f64) {
    let met = plays_the_native_game_by::<B>(id, seed, steps, drawing, RANDOM, None);
    (met.ends, met.score)
}

/// [`plays_the_native_game`] with actions from `policy`, every copy set first to native state
/// `from` where given.
fn plays_the_native_game_by<B: Backend>(
    id: &str,
    seed: u64,
    steps: usize,
    drawing: Drawing,
    policy: Policy,
    from: Option<&[f64]>,
) -> Met {
    let device = test_device::<B>();
    let n = 16;
    let mut env = make::<B>(id, n, seed, device).unwrap();
    // The tensor program itself: on the CPU the copies would otherwise step by the native
    // games (the host pass, held to this path by `tensor_minatar_host_pass.rs`).
    env.use_host_pass(false).unwrap();
    env.reset().unwrap();
    let mut native = MinAtar::new(id, 0).unwrap();
    let set: Vec<f64> = native.action_set().iter().map(|&a| a as f64).collect();
    let cells = 100 * B::shape(&env.reset().unwrap())[3];
    if let Some(from) = from {
        let mut saved = env.snapshot().unwrap();
        let shape = saved.state.shape.clone();
        let rows: Vec<f32> = (0..n)
            .flat_map(|_| minatar_row(id, 0, from).unwrap())
            .map(|v| v as f32)
            .collect();
        saved.state = HostTensor::f32(shape, rows).unwrap();
        env.restore(&saved).unwrap();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut ends, mut score, mut sticky) = (0, 0.0, 0);
    let (mut peaks, mut lows, mut longest) = (vec![f64::MIN; 15], vec![f64::MAX; 15], 0);
    for t in 0..steps {
        let before = env.snapshot().unwrap().state.data.to_f64();
        let width = before.len() / n;
        let states: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                minatar_state(id, &before[i * width..(i + 1) * width])
                    .unwrap_or_else(|e| panic!("{id}, step {t}, copy {i}: {e}"))
            })
            .collect();
        let a: Vec<i64> = states.iter().map(|state| policy(state, set.len(), &mut rng)).collect();
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
            native.set_state(&states[i]).unwrap_or_else(|e| panic!("{at}: {e}"));
            let given = [vec![u[0]], (drawing.step)(&u, &states[i])].concat();
            let s = native
                .step_drawing(&Value::i32(a[i] as i32), &mut Given(given.into()))
                .unwrap();
            let reached_state = native.state().unwrap();
            for ((peak, low), v) in peaks.iter_mut().zip(&mut lows).zip(&reached_state) {
                (*peak, *low) = (peak.max(*v), low.min(*v));
            }
            longest = longest.max(reached_state.len());
            let played = reached_state[1];
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
            let expected = minatar_row(id, tick + 1, &native.state().unwrap()).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(next, expected, "{at}: state");
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
    Met {
        ends,
        score,
        peaks,
        lows,
        longest,
    }
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
    fn tensor_seaquest_plays_the_native_game_given_the_same_draws<B>() {
        let (id, seed) = ("MinAtar/Seaquest-v1", 41u64);
        // Random play ends an episode within a few dozen steps, mostly by coming up with no
        // diver aboard, and shoots some enemies on the way.
        let met = plays_the_native_game_by::<B>(id, seed, 1500, SEAQUEST, RANDOM, None);
        assert!(met.ends > 200 && met.score > 20.0, "{id}: {met:?}");
        // Going for the divers surfaces with them, six at a time too (their count, value 3,
        // then falls below 0), and the enemies speed up (the ramp index, value 11, passes 6,
        // where the move speed, value 10, is down to 2).
        let met = plays_the_native_game_by::<B>(id, seed + 1, 3000, SEAQUEST, DIVING, None);
        assert!(met.ends > 500 && met.score > 100.0, "{id}: {met:?}");
        assert!(met.lows[3] < 0.0 && met.peaks[11] > 6.0 && met.lows[10] == 2.0, "{id}: {met:?}");
        // From a crowded start, at the surface (where nothing reaches the sub), the lists fill
        // up and subs fire in the same step; diving from there meets the crowd.
        let from = crowded(id);
        let met = plays_the_native_game_by::<B>(id, seed + 2, 400, SEAQUEST, SURFACED, Some(&from));
        assert!(met.ends == 0 && met.longest > 120, "{id}: {met:?}");
        plays_the_native_game_by::<B>(id, seed + 4, 100, SEAQUEST, RANDOM, Some(&twins(id)));
        let id = "MinAtar/Seaquest-v0";
        let met = plays_the_native_game_by::<B>(id, seed + 3, 400, SEAQUEST, DIVING, Some(&crowded(id)));
        assert!(met.ends > 10, "{id}: {met:?}");
    }
}

/// `n` copies of `id` (seed 3) under `k` random actions from `seed`: plays 200 steps, saves,
/// restores the save into fresh copies, and holds both to the same boards and rewards over
/// the next 200 steps, some copy restarting among them; returns the restored copies.
fn resumes_from_a_snapshot<B: Backend>(id: &str, n: usize, k: i64, seed: u64) -> Box<dyn TensorEnv<B>> {
    let device = test_device::<B>();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let draws: Vec<Vec<i64>> = (0..400)
        .map(|_| (0..n).map(|_| rng.random_range(0..k)).collect())
        .collect();
    let act = |t: usize| B::from_host(&HostTensor::i64([n], draws[t].clone()).unwrap(), device).unwrap();
    let mut first = make::<B>(id, n, 3, device).unwrap();
    first.reset().unwrap();
    for t in 0..200 {
        first.step(&act(t)).unwrap();
    }
    let saved = first.snapshot().unwrap();
    let mut fresh = make::<B>(id, n, 3, device).unwrap();
    fresh.restore(&saved).unwrap();
    let mut ended = 0.0;
    for t in 200..400 {
        let (a, b) = (first.step(&act(t)).unwrap(), fresh.step(&act(t)).unwrap());
        assert_eq!(
            download::<B>(&a.observation),
            download::<B>(&b.observation),
            "{id}, step {t}"
        );
        assert_eq!(download::<B>(&a.reward), download::<B>(&b.reward), "{id}, step {t}");
        ended += download::<B>(&a.terminated).iter().sum::<f64>();
    }
    assert!(ended > 0.0, "{id}: no copy restarted in the compared steps");
    fresh
}

both_backends! {
    fn tensor_seaquest_resumes_from_a_snapshot_and_converts_rows_checked<B>() {
        // Restored copies play the same 200 steps as the copies they were saved from; a
        // Breakout snapshot does not fit; a row and its native state convert both ways, and a
        // list too long for its slots, a row with a gap in its slots or another game's state is
        // refused by name.
        let device = test_device::<B>();
        let (id, n, width) = ("MinAtar/Seaquest-v1", 8, 529);
        let mut fresh = resumes_from_a_snapshot::<B>(id, n, 6, 4);
        let mut breakout = make::<B>("MinAtar/Breakout-v1", n, 3, device).unwrap();
        let e = fresh.restore(&breakout.snapshot().unwrap()).unwrap_err().to_string();
        assert!(e.contains(id) && e.contains(&format!("[{n}, {width}]")), "{e}");

        let row = fresh.snapshot().unwrap().state.data.to_f64()[..width].to_vec();
        let tick = row[0] as u64 + ((row[1] as u64) << 24);
        let state = minatar_state(id, &row).unwrap();
        assert_eq!(minatar_row(id, tick, &state).unwrap(), row);
        let mut many = MinAtar::new(id, 0).unwrap().state().unwrap();
        // The start's fish (value 17, after the 15 values and two empty bullet lists): 34.
        many[17] = 34.0;
        many.splice(18..18, [1.0, 1.0, 1.0, 0.0].repeat(34));
        MinAtar::new(id, 0).unwrap().set_state(&many).unwrap();
        let e = minatar_row(id, 0, &many).unwrap_err().to_string();
        assert!(e.contains("34 fish") && e.contains("33 slots"), "{e}");
        // The friendly bullets' alive flags (the row's values 16 and 17): none, then one.
        let mut gap = row.clone();
        (gap[PREFIX + 13], gap[PREFIX + 14]) = (0.0, 1.0);
        let e = minatar_state(id, &gap).unwrap_err().to_string();
        assert!(e.contains("friendly bullets"), "{e}");
        let other = MinAtar::new("MinAtar/Breakout-v1", 0).unwrap().state().unwrap();
        let e = minatar_row(id, 0, &other).unwrap_err().to_string();
        assert!(e.contains(id) && e.contains("tag"), "{e}");
        let e = minatar_state("MinAtar/Pong-v1", &row).unwrap_err().to_string();
        assert!(e.contains("MinAtar/Pong-v1"), "{e}");
    }
}

both_backends! {
    fn tensor_breakout_resumes_from_a_snapshot_and_refuses_another_game<B>() {
        // The draw counters live in the rows, so restored copies play the same 200 steps
        // (restarts included) as the copies they were saved from; a CartPole snapshot does
        // not fit, and an unknown game is refused with the known ids.
        let device = test_device::<B>();
        let n = 8;
        let mut fresh = resumes_from_a_snapshot::<B>("MinAtar/Breakout-v1", n, 3, 2);
        let mut cartpole = make::<B>("CartPole-v1", n, 3, device).unwrap();
        let e = fresh.restore(&cartpole.snapshot().unwrap()).unwrap_err().to_string();
        assert!(e.contains("MinAtar/Breakout-v1") && e.contains("[8, 111]"), "{e}");
        let e = make::<B>("MinAtar/Pong-v1", n, 3, device).err().unwrap().to_string();
        assert!(e.contains("MinAtar/Pong-v1") && e.contains("MinAtar/Breakout-v1"), "{e}");
        // Every tensor game listed among the tensor ids is made, with its native spaces.
        let games: Vec<_> = TENSOR_ENV_IDS.iter().filter(|id| id.starts_with("MinAtar/")).collect();
        assert_eq!(games.len(), 10, "{games:?}");
        for id in games {
            let envs = make::<B>(id, 2, 0, device).unwrap();
            let native = MinAtar::new(id, 0).unwrap();
            assert_eq!((envs.state_space(), envs.action_space()), (native.state_space(), native.action_space()), "{id}");
        }
    }
}
