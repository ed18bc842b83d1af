//! The native MinAtar games against the `minatar` package itself, run through
//! `gymnasium.make(id)` as the package registers them: for every game, runs of 3,000 steps
//! from three seeds (one of them past 2^32, and one on the `-v0` id of all six actions) and
//! shorter runs from crafted states that reach the games' rarer rules (a wave or wall
//! cleared, every row taken, the hardest difficulty, six divers surfacing, the last steps).
//! Every observation, reward, termination, reset and the whole internal state equal the
//! package's at every step, across episode ends; halfway through each seeded run the
//! environment is swapped for a fresh one restored from a snapshot, which goes on equal.
//!
//! The actions come from the reference script: uniform at random, or with some probability
//! what a simple player of the game would do (so that the runs reach later stages of the
//! games), from a `RandomState` of their own. The script prints each step's board packed as
//! NumPy's `packbits` packs it, and the game's state in the layout `Env::state` gives.
//!
//! They need a Python with gymnasium and minatar (`scripts/install-gym.sh`); without one they
//! skip, unless `RLGRAPH_REQUIRE_GYM` is set (the README's test command sets it).

use rlgraph_envs::minatar::{MinAtar, MINATAR_IDS};
use rlgraph_envs::{make, Env, EnvError};
use rlgraph_spaces::Value;
use serde_json::Value as Json;

/// The Python with gymnasium and minatar, or `None` to skip.
fn python() -> Option<String> {
    let python = rlgraph_envs::gym::python_for_tests().unwrap_or_else(|e| panic!("{e}"))?;
    let found = std::process::Command::new(&python)
        .args(["-c", "import minatar.gym, gymnasium"])
        .output()
        .is_ok_and(|o| o.status.success());
    match found {
        true => Some(python),
        false if std::env::var_os("RLGRAPH_REQUIRE_GYM").is_some() => {
            panic!("RLGRAPH_REQUIRE_GYM is set but {python} cannot import minatar: run scripts/install-gym.sh")
        }
        false => {
            eprintln!("skipped: {python} cannot import minatar (run scripts/install-gym.sh)");
            None
        }
    }
}

/// The reference: `python - GAME STEPS CRAFTED_STEPS` prints one JSON line per run.
const REFERENCE: &str = r#"
import json, sys, warnings, logging
logging.disable(logging.WARNING)  # minatar warns that matplotlib and seaborn are missing
warnings.simplefilter("ignore")
import numpy as np, gymnasium as gym
gym.logger.min_level = 40         # gymnasium warns that the -v0 ids are out of date
from minatar.gym import register_envs
register_envs()                   # gymnasium 1.x no longer loads the package's entry point

NAMES = ["Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders"]
IDS = [f"MinAtar/{n}-v1" for n in NAMES] + [f"MinAtar/{n}-v0" for n in NAMES]

def encode(env_id, env):
    """The game's state as rlgraph's Env::state lays it out: the id's tag, the sticky
    action, then the game's fields and lists."""
    w = env.unwrapped.game
    g = w.env
    b = lambda v: int(bool(v))
    out = [1000 + IDS.index(env_id), w.last_action]
    if "Asterix" in env_id:
        out += [g.player_x, g.player_y]
        for e in g.entities:
            out += [1, e[0], b(e[2]), b(e[3])] if e is not None else [0, 0, 0, 0]
        out += [g.spawn_speed, g.spawn_timer, g.move_speed, g.move_timer, g.ramp_timer, g.ramp_index,
                b(g.terminal)]
    elif "Breakout" in env_id:
        out += [g.ball_x, g.ball_y, g.ball_dir, g.pos, b(g.strike), g.last_x, g.last_y, b(g.terminal)]
        out += [int(v) for v in g.brick_map.reshape(-1)]
    elif "Freeway" in env_id:
        out += [g.pos, g.move_timer, g.terminate_timer, b(g.terminal)]
        for c in g.cars:
            out += [c[0], c[2], c[3]]
    elif "Seaquest" in env_id:
        out += [g.oxygen, g.diver_count, g.sub_x, g.sub_y, b(g.sub_or), g.e_spawn_speed, g.e_spawn_timer,
                g.d_spawn_timer, g.move_speed, g.ramp_index, g.shot_timer, b(g.surface), b(g.terminal)]
        for bullets in (g.f_bullets, g.e_bullets):
            out += [len(bullets)] + [v for x in bullets for v in (x[0], x[1], b(x[2]))]
        out += [len(g.e_fish)] + [v for x in g.e_fish for v in (x[0], x[1], b(x[2]), x[3])]
        out += [len(g.e_subs)] + [v for x in g.e_subs for v in (x[0], x[1], b(x[2]), x[3], x[4])]
        out += [len(g.divers)] + [v for x in g.divers for v in (x[0], x[1], b(x[2]), x[3])]
    else:
        out += [g.pos, g.alien_dir, g.enemy_move_interval, g.alien_move_timer, g.alien_shot_timer,
                g.ramp_index, g.shot_timer, b(g.terminal)]
        for m in (g.f_bullet_map, g.e_bullet_map, g.alien_map):
            out += [int(v) for v in m.reshape(-1)]
    return [int(v) for v in out]

