//! Replay throughput: inserting and sampling CartPole-sized transitions (capacity 1,000,000)
//! and 84x84x4 uint8 frames (capacity 10,000: a million frame records would need 28 GB on a
//! 24 GiB machine), in batches of 32 and 256, against naive baselines in the same run:
//! a `Vec` of per-record values with an O(n) proportional sampler (one linear pass over
//! all priorities per batch) and uniform picks of cloned records.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, IntBox, Space, Value};
use rlgraph_memories::{PrioritizedReplay, Reduce, ReplayMemory, SegmentTree};

fn cartpole_space() -> Space {
    Space::dict([
        ("states", Space::from(FloatBox::new([4]))),
        ("actions", Space::from(IntBox::new(2).unwrap())),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ("next_states", Space::from(FloatBox::new([4]))),
    ])
    .unwrap()
}

fn frames_space() -> Space {
    let frame = || {
        Space::from(
            IntBox::with_bounds(0, 256)
                .unwrap()
                .with_shape([84, 84, 4])
                .with_dtype(rlgraph_core::spaces::Dtype::Uint8)
                .unwrap(),
        )
    };
    Space::dict([
        ("states", frame()),
        ("actions", Space::from(IntBox::new(6).unwrap())),
        ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
        ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
        ("next_states", frame()),
    ])
    .unwrap()
}

/// The naive baseline: one value per record, priorities in a plain vector.
struct Naive {
    records: Vec<Value>,
    priorities: Vec<f64>,
    capacity: usize,
    index: usize,
}

impl Naive {
    fn insert(&mut self, records: &[Value]) {
        for r in records {
            if self.records.len() < self.capacity {
                self.records.push(r.clone());
                self.priorities.push(1.0);
            } else {
                self.records[self.index] = r.clone();
                self.priorities[self.index] = 1.0;
            }
            self.index = (self.index + 1) % self.capacity;
        }
    }

    fn sample_uniform(&self, n: usize, rng: &mut ChaCha8Rng) -> Vec<Value> {
        (0..n)
            .map(|_| self.records[rng.random_range(0..self.records.len())].clone())
            .collect()
    }

    fn sample_proportional(&self, n: usize, rng: &mut ChaCha8Rng) -> Vec<Value> {
        let total: f64 = self.priorities.iter().sum();
        let mut draws: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * total).collect();
        draws.sort_by(f64::total_cmp);
        let mut picked = Vec::with_capacity(n);
        let (mut running, mut d) = (0.0, 0);
        for (i, p) in self.priorities.iter().enumerate() {
            running += p;
            while d < n && draws[d] < running {
                picked.push(self.records[i].clone());
                d += 1;
            }
        }
        picked
    }
}

fn split_records(batch: &Value, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            batch.map(|_, leaf| match leaf {
                Value::Float32(a) => slice(a, i, Value::Float32),
                Value::Int32(a) => slice(a, i, Value::Int32),
                Value::Uint8(a) => slice(a, i, Value::Uint8),
                Value::Bool(a) => slice(a, i, Value::Bool),
                other => other.clone(),
            })
        })
        .collect()
}

fn slice<T: Clone>(a: &Array<T>, i: usize, wrap: fn(Array<T>) -> Value) -> Value {
    let width: usize = a.shape()[1..].iter().product();
    wrap(Array::new(a.shape()[1..].to_vec(), a.data()[i * width..(i + 1) * width].to_vec()).unwrap())
}

fn bench_kind(c: &mut Criterion, label: &str, space: &Space, capacity: usize, prefill: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let batch_space = space.with_batch_rank(true);
    let mut group = c.benchmark_group(format!("replay/{label}"));
    group.sample_size(20);
    for batch in [32usize, 256] {
        let records = batch_space.sample(Some(batch), &mut rng);
        let singles = split_records(&records, batch);
        group.throughput(Throughput::Elements(batch as u64));

        let mut uniform = ReplayMemory::new("replay", space, capacity).unwrap();
        let mut prioritized = PrioritizedReplay::new("per", space, capacity, 0.6, 0.4).unwrap();
        let mut naive = Naive {
            records: vec![],
            priorities: vec![],
            capacity,
            index: 0,
        };
        while uniform.size() < prefill {
            uniform.insert_records(&records).unwrap();
            prioritized.insert_records(&records).unwrap();
            naive.insert(&singles);
        }
        group.bench_function(BenchmarkId::new("insert/uniform", batch), |b| {
            b.iter(|| uniform.insert_records(&records).unwrap())
        });
        group.bench_function(BenchmarkId::new("insert/prioritized", batch), |b| {
            b.iter(|| prioritized.insert_records(&records).unwrap())
        });
        group.bench_function(BenchmarkId::new("insert/naive", batch), |b| {
            b.iter(|| naive.insert(&singles))
        });
        group.bench_function(BenchmarkId::new("sample/uniform", batch), |b| {
            b.iter(|| uniform.get_records(batch, &mut rng).unwrap())
        });
        group.bench_function(BenchmarkId::new("sample/naive-uniform", batch), |b| {
            b.iter(|| naive.sample_uniform(batch, &mut rng))
        });
        group.bench_function(BenchmarkId::new("sample/prioritized", batch), |b| {
            b.iter(|| prioritized.get_records(batch, &mut rng).unwrap())
        });
        group.bench_function(BenchmarkId::new("sample/naive-proportional", batch), |b| {
            b.iter(|| naive.sample_proportional(batch, &mut rng))
        });
        // Update priorities of a sampled batch, as a learner does after each step: slots
        // spread over the whole memory, as a prioritized sample draws them.
        let indices: Vec<usize> = (0..batch).map(|_| rng.random_range(0..prefill)).collect();
        let priorities: Vec<f64> = (0..batch).map(|i| 0.1 + i as f64).collect();
        group.bench_function(BenchmarkId::new("update/prioritized", batch), |b| {
            b.iter(|| prioritized.update_records(&indices, &priorities).unwrap())
        });
    }
    group.finish();
}

/// The parts of a prioritized sample of 32 from a million records: the tree descents alone.
fn bench_tree(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut tree = SegmentTree::new(1_000_000, Reduce::Sum);
    for i in 0..1_000_000 {
        tree.set(i, rng.random::<f64>());
    }
    // A learner's priority update: a batch of random leaves, all at once against one by one
    // (what update_records did before set_many).
    for batch in [32usize, 256] {
        let indices: Vec<usize> = (0..batch).map(|_| rng.random_range(0..1_000_000)).collect();
        let values: Vec<f64> = (0..batch).map(|_| rng.random::<f64>()).collect();
        c.bench_function(&format!("replay/tree/set_many/{batch}"), |b| {
            b.iter(|| tree.set_many(&indices, &values))
        });
        c.bench_function(&format!("replay/tree/set_one_by_one/{batch}"), |b| {
            b.iter(|| {
                for (&i, &v) in indices.iter().zip(&values) {
                    tree.set(i, v);
                }
            })
        });
    }
    let total = tree.root();
    c.bench_function("replay/tree/find_prefix_sums/32", |b| {
        b.iter(|| {
            let prefixes: Vec<f64> = (0..32).map(|_| rng.random::<f64>() * total).collect();
            tree.find_prefix_sums(&prefixes)
        })
    });
}

fn bench(c: &mut Criterion) {
    bench_tree(c);
    bench_kind(c, "cartpole", &cartpole_space(), 1_000_000, 1_000_000);
    bench_kind(c, "frames", &frames_space(), 10_000, 10_000);
}

criterion_group!(benches, bench);
criterion_main!(benches);
