//! Steps per second of the tensor MinAtar games on candle's CPU backend at one thread:
//! `COPIES` copies (default 1,024) stepped together with uniformly random actions drawn up front,
//! restarts inside the step, by the host pass (the CPU's default, where the game has one) and
//! by the tensor ops; compare gymnax's vmapped copies in the `minatar_speed` example of
//! `rlgraph-envs`.
//!
//! ```sh
//! cargo run --release -p rlgraph-tensor-envs --example minatar_tensor_speed [COPIES]
//! ```

use std::time::Instant;

use backend_candle::Candle;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::backend::prelude::*;
use rlgraph_core::{Device, HostTensor};
use rlgraph_tensor_envs::{make, TENSOR_ENV_IDS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let copies: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(1024);
    let steps = (2_000_000 / copies).max(20);
    println!("| game | copies | host pass steps/s | tensor ops steps/s |\n| --- | --- | --- | --- |");
    for id in TENSOR_ENV_IDS
        .iter()
        .filter(|id| id.starts_with("MinAtar/") && id.ends_with("-v1"))
    {
        let mut rates = vec![];
        for host in [true, false] {
            let mut envs = make::<Candle>(id, copies, 0, Device::Cpu)?;
            if envs.use_host_pass(host)? != host {
                rates.push("none".to_string());
                continue;
            }
            envs.reset()?;
            let count = envs.action_space().num_categories().unwrap_or(1) as i64;
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let actions: Vec<_> = (0..16)
                .map(|_| {
                    let a: Vec<i64> = (0..copies).map(|_| rng.random_range(0..count)).collect();
                    Candle::from_host(&HostTensor::i64([copies], a)?, Device::Cpu)
                })
                .collect::<Result<_, _>>()?;
            let start = Instant::now();
            for t in 0..steps {
                envs.step(&actions[t % actions.len()])?;
            }
            let rate = (steps * copies) as f64 / start.elapsed().as_secs_f64();
            rates.push(format!("{:.2}M", rate / 1e6));
        }
        println!("| {id} | {copies} | {} | {} |", rates[0], rates[1]);
    }
    Ok(())
}