def wanted(game, g):
    """The action (of the six) a simple player would take, from the game's internals, or None."""
    if game == "Freeway":
        return 2
    if game == "Breakout":
        # Under where the ball comes down (or under the ball, while it rises).
        x, dx = g.ball_x, 1 if g.ball_dir in (1, 2) else -1
        if g.ball_dir in (2, 3):
            for _ in range(9 - g.ball_y):
                if 0 <= x + dx <= 9:
                    x += dx
                else:  # the ball stays at the wall for a step, turned
                    dx = -dx
        return 1 if x < g.pos else 3 if x > g.pos else 0
    if game == "SpaceInvaders":
        # Out from under a falling bullet, else fire, else under the nearest aliens.
        if g.e_bullet_map[5:, g.pos].any():
            return 1 if g.pos > 0 and not g.e_bullet_map[5:, g.pos - 1].any() else 3
        if g.shot_timer == 0:
            return 5
        cols = [x for x in range(10) if g.alien_map[:, x].any()]
        x = min(cols, key=lambda c: abs(c - g.pos))
        return 1 if x < g.pos else 3 if x > g.pos else 0
    if game == "Seaquest":
        # Surface with six divers or short of oxygen, else after the nearest diver, else fire.
        if g.diver_count >= 6 or (g.oxygen < 40 and g.diver_count > 0):
            return 2
        if g.sub_y == 0 and g.diver_count == 0:
            return 4
        if g.divers:
            d = min(g.divers, key=lambda d: abs(d[0] - g.sub_x) + abs(d[1] - g.sub_y))
            if d[1] != g.sub_y:
                return 2 if d[1] < g.sub_y else 4
            return 1 if d[0] < g.sub_x else 3
        return 5
    if game == "Asterix":
        # Out of the row of an enemy, else stay.
        near = [e for e in g.entities if e is not None and e[1] == g.player_y and not e[3]]
        return 2 if near and g.player_y > 1 else 4 if near else 0
    return None

def craft(name, g):
    """States the seeded runs seldom reach."""
    if name == "every row taken":
        g.entities = [[0 if i % 2 else 9, i + 1, i % 2 == 1, i % 3 == 0] for i in range(8)]
        g.spawn_timer = 0
    elif name == "hardest asterix":
        g.spawn_speed, g.spawn_timer, g.move_speed, g.move_timer = 1, 0, 1, 0
        g.ramp_index, g.ramp_timer = 9, -1
    elif name == "last brick":
        # The ball takes it next step; the wall comes back when the ball is next at the bottom.
        g.brick_map[:] = 0
        g.brick_map[3, 3] = 1
        g.ball_x, g.ball_y, g.ball_dir, g.last_x, g.last_y = 2, 4, 1, 1, 5
    elif name == "last steps":
        g.terminate_timer, g.pos, g.move_timer = 4, 1, 0
    elif name == "six divers":
        g.diver_count, g.sub_y, g.oxygen, g.surface = 6, 1, 150, False
    elif name == "hardest seaquest":
        g.e_spawn_speed, g.e_spawn_timer, g.move_speed, g.ramp_index = 1, 0, 2, 40
        g.diver_count, g.sub_y, g.surface = 3, 4, False
    elif name == "last alien":
        g.alien_map[:] = 0
        g.alien_map[3, 6] = 1
    elif name == "low aliens":
        g.alien_map[:] = 0
        g.alien_map[7:9, 0:6] = 1
        g.alien_move_timer, g.alien_dir = 0, -1
    elif name == "fastest aliens":
        g.enemy_move_interval, g.ramp_index = 6, 6

CRAFTED = {"Asterix": ["every row taken", "hardest asterix"], "Breakout": ["last brick"],
           "Freeway": ["last steps"], "Seaquest": ["six divers", "hardest seaquest"],
           "SpaceInvaders": ["last alien", "low aliens", "fastest aliens"]}

