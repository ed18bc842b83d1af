//! Build overhead: assembly plus build (space inference, variable declarations), without
//! creating variable values, for one component and for a 43-component dueling-DQN-shaped graph.
//! RLgraph (MLSys 2019) reports under 100 ms for one component and about 650 ms (PyTorch) and
//! 1 s (TensorFlow) for the 43-component graph.

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, Criterion};
use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{build, BuildOptions};
use rlgraph_tests::dummies::{dummy_1to1, synthetic_dueling_dqn};
use rlgraph_tests::Candle;

fn spaces() -> BTreeMap<String, Space> {
    BTreeMap::from([("x".to_string(), Space::from(FloatBox::new([16])).with_batch_rank(true))])
}

fn bench(c: &mut Criterion) {
    let one = BTreeMap::from([("input".to_string(), Space::from(FloatBox::new([])))]);
    let options = BuildOptions::default();
    let built = build(synthetic_dueling_dqn::<Candle>(), &spaces(), &options).expect("builds");
    assert_eq!(built.report().components, 43);
    c.bench_function("build/1-component", |b| {
        b.iter(|| build(dummy_1to1::<Candle>("dummy"), &one, &options).expect("builds"))
    });
    c.bench_function("build/43-components", |b| {
        b.iter(|| build(synthetic_dueling_dqn::<Candle>(), &spaces(), &options).expect("builds"))
    });
    // The baseline in the same run: only constructing the component tree (phase 1), which any
    // framework pays; the difference is what assembly and build add.
    c.bench_function("compose-only/43-components", |b| {
        b.iter(synthetic_dueling_dqn::<Candle>)
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
