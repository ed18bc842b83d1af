//! Greedy evaluation during training: rounds fall on multiples of the interval, play one
//! episode per copy from the documented seeds with the agent's deterministic actions, leave
//! the training run untouched, stop the run at the first round that reaches the target, and
//! survive a checkpoint. The expected returns come from playing CartPole directly with the
//! same policy, not from the evaluation code.

use std::path::Path;

use agents::{Agent, RandomAgent, Transition, UpdateSpec};
use rlgraph_core::spaces::Value;
use rlgraph_core::{ErasedExecutor, HostState, Result};
use rlgraph_envs::{make, Stepping, VectorEnv};

use executors::{Evaluation, SingleThreadedWorker, EVAL_SEED_OFFSET};

/// Pushes the cart toward the side the pole leans to: episodes of a few dozen steps, their
/// lengths fixed by the start state. Checkpoints go through a random agent.
struct Lean {
    inner: RandomAgent,
    /// The `explore` flag of every call, in order.
    explores: Vec<bool>,
}

fn lean(state: &Value) -> Value {
    let Value::Float32(a) = state else {
        panic!("CartPole states are f32")
    };
    let x = a.data();
    Value::i32(i32::from(x[2] > 0.0))
}

impl Agent for Lean {
    fn get_actions(&mut self, states: &[Value], explore: bool, _t: f64) -> Result<Vec<Value>> {
        self.explores.push(explore);
        Ok(states.iter().map(lean).collect())
    }
    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        self.inner.observe(env_id, transition)
    }
    fn update(&mut self, t: f64) -> Result<Option<f64>> {
        self.inner.update(t)
    }
    fn update_spec(&self) -> &UpdateSpec {
        self.inner.update_spec()
    }
    fn save_checkpoint_with(&self, path: &Path, extra: &[(&str, &dyn HostState)]) -> Result<()> {
        self.inner.save_checkpoint_with(path, extra)
    }
    fn restore_checkpoint_with(&mut self, path: &Path, extra: &mut [(&str, &mut dyn HostState)]) -> Result<()> {
        self.inner.restore_checkpoint_with(path, extra)
    }
    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        None
    }
    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        None
    }
}

fn agent() -> Lean {
    let probe = make("CartPole-v1", 0).unwrap();
    Lean {
        inner: RandomAgent::new(&serde_json::json!({"type": "random"}), probe.action_space(), 0).unwrap(),
        explores: vec![],
    }
}

fn cartpoles(copies: usize) -> VectorEnv {
    VectorEnv::new(
        (0..copies).map(|i| make("CartPole-v1", i as u64).unwrap()).collect(),
        Stepping::Sequential,
    )
    .unwrap()
}

/// The return of one CartPole episode from `seed` under `lean`, played directly.
fn episode_return(seed: u64) -> f64 {
    let mut env = make("CartPole-v1", 0).unwrap();
    let mut state = env.reset(Some(seed)).unwrap();
    let mut total = 0.0;
    loop {
        let step = env.step(&lean(&state)).unwrap();
        total += step.reward;
        if step.terminated || step.truncated {
            return total;
        }
        state = step.observation;
    }
}

/// The mean return of evaluation round `round` with `copies` copies, for a run seeded `seed`.
fn round_mean(seed: u64, round: u64, copies: u64) -> f64 {
    let start = seed + EVAL_SEED_OFFSET + round * copies;
    (0..copies).map(|i| episode_return(start + i)).sum::<f64>() / copies as f64
}

#[test]
fn rounds_play_one_greedy_episode_per_copy_and_leave_training_alone() {
    let (seed, every, copies) = (3, 100, 5);
    let mut plain = SingleThreadedWorker::new(agent(), cartpoles(1), seed);
    let plain_stats = plain.execute_timesteps(350, |_| {}).unwrap();
    let mut w = SingleThreadedWorker::new(agent(), cartpoles(1), seed)
        .with_evaluation(Evaluation::new(every, cartpoles(copies)));
    let stats = w.execute_timesteps(350, |_| {}).unwrap();

    let expected: Vec<(u64, f64)> = (1..=3)
        .map(|k| (k * every, round_mean(seed, k, copies as u64)))
        .collect();
    let got: Vec<(u64, f64)> = stats.evaluations.iter().map(|e| (e.timestep, e.mean_return)).collect();
    assert_eq!(got, expected);
    // The rounds are not all alike, so a wrong seed would show.
    assert!(
        expected[0].1 != expected[1].1 || expected[1].1 != expected[2].1,
        "{expected:?}"
    );
    // Training saw the same episodes as a run without evaluation.
    assert_eq!(w.run_episode_returns(), plain.run_episode_returns());
    assert_eq!(w.run_timesteps(), 350);
    // Training acts with exploration; evaluation without.
    let explores = &w.agent().explores;
    assert_eq!(explores.iter().filter(|e| **e).count(), 350);
    assert!(
        explores.iter().filter(|e| !**e).count() >= 3,
        "every round acts greedily"
    );
    assert_eq!(stats.to_json()["evaluations"][2]["timestep"], 300);
    // The rounds' own seconds are counted apart, within the run's.
    assert_eq!(plain_stats.evaluation_seconds, 0.0);
    assert!(
        stats.evaluation_seconds > 0.0 && stats.evaluation_seconds <= stats.runtime_seconds,
        "{} of {}",
        stats.evaluation_seconds,
        stats.runtime_seconds
    );
    assert_eq!(stats.to_json()["evaluation_seconds"], stats.evaluation_seconds);
}

