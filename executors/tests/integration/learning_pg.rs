//! PPO, actor-critic, SAC, random-baseline and action-masked learning tests with RLgraph's configs and
//! thresholds, seeded, on candle.

use agents::{build_agent, Agent};
use backend_candle::Candle;
use executors::SingleThreadedWorker;
use rlgraph_envs::{make, Stepping, VectorEnv};

fn worker(config: &str, env: &str, seed: u64) -> SingleThreadedWorker<Box<dyn Agent + Send>> {
    let text = std::fs::read_to_string(format!("{}/../configs/{config}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let spec: serde_json::Value = serde_json::from_str(&text).unwrap();
    let probe = make(env, seed).unwrap();
    let agent = build_agent::<Candle>(&spec, probe.state_space(), probe.action_space(), seed).unwrap();
    let envs = VectorEnv::new(vec![make(env, seed).unwrap()], Stepping::Sequential).unwrap();
    SingleThreadedWorker::new(agent, envs, seed)
}

#[test]
fn ppo_learns_cartpole() {
    // RLgraph's test: 5000 steps, the mean of the last 10 episodes >= 40.
    let mut w = worker("rlgraph/ppo_agent_for_cartpole.json", "CartPole-v1", 1);
    let stats = w.execute_timesteps(5000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(
        stats.mean_episode_reward_last_10_episodes >= 40.0,
        "{}",
        stats.to_json()
    );
}

#[test]
fn actor_critic_learns_cartpole() {
    let mut w = worker("actor-critic-cartpole.json", "CartPole-v1", 1);
    let stats = w.execute_timesteps(20000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(
        stats.mean_episode_reward_last_10_episodes >= 100.0,
        "{}",
        stats.to_json()
    );
}

#[test]
fn sac_learns_pendulum() {
    // RLgraph's test: 50 episodes, the mean of the last 10 > -700 (a random policy scores
    // about -1200).
    let mut w = worker("sac-pendulum.json", "Pendulum-v1", 1);
    let stats = w.execute_episodes(50, 10_000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(
        stats.mean_episode_reward_last_10_episodes > -700.0,
        "{}",
        stats.to_json()
    );
}

#[test]
fn the_random_agent_scores_like_chance_on_cartpole() {
    // A baseline check of the worker with the random agent: CartPole's random returns
    // average about 22; nothing near a learned policy.
    let mut w = worker("random-cartpole.json", "CartPole-v1", 1);
    let stats = w.execute_episodes(100, 100_000, |_| {}).unwrap();
    assert_eq!(stats.updates, 0);
    assert!((12.0..35.0).contains(&stats.mean_episode_reward), "{}", stats.to_json());
}

#[test]
fn impala_learns_the_2x2_grid_world() {
    // RLgraph's test: mean reward > -0.1 (the best return is 0.9: down, then right; a
    // random walk averages about -3).
    let mut w = worker("impala-gridworld-2x2.json", "GridWorld-2x2", 0);
    let stats = w.execute_timesteps(3000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(stats.mean_episode_reward > -0.1, "{}", stats.to_json());
}

#[test]
fn discrete_sac_learns_cartpole() {
    // Gumbel-softmax SAC: 5000 steps; the last 10 episodes average well above a random
    // policy's 22 (seeds 0, 1 and 3 reach 150-230 by 10,000 steps; seed 2 collapses onto one
    // action, see the closing note).
    let mut w = worker("sac-cartpole.json", "CartPole-v1", 1);
    let stats = w.execute_timesteps(5000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(
        stats.mean_episode_reward_last_10_episodes >= 60.0,
        "{}",
        stats.to_json()
    );
}

/// Trains `config` on `MaskedChoice-v0` (invalid actions are refused by the environment with
/// an error, so the run itself shows every action was valid) and gives the greedy mean
/// return over 50 evaluation episodes.
fn masked_choice_return(config: &str, steps: u64) -> f64 {
    let mut w = worker(config, "MaskedChoice-v0", 1);
    let stats = w.execute_timesteps(steps, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    let copies = (0..50).map(|i| make("MaskedChoice-v0", i).unwrap()).collect();
    let mut eval = executors::Evaluation::new(1, VectorEnv::new(copies, Stepping::Sequential).unwrap());
    eval.play(w.agent_mut(), 1, 0, 1.0).unwrap()
}

#[test]
fn dqn_and_ppo_learn_to_pick_the_best_valid_action() {
    // At each step the best valid action earns 1, 0.75, 0.5 or 0.25 with probabilities 8/15,
    // 4/15, 2/15 and 1/15: 8 steps make 8 * 49/60 = 6.53 on average. A uniformly random valid
    // action makes 8 * 0.625 = 5 (the mean of (a + 1) / 4 over a mask's valid actions,
    // averaged over the 15 masks, is 0.625 by symmetry: a's and 3 - a's rewards sum to 1.25).
    let best = 8.0 * 49.0 / 60.0;
    for (config, steps) in [("dqn-masked-choice.json", 4000), ("ppo-masked-choice.json", 10_000)] {
        let got = masked_choice_return(config, steps);
        assert!(got >= 0.95 * best, "{config}: greedy mean {got}, best {best}");
    }
}
