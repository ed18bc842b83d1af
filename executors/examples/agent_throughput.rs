//! Training throughput (environment frames per second) of DQN, PPO and IMPALA on one thread,
//! with the configs of their learning tests, on candle.
//!
//! `cargo run --release -p executors --example agent_throughput [steps] [rounds]`. Each
//! round runs every agent once, so drift in the machine's speed reaches all of them alike;
//! the median round is printed.

use agents::build_agent;
use backend_candle::Candle;
use executors::SingleThreadedWorker;
use rlgraph_envs::{make, Stepping, VectorEnv};

const RUNS: [(&str, &str, &str); 3] = [
    ("dqn", "dqn-cartpole-rlgraph.json", "CartPole-v1"),
    ("ppo", "rlgraph/ppo_agent_for_cartpole.json", "CartPole-v1"),
    ("impala", "impala-gridworld-2x2.json", "GridWorld-2x2"),
];

fn frames_per_second(config: &str, env: &str, steps: u64) -> Result<f64, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(format!("{}/../configs/{config}", env!("CARGO_MANIFEST_DIR")))?;
    let spec: serde_json::Value = serde_json::from_str(&text)?;
    let probe = make(env, 1)?;
    let agent = build_agent::<Candle>(&spec, probe.state_space(), probe.action_space(), 1)?;
    let envs = VectorEnv::new(vec![make(env, 1)?], Stepping::Sequential)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, 1);
    Ok(worker.execute_timesteps(steps, |_| {})?.env_frames_per_second)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3000);
    let rounds: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let mut fps = vec![vec![]; RUNS.len()];
    for _ in 0..rounds {
        for (i, (_, config, env)) in RUNS.iter().enumerate() {
            fps[i].push(frames_per_second(config, env, steps)?);
        }
    }
    for ((name, ..), mut f) in RUNS.iter().zip(fps) {
        f.sort_by(f64::total_cmp);
        println!("{name}\t{:.0}", f[f.len() / 2]);
    }
    Ok(())
}
