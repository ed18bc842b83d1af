//! A replay shard over loopback gRPC against the same prioritized memory called in process,
//! in the same run: one actor's insert of 50 CartPole records, the learner's sample of 32
//! (with its decoding), a flood of 64 fake actors inserting at once (records/s), and the
//! learner's sampling with 4 requests in flight while that flood goes on (batches/s).
//!
//! `cargo bench -p executors --bench replay_shard`

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use agents::{transition_space, transitions_batch, Replay, Transition};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use executors::distributed::peers::{replay_client, serve_replay, ReplayClient};
use executors::distributed::proto::{InsertRequest, SampleRequest};
use executors::distributed::replay_shard::ReplayShard;
use executors::distributed::wire::{decode_value, encode_value};
use executors::distributed::Access;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Array, FloatBox, IntBox, Space, Value};
use rlgraph_memories::PrioritizedReplay;
use tokio::runtime::Runtime;

const CAPACITY: usize = 100_000;

fn spaces() -> (Space, Space) {
    (Space::from(FloatBox::new([4])), Space::from(IntBox::new(2).unwrap()))
}

fn records(n: usize) -> Value {
    let t: Vec<Transition> = (0..n)
        .map(|i| Transition {
            state: Value::Float32(Array::new([4], vec![i as f32 * 0.01; 4]).unwrap()),
            action: Value::i32((i % 2) as i32),
            reward: 1.0,
            terminated: false,
            truncated: false,
            next_state: Value::Float32(Array::new([4], vec![i as f32 * 0.01 + 0.005; 4]).unwrap()),
        })
        .collect();
    transitions_batch(&t).unwrap()
}

fn memory() -> PrioritizedReplay {
    let (s, a) = spaces();
    PrioritizedReplay::new(
        "prioritized-replay",
        &transition_space(&s, &a).unwrap(),
        CAPACITY,
        0.6,
        0.4,
    )
    .unwrap()
}

/// A shard on a free loopback port, its server on a runtime of one thread (one shard, one
/// core), and a client runtime.
fn shard() -> (Runtime, Runtime, ReplayClient) {
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let addr: SocketAddr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (s, a) = spaces();
    let shard = ReplayShard::new("bench", Box::new(memory()), &transition_space(&s, &a).unwrap(), 0, 1);
    server.spawn(async move { serve_replay(shard, addr, &Access::default(), std::future::pending()).await });
    while std::net::TcpStream::connect(addr).is_err() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client = {
        let _inside = clients.enter();
        replay_client(addr, &Access::default()).unwrap()
    };
    (server, clients, client)
}

fn insert_request(n: usize) -> InsertRequest {
    InsertRequest {
        actor: 0,
        weight_version: 1,
        records: Some(encode_value(&records(n)).unwrap()),
        priorities: vec![1.0; n],
    }
}

fn bench(c: &mut Criterion) {
    let (s, a) = spaces();
    let space = transition_space(&s, &a).unwrap().with_batch_rank(true);
    let batch = records(50);
    let priorities = vec![1.0; 50];
    let (_server, clients, mut client) = shard();
    let request = insert_request(50);

    let mut g = c.benchmark_group("replay_shard_insert_50");
    g.throughput(Throughput::Elements(50));
    let mut local = memory();
    g.bench_function("in_process", |b| {
        b.iter(|| local.insert(&batch, Some(&priorities)).unwrap())
    });
    g.bench_function("grpc_loopback", |b| {
        b.iter(|| clients.block_on(client.insert(request.clone())).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("replay_shard_sample_32");
    g.throughput(Throughput::Elements(32));
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    g.bench_function("in_process", |b| b.iter(|| local.sample(32, &mut rng).unwrap()));
    g.bench_function("grpc_loopback_and_decode", |b| {
        b.iter(|| {
            let reply = clients
                .block_on(client.sample(SampleRequest {
                    batch_size: 32,
                    batches: 1,
                }))
                .unwrap()
                .into_inner();
            decode_value(reply.records.as_ref().unwrap(), &space).unwrap()
        })
    });
    g.finish();

    // 64 fake actors, each sending 10 batches of 50 records at once.
    let mut g = c.benchmark_group("replay_shard_flood");
    let (actors, batches) = (64, 10);
    g.throughput(Throughput::Elements((actors * batches * 50) as u64));
    g.sample_size(10);
    g.bench_function("64_actors_grpc", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                clients.block_on(async {
                    let tasks: Vec<_> = (0..actors)
                        .map(|_| {
                            let (mut c, r) = (client.clone(), request.clone());
                            tokio::spawn(async move {
                                for _ in 0..batches {
                                    c.insert(r.clone()).await.unwrap();
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.unwrap();
                    }
                });
                total += start.elapsed();
            }
            total
        })
    });
    g.bench_function("64_actors_in_process_one_after_another", |b| {
        b.iter(|| {
            for _ in 0..actors * batches {
                local.insert(&batch, Some(&priorities)).unwrap();
            }
        })
    });
    g.finish();

    // The learner's side while the 64 actors keep inserting: 200 batches of 32, with 4
    // requests in flight as the learner's prefetcher keeps them (batches/s).
    let mut g = c.benchmark_group("replay_shard_sample_during_flood");
    let (samples, depth) = (200, 4);
    g.throughput(Throughput::Elements(samples));
    g.sample_size(10);
    let flooding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flood: Vec<_> = (0..actors)
        .map(|_| {
            let (mut c, r, on) = (client.clone(), request.clone(), flooding.clone());
            clients.spawn(async move {
                while on.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = c.insert(r.clone()).await;
                }
            })
        })
        .collect();
    g.bench_function("sample_32_depth_4_grpc_and_decode", |b| {
        b.iter(|| {
            clients.block_on(async {
                let per_task = samples / depth;
                let tasks: Vec<_> = (0..depth)
                    .map(|_| {
                        let (mut c, space) = (client.clone(), space.clone());
                        tokio::spawn(async move {
                            for _ in 0..per_task {
                                let reply = c
                                    .sample(SampleRequest {
                                        batch_size: 32,
                                        batches: 1,
                                    })
                                    .await
                                    .unwrap()
                                    .into_inner();
                                decode_value(reply.records.as_ref().unwrap(), &space).unwrap();
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            })
        })
    });
    flooding.store(false, std::sync::atomic::Ordering::Relaxed);
    for f in flood {
        let _ = clients.block_on(f);
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
