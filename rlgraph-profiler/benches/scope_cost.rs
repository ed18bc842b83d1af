//! What a scope costs: a loop of 64 small work items with no scope at all (the baseline),
//! with an operation and a capture scope around each while profiling is off, and with them
//! recording (annotations only; full capture). The off/baseline ratio is the claim "costs
//! nothing measurable when off".

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use rlgraph_profiler::{capture, operation, set_level, Category, Level};

/// About 50 ns of dependent arithmetic, a small fraction of one plan step (a kernel call
/// on these machines takes microseconds).
fn work(x: u64) -> u64 {
    (0..64).fold(x, |acc, i| {
        black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(i))
    })
}

fn scopes(c: &mut Criterion) {
    let mut group = c.benchmark_group("scope_cost_64_items");
    group.bench_function("baseline_no_scope", |b| {
        b.iter(|| (0..64u64).fold(0, |acc, i| acc ^ work(black_box(i))))
    });
    for (name, level) in [
        ("off", Level::Off),
        ("annotations", Level::Annotations),
        ("full", Level::Full),
    ] {
        set_level(level);
        group.bench_function(name, |b| {
            b.iter(|| {
                (0..64u64).fold(0, |acc, i| {
                    let _op = operation("inference");
                    let _step = capture(Category::Backend, "step");
                    acc ^ work(black_box(i))
                })
            })
        });
        // Recorded events pile up; drop them between levels.
        let _ = rlgraph_profiler::global().take_events();
    }
    set_level(Level::Off);
    group.finish();
}

criterion_group!(benches, scopes);
criterion_main!(benches);
