//! DQN learning tests with RLgraph's own configs and thresholds, seeded, on candle.

use agents::{DqnAgent, DqnConfig};
use backend_candle::Candle;
use executors::SingleThreadedWorker;
use rlgraph_envs::{make, Stepping, VectorEnv};

fn worker(config: &str, env: &str, seed: u64) -> SingleThreadedWorker<DqnAgent<Candle>> {
    let text = std::fs::read_to_string(format!("{}/../configs/{config}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let config = DqnConfig::parse(&serde_json::from_str(&text).unwrap()).unwrap();
    let probe = make(env, seed).unwrap();
    let agent = DqnAgent::<Candle>::new(config, probe.state_space(), probe.action_space(), seed).unwrap();
    let envs = VectorEnv::new(vec![make(env, seed).unwrap()], Stepping::Sequential).unwrap();
    SingleThreadedWorker::new(agent, envs, seed)
}

#[test]
fn dqn_learns_the_2x2_grid_world() {
    // RLgraph's test: 2000 steps, mean reward >= -1.5 and max >= 0.
    let mut w = worker("dqn-gridworld-2x2.json", "GridWorld-2x2", 1);
    let stats = w.execute_timesteps(2000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(stats.mean_episode_reward >= -1.5, "{}", stats.to_json());
    assert!(stats.max_episode_reward >= 0.0, "{}", stats.to_json());
}

#[test]
fn dqn_learns_cartpole() {
    // RLgraph's test: 3000 steps, mean >= 25 and max >= 100.
    let mut w = worker("dqn-cartpole-rlgraph.json", "CartPole-v1", 1);
    let stats = w.execute_timesteps(3000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(stats.mean_episode_reward >= 25.0, "{}", stats.to_json());
    assert!(stats.max_episode_reward >= 100.0, "{}", stats.to_json());
}

#[test]
fn double_dueling_dqn_learns_cartpole() {
    // RLgraph's test: 6000 steps, mean >= 40.
    let mut w = worker("double-dueling-dqn-cartpole.json", "CartPole-v1", 1);
    let stats = w.execute_timesteps(6000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(stats.mean_episode_reward >= 40.0, "{}", stats.to_json());
}

#[test]
fn ape_x_learns_cartpole() {
    // Single-process Ape-X (prioritized replay with worker-side priorities, 3-step returns,
    // dueling heads): DQN's CartPole thresholds, 3000 steps, mean >= 25 and max >= 100.
    let mut w = worker("apex-cartpole.json", "CartPole-v1", 1);
    let stats = w.execute_timesteps(3000, |_| {}).unwrap();
    eprintln!("{}", stats.to_json());
    assert!(stats.mean_episode_reward >= 25.0, "{}", stats.to_json());
    assert!(stats.max_episode_reward >= 100.0, "{}", stats.to_json());
}
