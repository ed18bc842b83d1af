//! Periodic checkpoints: the worker saves every N steps, and the last save holds the agent as
//! it was at that step.

use agents::{DqnAgent, DqnConfig};
use backend_candle::Candle;
use executors::SingleThreadedWorker;
use rlgraph_envs::{make, Stepping, VectorEnv};

#[test]
fn the_worker_saves_a_checkpoint_every_n_steps() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/dqn-gridworld-2x2.json"
    ))
    .unwrap();
    let config = DqnConfig::parse(&serde_json::from_str(&text).unwrap()).unwrap();
    let env = make("GridWorld-2x2", 0).unwrap();
    let agent = |seed| DqnAgent::<Candle>::new(config.clone(), env.state_space(), env.action_space(), seed).unwrap();
    let dir = std::env::temp_dir().join(format!("rlgraph-worker-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("checkpoint.safetensors");
    let envs = VectorEnv::new(
        vec![make("GridWorld-2x2", 0).unwrap(), make("GridWorld-2x2", 1).unwrap()],
        Stepping::Sequential,
    )
    .unwrap();
    let mut w = SingleThreadedWorker::new(agent(1), envs, 1).with_checkpoints(100, &path);
    // Two copies: 125 vector steps are 250 environment steps; saves at 100 and 200.
    w.execute_timesteps(250, |_| {}).unwrap();
    assert_eq!(w.agent().timesteps(), 250);
    let mut restored = agent(2);
    restored.restore_checkpoint(&path).unwrap();
    assert_eq!(restored.timesteps(), 200);
    std::fs::remove_dir_all(&dir).ok();
}