game, steps, crafted_steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# (version, seed, how often the run plays as `wanted` says rather than at random, crafted state)
runs = [("v1", 0, 0.98, None), ("v1", 123, 0.9, None), ("v0", 2**32 + 5, 0.6, None)]
runs += [("v1", 7 + i, 0.9, name) for i, name in enumerate(CRAFTED[game])]
for version, seed, guided, name in runs:
    env_id = f"MinAtar/{game}-{version}"
    env = gym.make(env_id)
    # NumPy takes a seed from 2**32 up only as an array of 32-bit words.
    obs, _ = env.reset(seed=seed if seed < 2**32 else [seed & 0xFFFFFFFF, seed >> 32])
    g = env.unwrapped.game.env
    action_set = env.unwrapped.action_set
    pack = lambda o: np.packbits(o.reshape(-1)).tobytes().hex()
    out = {"id": env_id, "seed": seed, "reset": pack(obs), "reset_state": encode(env_id, env), "actions": [],
           "steps": []}
    if name is not None:
        craft(name, g)
        out["crafted"], out["start"] = name, encode(env_id, env)
    rng = np.random.RandomState(seed % 1000 + 1)
    for t in range(steps if name is None else crafted_steps):
        a = int(rng.randint(len(action_set)))
        w = wanted(game, g)
        if rng.rand() < guided and w in action_set:
            a = action_set.index(w)
        out["actions"].append(a)
        obs, r, term, trunc, _ = env.step(a)
        step = [pack(obs), int(r), bool(term), bool(trunc), encode(env_id, env)]
        if term or trunc:
            step += [pack(env.reset()[0]), encode(env_id, env)]
        out["steps"].append(step)
    print(json.dumps(out))
"#;

const STEPS: usize = 3000;
const CRAFTED_STEPS: usize = 1000;

fn reference(python: &str, game: &str) -> Vec<Json> {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .args(["-", game, &STEPS.to_string(), &CRAFTED_STEPS.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    child.stdin.take().unwrap().write_all(REFERENCE.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("the reference is JSON lines"))
        .collect()
}

/// The board as `np.packbits(obs.reshape(-1)).tobytes().hex()`: eight cells a byte, the
/// first in the highest bit, the last byte padded with zeros.
fn packed(obs: &Value) -> String {
    let Value::Uint8(a) = obs else {
        panic!("expected a uint8 board, got {obs:?}")
    };
    assert!(a.data().iter().all(|&c| c <= 1), "cells are 0 or 1");
    a.data()
        .chunks(8)
        .map(|bits| {
            let byte = bits.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | (b << (7 - i)));
            format!("{byte:02x}")
        })
        .collect()
}

fn numbers(json: &Json) -> Vec<f64> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap() as f64)
        .collect()
}

/// Replays one reference run on the native game and compares every step.
fn check_run(run: &Json) {
    let id = run["id"].as_str().unwrap();
    let seed = run["seed"].as_u64().unwrap();
    let crafted = run.get("crafted").and_then(Json::as_str);
    let what = format!("{id} seed {seed} {}", crafted.unwrap_or(""));
    // `make(id, seed)` then an unseeded reset is the seeded reset of another copy.
    let mut env: Box<dyn Env> = match seed {
        0 => make(id, seed).unwrap(),
        _ => make(id, 999).unwrap(),
    };
    let first = env.reset(if seed == 0 { None } else { Some(seed) }).unwrap();
    assert!(env.state_space().contains(&first), "{what}");
    assert_eq!(
        packed(&first),
        run["reset"].as_str().unwrap(),
        "{what}: the first board"
    );
    assert_eq!(
        env.state().unwrap(),
        numbers(&run["reset_state"]),
        "{what}: the first state"
    );
    if let Some(start) = run.get("start") {
        env.set_state(&numbers(start)).unwrap();
        assert_eq!(
            env.state().unwrap(),
            numbers(start),
            "{what}: the crafted state reads back"
        );
    }
    let actions = run["actions"].as_array().unwrap();
    let steps = run["steps"].as_array().unwrap();
    let mut ends = 0;
    for (t, (action, expected)) in actions.iter().zip(steps).enumerate() {
        if t == STEPS / 2 {
            // A fresh copy restored from a snapshot goes on as the reference does.
            let snapshot = env.snapshot().unwrap();
            env = Box::new(MinAtar::new(id, 4242).unwrap());
            env.restore_snapshot(&snapshot).unwrap();
        }
        let step = env.step(&Value::i32(action.as_i64().unwrap() as i32)).unwrap();
        let at = format!("{what}: step {t}");
        assert_eq!(
            packed(&step.observation),
            expected[0].as_str().unwrap(),
            "{at}: the board"
        );
        assert_eq!(step.reward, expected[1].as_i64().unwrap() as f64, "{at}: the reward");
        assert_eq!(step.terminated, expected[2].as_bool().unwrap(), "{at}: terminated");
        assert_eq!(step.truncated, expected[3].as_bool().unwrap(), "{at}: truncated");
        assert_eq!(env.state().unwrap(), numbers(&expected[4]), "{at}: the state");
        if let Some(board) = expected.get(5) {
            ends += 1;
            let first = env.reset(None).unwrap();
            assert_eq!(
                packed(&first),
                board.as_str().unwrap(),
                "{at}: the next episode's board"
            );
            assert_eq!(
                env.state().unwrap(),
                numbers(&expected[6]),
                "{at}: the next episode's state"
            );
        }
    }
    assert_eq!(actions.len(), steps.len());
    if crafted.is_none() {
        assert_eq!(steps.len(), STEPS, "{what}");
        assert!(ends > 0, "{what}: the run crosses episode ends");
    }
}