#[test]
fn a_target_return_stops_the_run_at_the_first_round_that_reaches_it() {
    let (seed, every, copies) = (3, 100, 5);
    let means: Vec<f64> = (1..=6).map(|k| round_mean(seed, k, copies)).collect();
    // The target is the best of rounds 2 to 6, so no earlier round than its first reaches it
    // unless round 1 already does; the run stops right after that round.
    let target = means[1..].iter().copied().fold(f64::MIN, f64::max);
    let first = means.iter().position(|m| *m >= target).unwrap() as u64 + 1;
    let mut w = SingleThreadedWorker::new(agent(), cartpoles(1), seed)
        .with_evaluation(Evaluation::new(every, cartpoles(copies as usize)))
        .with_target_return(target);
    let stats = w.execute_timesteps(10_000, |_| {}).unwrap();
    assert_eq!(stats.solved_at_timestep, Some(first * every));
    assert_eq!(w.run_timesteps(), first * every);
    assert_eq!(stats.evaluations.len() as u64, first);
}

#[test]
fn evaluations_survive_a_checkpoint_and_a_resumed_run_goes_on_from_them() {
    let (seed, every, copies) = (1, 50, 3);
    let dir = std::env::temp_dir().join(format!("rlgraph-eval-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("checkpoint.json");
    let make_worker = || {
        SingleThreadedWorker::new(agent(), cartpoles(1), seed)
            .with_evaluation(Evaluation::new(every, cartpoles(copies)))
    };
    let mut first = make_worker();
    first.execute_timesteps(120, |_| {}).unwrap();
    first.save_checkpoint(&path).unwrap();
    let mut resumed = make_worker();
    resumed.resume(&path).unwrap();
    assert_eq!(resumed.run_evaluations(), first.run_evaluations());
    let stats = resumed.execute_timesteps(70, |_| {}).unwrap();
    // This leg (steps 121 to 190) has the round at 150; the run's rounds are at 50, 100, 150.
    assert_eq!(stats.evaluations.len(), 1);
    let steps: Vec<u64> = resumed.run_evaluations().iter().map(|e| e.timestep).collect();
    assert_eq!(steps, [50, 100, 150]);
    assert_eq!(
        resumed.run_evaluations()[2].mean_return,
        round_mean(seed, 3, copies as u64)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Trains `agent()` for `steps` steps with and without evaluation rounds, and checks that
/// both runs saw the same episodes and ended with the same weights.
fn trains_the_same<A: Agent>(agent: impl Fn() -> A, steps: u64) {
    let mut plain = SingleThreadedWorker::new(agent(), cartpoles(1), 4);
    plain.execute_timesteps(steps, |_| {}).unwrap();
    let mut evaluated =
        SingleThreadedWorker::new(agent(), cartpoles(1), 4).with_evaluation(Evaluation::new(steps / 3, cartpoles(10)));
    let stats = evaluated.execute_timesteps(steps, |_| {}).unwrap();
    assert_eq!(stats.evaluations.len(), 3);
    assert!(plain.run_updates() > 0, "the agent learned during the run");
    assert_eq!(evaluated.run_episode_returns(), plain.run_episode_returns());
    assert_eq!(
        evaluated.agent().get_weights().unwrap(),
        plain.agent().get_weights().unwrap()
    );
}

fn config(name: &str) -> serde_json::Value {
    let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn dqn_and_ppo_agents_train_the_same_with_and_without_evaluation_rounds() {
    // Greedy acting runs the actor's deterministic method, which draws nothing from the
    // agent's random streams: the same seed gives the same training run and the same weights.
    let probe = make("CartPole-v1", 0).unwrap();
    let (states, actions) = (probe.state_space(), probe.action_space());
    let dqn = agents::DqnConfig::parse(&config("dqn-cartpole.json")).unwrap();
    trains_the_same(
        || agents::DqnAgent::<backend_candle::Candle>::new(dqn.clone(), states, actions, 4).unwrap(),
        1500,
    );
    let ppo = agents::PgConfig::parse(&config("ppo-cartpole.json")).unwrap();
    trains_the_same(
        || agents::PgAgent::<backend_candle::Candle>::new(ppo.clone(), states, actions, 4).unwrap(),
        1500,
    );
}
