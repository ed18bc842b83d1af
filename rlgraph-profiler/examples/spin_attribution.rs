//! The synthetic workload on the machine's real clock: spin loops of set lengths in set
//! categories, nested, recorded by the process's profiler; prints each category's
//! attributed time against the set time and the error. (The tests run the same shape on a
//! virtual clock, exactly; this shows it holds on real time, where the profiler's own cost
//! and the machine's jitter enter.)
//!
//! `cargo run --release -p rlgraph-profiler --example spin_attribution`

use std::time::{Duration, Instant};

use rlgraph_profiler::{capture, global, operation, phase, set_level, Breakdown, Category, Level};

fn spin(micros: u64) {
    let until = Instant::now() + Duration::from_micros(micros);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn main() {
    set_level(Level::Full);
    let iterations = 2000u64;
    for _ in 0..iterations {
        let _p = phase("training");
        {
            let _o = operation("inference");
            spin(20); // framework
            let step = capture(Category::Backend, "policy/dense");
            spin(60);
            {
                let _t = capture(Category::Transfer, "upload");
                spin(10);
            }
            drop(step);
        }
        {
            let _o = operation("simulation");
            let _s = capture(Category::Simulator, "env.step");
            spin(50);
        }
    }
    set_level(Level::Off);
    let b = Breakdown::from_events(&global().take_events());
    let by = b.by_operation();
    let n = iterations as f64 * 1e3;
    let expected = [
        ("inference", Category::Framework, 20.0),
        ("inference", Category::Backend, 60.0),
        ("inference", Category::Transfer, 10.0),
        ("simulation", Category::Simulator, 50.0),
    ];
    let mut worst: f64 = 0.0;
    for (op, cat, micros) in expected {
        let got = by.get(op).and_then(|c| c.get(&cat)).copied().unwrap_or(0.0);
        let err = 100.0 * (got - micros * n) / (micros * n);
        worst = worst.max(err.abs());
        println!(
            "{op:<11} {:<10} set {:>8.1} ms  attributed {:>8.1} ms  error {err:+.2}%",
            cat.name(),
            micros * n / 1e6,
            got / 1e6
        );
    }
    println!("worst error {worst:.2}%");
}