fn check_game(game: &str) {
    let Some(python) = python() else { return };
    let runs = reference(&python, game);
    assert!(runs.len() >= 4, "{game}: {} runs", runs.len());
    for run in &runs {
        check_run(run);
    }
}

#[test]
fn asterix_equals_the_minatar_package_step_by_step() {
    check_game("Asterix");
}

#[test]
fn breakout_equals_the_minatar_package_step_by_step() {
    check_game("Breakout");
}

#[test]
fn freeway_equals_the_minatar_package_step_by_step() {
    check_game("Freeway");
}

#[test]
fn seaquest_equals_the_minatar_package_step_by_step() {
    check_game("Seaquest");
}

#[test]
fn space_invaders_equals_the_minatar_package_step_by_step() {
    check_game("SpaceInvaders");
}

#[test]
fn unknown_games_are_refused_naming_the_known_ones() {
    for make_it in [
        |id: &str| make(id, 0).map(|_| ()),
        |id: &str| MinAtar::new(id, 0).map(|_| ()),
    ] {
        let err = make_it("MinAtar/Pong-v1").unwrap_err();
        assert!(matches!(err, EnvError::Unknown { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("MinAtar/Pong-v1") && MINATAR_IDS.iter().all(|id| text.contains(id)),
            "{text}"
        );
    }
}

#[test]
fn actions_outside_the_action_set_are_refused() {
    let mut env = make("MinAtar/Breakout-v1", 0).unwrap();
    env.reset(Some(0)).unwrap();
    let before = env.snapshot().unwrap();
    for bad in [Value::i32(5), Value::i32(3), Value::i32(-1), Value::f32(1.0)] {
        let err = env.step(&bad).unwrap_err();
        assert!(matches!(err, EnvError::BadAction { .. }), "{err}");
    }
    assert_eq!(env.snapshot().unwrap(), before, "a refused action changes nothing");
    // Breakout-v0 takes all six.
    let mut v0 = make("MinAtar/Breakout-v0", 0).unwrap();
    v0.reset(Some(0)).unwrap();
    v0.step(&Value::i32(5)).unwrap();
    assert!(matches!(v0.step(&Value::i32(6)), Err(EnvError::BadAction { .. })));
}

#[test]
fn states_and_snapshots_of_another_game_are_refused_by_name() {
    let mut breakout = make("MinAtar/Breakout-v1", 0).unwrap();
    breakout.reset(Some(0)).unwrap();
    let mut asterix = make("MinAtar/Asterix-v1", 0).unwrap();
    asterix.reset(Some(0)).unwrap();
    let before = asterix.snapshot().unwrap();
    let err = asterix.restore_snapshot(&breakout.snapshot().unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("the snapshot is of MinAtar/Breakout-v1, not MinAtar/Asterix-v1"),
        "{err}"
    );
    let err = asterix.set_state(&breakout.state().unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("the state is of MinAtar/Breakout-v1, not MinAtar/Asterix-v1"),
        "{err}"
    );
    // The other action set is another id.
    let mut v0 = make("MinAtar/Breakout-v0", 0).unwrap();
    let err = v0.set_state(&breakout.state().unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("is of MinAtar/Breakout-v1, not MinAtar/Breakout-v0"),
        "{err}"
    );
    // Not a MinAtar state at all (a CartPole's).
    let err = asterix.set_state(&[0.01, 0.0, 0.02, 0.0]).unwrap_err();
    assert!(err.to_string().contains("not of a MinAtar game"), "{err}");
    assert_eq!(asterix.snapshot().unwrap(), before, "refusals change nothing");
}

#[test]
fn invalid_boards_are_refused() {
    let mut env = make("MinAtar/Breakout-v1", 0).unwrap();
    env.reset(Some(0)).unwrap();
    let good = env.state().unwrap();
    // [tag, last action, ball x, ball y, direction, paddle, strike, last x, last y, terminal, bricks...]
    let with = |i: usize, v: f64| {
        let mut s = good.clone();
        s[i] = v;
        s
    };
    let cases = [
        // Places are counted in the vector given, the tag at 0.
        (with(2, 10.0), "ball_x (value 2) is 10; expected an integer from 0 to 9"),
        (with(4, 4.0), "ball_dir (value 4) is 4"),
        (with(5, 2.5), "paddle position (value 5) is 2.5"),
        (with(1, 6.0), "the previous action (value 1) is 6"),
        (
            with(20, 2.0),
            "brick at row 1, column 0 (value 20) is 2; expected 0 or 1",
        ),
        // A brick on the bottom row (the last ten values) would let a striking ball off the
        // board.
        (
            with(good.len() - 6, 1.0),
            "row 9 holds a brick; the game keeps bricks in rows 1 to 3",
        ),
        (
            with(3, 9.0),
            "the ball is on the bottom row (9) of a state that is not terminal",
        ),
        (
            good[..50].to_vec(),
            "in the state, there are only 50 values, none for brick at row 4, column 0",
        ),
        ([good.clone(), vec![0.0]].concat(), "1 values after the game's"),
    ];
    for (state, expected) in cases {
        let err = env.set_state(&state).unwrap_err();
        assert!(matches!(err, EnvError::BadState { .. }), "{err}");
        assert!(err.to_string().contains(expected), "{err}\nexpected: {expected}");
    }
    assert_eq!(env.state().unwrap(), good, "refusals change nothing");

    // Space Invaders without aliens (the reference fails finding one to fire).
    let mut invaders = make("MinAtar/SpaceInvaders-v1", 0).unwrap();
    invaders.reset(Some(0)).unwrap();
    let mut none = invaders.state().unwrap();
    let n = none.len();
    none[n - 100..].fill(0.0);
    let err = invaders.set_state(&none).unwrap_err();
    assert!(err.to_string().contains("there are no aliens"), "{err}");

    // A Seaquest sub facing right at the left edge would have its back off the board.
    let mut seaquest = make("MinAtar/Seaquest-v1", 0).unwrap();
    seaquest.reset(Some(0)).unwrap();
    let mut s = seaquest.state().unwrap();
    // [tag, last action, oxygen, diver count, sub x, sub y, facing right, ...]
    s[4] = 0.0;
    s[6] = 1.0;
    let err = seaquest.set_state(&s).unwrap_err();
    assert!(err.to_string().contains("back off the board"), "{err}");
    // Oxygen at -1 only comes with the game's end.
    let mut s = seaquest.state().unwrap();
    s[2] = -1.0;
    let err = seaquest.set_state(&s).unwrap_err();
    assert!(
        err.to_string().contains("oxygen is -1 in a state that is not terminal"),
        "{err}"
    );

    // A snapshot whose generator position is past its 624 words.
    let mut snapshot = env.snapshot().unwrap();
    *snapshot.state.last_mut().unwrap() = 625.0;
    let err = env.restore_snapshot(&snapshot).unwrap_err();
    let last = snapshot.state.len() - 1;
    assert!(
        err.to_string()
            .contains(&format!("the generator's position (value {last}) is 625")),
        "{err}"
    );
    // A step count no episode reaches is kept, not overflowed, when the game steps on.
    let mut snapshot = env.snapshot().unwrap();
    snapshot.episode_steps = usize::MAX;
    env.restore_snapshot(&snapshot).unwrap();
    env.step(&Value::i32(0)).unwrap();
}

#[test]
fn a_step_before_reset_or_after_the_end_is_refused() {
    let mut env = make("MinAtar/Freeway-v1", 0).unwrap();
    assert!(matches!(env.step(&Value::i32(0)), Err(EnvError::EpisodeOver { .. })));
    env.reset(Some(1)).unwrap();
    // Freeway ends itself on its 2,501st step (terminated; there is no time limit).
    for t in 1..=2501 {
        let step = env.step(&Value::i32(0)).unwrap();
        assert_eq!(step.terminated, t == 2501, "step {t}");
        assert!(!step.truncated);
    }
    assert!(matches!(env.step(&Value::i32(0)), Err(EnvError::EpisodeOver { .. })));
}
