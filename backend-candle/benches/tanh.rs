//! tanh on a hidden layer's activations ([32, 64] and [1024, 64] f32), forward and
//! backward: this backend's polynomial (`Backend::tanh`) against candle's own `Tensor::tanh`
//! (glibc's scalar `tanhf` per element), in the same run.

use std::hint::black_box;

use backend_candle::candle_core::{Device, Tensor, Var};
use backend_candle::Candle;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rlgraph_core::backend::prelude::*;

fn tanh(c: &mut Criterion) {
    let mut group = c.benchmark_group("tanh");
    for rows in [32usize, 1024] {
        let x = Tensor::randn(0f32, 2.0, (rows, 64), &Device::Cpu).expect("a random tensor");
        group.bench_with_input(BenchmarkId::new("candle_tanhf", rows), &x, |b, x| {
            b.iter(|| black_box(x.tanh().expect("tanh")))
        });
        group.bench_with_input(BenchmarkId::new("polynomial", rows), &x, |b, x| {
            b.iter(|| black_box(Candle::tanh(x).expect("tanh")))
        });
        let v = Var::from_tensor(&x).expect("a variable");
        group.bench_with_input(BenchmarkId::new("candle_tanhf_backward", rows), &v, |b, v| {
            b.iter(|| {
                black_box(
                    v.as_tensor()
                        .tanh()
                        .and_then(|y| y.sum_all())
                        .and_then(|s| s.backward())
                        .expect("grad"),
                )
            })
        });
        group.bench_with_input(BenchmarkId::new("polynomial_backward", rows), &v, |b, v| {
            b.iter(|| {
                let y = Candle::tanh(v.as_tensor()).expect("tanh");
                black_box(y.sum_all().and_then(|s| s.backward()).expect("grad"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tanh);
criterion_main!(benches);
