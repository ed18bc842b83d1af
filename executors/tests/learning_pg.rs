//! Policy-gradient and baseline learning tests with RLgraph's configs and thresholds, seeded,
//! on candle.

use agents::{build_agent, Agent};
use backend_candle::Candle;
use executors::SingleThreadedWorker;
use rlgraph_envs::{make, Stepping, VectorEnv};

fn worker(config: &str, env: &str, seed: u64) -> SingleThreadedWorker<Box<dyn Agent>> {
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
