//! GA3C end to end on candle: predictions per second with batching (up to 128 states per
//! forward pass) against one forward pass per agent (`prediction_batch_size: 1`), for 1 to 64
//! agent threads with one predictor and one trainer, over `FRAMES` CartPole frames each; then
//! the wall-clock seconds to solve CartPole (mean return 475 over 100 episodes) under GA3C
//! and under the single-threaded worker with 16 environment copies, same config and seeds.
//!
//! `cargo run --release -p executors --example ga3c_throughput [frames] [seeds]`

use agents::build_agent;
use backend_candle::Candle;
use executors::ga3c::Ga3cExecutor;
use executors::SingleThreadedWorker;
use rlgraph_envs::{make, Stepping, VectorEnv};
use serde_json::{json, Value as Json};

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let seeds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/ga3c-actor-critic-cartpole.json"
    );
    let config: Json = serde_json::from_str(&std::fs::read_to_string(path).expect("config")).expect("json");

    println!("agents | batched pred/s (mean batch) | one-per-agent pred/s | ratio");
    for agents in [1usize, 2, 4, 8, 16, 32, 64] {
        let run = |batch: usize| {
            let mut c = config.clone();
            c["execution_spec"]["ga3c_spec"] = json!({
                "num_agents": agents, "num_predictors": 1, "num_trainers": 1,
                "prediction_batch_size": batch, "dynamic_adjustment": false});
            let mut ga3c = Ga3cExecutor::<Candle>::new(&c, "CartPole-v1", 0).expect("executor");
            let stats = ga3c.execute_timesteps(frames, |_| {}).expect("runs");
            let seconds = stats.worker.runtime_seconds;
            (stats.predictions as f64 / seconds, stats.mean_prediction_batch())
        };
        let (batched, mean_batch) = run(128);
        let (single, _) = run(1);
        println!(
            "{agents:6} | {batched:10.0} ({mean_batch:5.2}) | {single:10.0} | {:.2}",
            batched / single
        );
    }

    println!("\nseed | GA3C: frames, seconds to solve | single-threaded (16 envs): frames, seconds");
    for seed in 0..seeds {
        let mut ga3c = Ga3cExecutor::<Candle>::new(&config, "CartPole-v1", seed)
            .expect("executor")
            .with_target_return(475.0);
        let g = ga3c.execute_timesteps(2_000_000, |_| {}).expect("runs").worker;
        let probe = make("CartPole-v1", seed).expect("env");
        let agent = build_agent::<Candle>(&config, probe.state_space(), probe.action_space(), seed).expect("agent");
        let envs = (0..16).map(|i| make("CartPole-v1", seed + i).expect("env")).collect();
        let envs = VectorEnv::new(envs, Stepping::Sequential).expect("envs");
        let mut worker = SingleThreadedWorker::new(agent, envs, seed).with_target_return(475.0);
        let s = worker.execute_timesteps(2_000_000, |_| {}).expect("runs");
        let show = |solved: Option<u64>, secs: f64| match solved {
            Some(f) => format!("{f:8}, {secs:6.1}"),
            None => format!("not solved in 2M, {secs:6.1}"),
        };
        println!(
            "{seed:4} | {} | {}",
            show(g.solved_at_timestep, g.runtime_seconds),
            show(s.solved_at_timestep, s.runtime_seconds)
        );
    }
}
