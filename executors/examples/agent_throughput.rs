//! Training throughput (environment frames per second) of DQN, PPO and IMPALA on one thread,
//! with the configs of their learning tests, on candle.
//!
//! `cargo run --release -p executors --example agent_throughput [steps] [rounds] [agent]`
//! (`agent`: only `dqn`, `ppo` or `impala`). It prints frames per wall-clock second and per
//! CPU second of the process (steadier on a shared machine). Each
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

/// CPU seconds this process has used (user and system), from `/proc/self/stat` on Linux:
/// unlike wall time, it does not count time the machine gave to others.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Frames per wall-clock second and per CPU second (NaN where CPU time cannot be read).
fn frames_per_second(config: &str, env: &str, steps: u64) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(format!("{}/../configs/{config}", env!("CARGO_MANIFEST_DIR")))?;
    let spec: serde_json::Value = serde_json::from_str(&text)?;
    let probe = make(env, 1)?;
    let agent = build_agent::<Candle>(&spec, probe.state_space(), probe.action_space(), 1)?;
    let envs = VectorEnv::new(vec![make(env, 1)?], Stepping::Sequential)?;
    let mut worker = SingleThreadedWorker::new(agent, envs, 1);
    let cpu = cpu_seconds();
    let stats = worker.execute_timesteps(steps, |_| {})?;
    let cpu = cpu.zip(cpu_seconds()).map_or(f64::NAN, |(a, b)| b - a);
    Ok((stats.env_frames_per_second, stats.timesteps_executed as f64 / cpu))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3000);
    let rounds: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let only = args.next();
    let runs: Vec<_> = RUNS
        .iter()
        .filter(|(name, ..)| only.as_deref().is_none_or(|o| o == *name))
        .collect();
    let mut fps = vec![vec![]; runs.len()];
    for _ in 0..rounds {
        for (i, (_, config, env)) in runs.iter().enumerate() {
            fps[i].push(frames_per_second(config, env, steps)?);
        }
    }
    println!("agent\tframes/s (wall)\tframes/s (CPU)");
    for ((name, ..), f) in runs.into_iter().zip(fps) {
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (wall, cpu): (Vec<f64>, Vec<f64>) = f.into_iter().unzip();
        println!("{name}\t{:.0}\t{:.0}", median(wall), median(cpu));
    }
    Ok(())
}
