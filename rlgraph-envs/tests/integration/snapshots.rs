//! A snapshot taken mid-run and restored into a fresh copy (built with another seed) steps on
//! exactly as the original does: same observations, rewards, flags and resets, across
//! episode ends. The reference is the original environment itself, stepped on.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_envs::{make, Env, EnvSnapshot, Step};
use rlgraph_spaces::Value;

/// `n` steps with actions drawn from `rng`, resetting (unseeded, so the RNG continues) when
/// an episode ends.
fn play(env: &mut dyn Env, n: usize, rng: &mut ChaCha8Rng) -> Vec<(Step, Option<Value>)> {
    (0..n)
        .map(|_| {
            let action = env.action_space().sample(None, rng);
            let step = env.step(&action).unwrap();
            let reset = (step.terminated || step.truncated).then(|| env.reset(None).unwrap());
            (step, reset)
        })
        .collect()
}

#[test]
fn restored_snapshots_continue_exactly() {
    for id in [
        "CartPole-v1",
        "MountainCar-v0",
        "Acrobot-v1",
        "Pendulum-v1",
        "GridWorld-2x2",
        "GridWorld-4x4-ftj-xy+orientation",
        "DeterministicEnv",
        "MinAtar/Asterix-v1",
        "MinAtar/Breakout-v1",
        "MinAtar/Freeway-v1",
        "MinAtar/Seaquest-v1",
        "MinAtar/SpaceInvaders-v0",
    ] {
        let mut env = make(id, 3).unwrap();
        env.reset(Some(3)).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        // Long enough to cross several episode ends in the short ones.
        play(env.as_mut(), 37, &mut rng);
        let snapshot = env.snapshot().unwrap_or_else(|| panic!("{id} has no snapshot"));
        let mut actions = rng.clone();
        let straight = play(env.as_mut(), 600, &mut rng);
        let mut copy = make(id, 1234).unwrap();
        copy.reset(Some(1234)).unwrap();
        copy.restore_snapshot(&snapshot).unwrap();
        assert_eq!(copy.snapshot().unwrap(), snapshot, "{id}");
        let resumed = play(copy.as_mut(), 600, &mut actions);
        assert_eq!(resumed, straight, "{id}");
        assert!(
            // MountainCar's random play and Freeway's 2,501-step episodes outlast the run.
            straight.iter().any(|(_, reset)| reset.is_some())
                || id.starts_with("MountainCar")
                || id.contains("Freeway"),
            "{id} never reset"
        );
    }
}

#[test]
fn bad_snapshots_are_refused_and_change_nothing() {
    let mut env = make("CartPole-v1", 0).unwrap();
    env.reset(Some(0)).unwrap();
    let before = env.snapshot().unwrap();
    let mut bad = before.clone();
    bad.state[2] = f64::NAN;
    let err = env.restore_snapshot(&bad).unwrap_err().to_string();
    assert!(err.contains("theta is NaN"), "{err}");
    assert_eq!(env.snapshot().unwrap(), before);
    let mut grid = make("GridWorld-2x2-ftj", 0).unwrap();
    grid.reset(None).unwrap();
    let before = grid.snapshot().unwrap();
    for state in [vec![4.0, 0.0], vec![1.0, 45.0], vec![1.0], vec![-1.0, 90.0]] {
        let err = grid
            .restore_snapshot(&EnvSnapshot {
                state: state.clone(),
                ..before.clone()
            })
            .unwrap_err()
            .to_string();
        assert!(err.contains("not [field, orientation"), "{state:?}: {err}");
    }
    assert_eq!(grid.snapshot().unwrap(), before);
}
