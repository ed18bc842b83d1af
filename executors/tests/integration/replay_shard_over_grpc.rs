//! A replay shard served on a loopback port and called as actors and the learner call it:
//! records go in and come back, and a malformed, oversized, out-of-space or unauthenticated
//! message gets a clear gRPC status, is counted, and loses nothing already stored; Describe
//! tells a client the record layout and the limits.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use agents::{transition_space, transitions_batch, Transition};
use executors::distributed::peers::{replay_client, serve_replay, ReplayClient};
use executors::distributed::proto::{
    InsertRequest, Nest, PriorityUpdate, SampleReply, SampleRequest, StatsRequest, StopRequest, Tensor,
};
use executors::distributed::replay_shard::ReplayShard;
use executors::distributed::wire::encode_value;
use executors::distributed::{cluster_certs, Access, ClusterCerts, DistributedError, Tls};
use rlgraph_core::spaces::{Array, IntBox, Space, Value};
use rlgraph_memories::PrioritizedReplay;
use tokio::runtime::Runtime;

pub(super) fn state_space() -> Space {
    Space::from(rlgraph_core::spaces::FloatBox::new([4]))
}

fn records(n: usize) -> Value {
    let transitions: Vec<Transition> = (0..n)
        .map(|i| Transition {
            state: Value::Float32(Array::new([4], vec![i as f32; 4]).unwrap()),
            action: Value::i32((i % 2) as i32),
            reward: 1.0,
            terminated: i % 3 == 0,
            truncated: false,
            next_state: Value::Float32(Array::new([4], vec![i as f32 + 0.5; 4]).unwrap()),
        })
        .collect();
    transitions_batch(&transitions).unwrap()
}

/// A shard of capacity 100 with generation 7.
pub(super) fn new_shard() -> ReplayShard {
    let space = transition_space(&state_space(), &Space::from(IntBox::new(2).unwrap())).unwrap();
    let memory = PrioritizedReplay::new("prioritized-replay", &space, 100, 0.6, 0.4).unwrap();
    ReplayShard::new("test shard", Box::new(memory), &space, 0, 7)
}

/// A new shard on a free loopback port, and a client of it that sends with `client_access`.
fn shard(server_access: Access, client_access: &Access) -> (Runtime, ReplayClient) {
    let (runtime, client, _) = serve(new_shard(), server_access, client_access);
    (runtime, client)
}

/// Serves `shard` on a free loopback port; a client of it, and the server's task.
fn serve(
    shard: ReplayShard,
    server_access: Access,
    client_access: &Access,
) -> (
    Runtime,
    ReplayClient,
    tokio::task::JoinHandle<Result<(), DistributedError>>,
) {
    let (runtime, addr, server) = serve_at(shard, server_access);
    let client = client_of(&runtime, addr, client_access);
    (runtime, client, server)
}

/// Serves `shard` on a free loopback port, once it listens; its address, and the server's task.
pub(super) fn serve_at(
    shard: ReplayShard,
    server_access: Access,
) -> (
    Runtime,
    SocketAddr,
    tokio::task::JoinHandle<Result<(), DistributedError>>,
) {
    let (runtime, addr) = (runtime(), free_loopback_port());
    let server = runtime.spawn(async move { serve_replay(shard, addr, &server_access, std::future::pending()).await });
    wait_until_listening(addr);
    (runtime, addr, server)
}

/// A one-thread runtime for a server under test.
pub(super) fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// A loopback address with a port free at the time of asking.
pub(super) fn free_loopback_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// Waits until a server listens on `addr` (bounded: 5 s).
pub(super) fn wait_until_listening(addr: SocketAddr) {
    for _ in 0..250 {
        if std::net::TcpStream::connect(addr).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A client of the shard at `addr`, calling with `access`.
pub(super) fn client_of(runtime: &Runtime, addr: SocketAddr, access: &Access) -> ReplayClient {
    let _inside = runtime.enter();
    replay_client(addr, access).unwrap()
}

/// The tensor at flat key `key` of sampled records.
/// Asks the shard behind `c` for `batches` batches of `batch_size` records.
fn sample(rt: &Runtime, c: &mut ReplayClient, batch_size: u32, batches: u32) -> Result<SampleReply, tonic::Status> {
    rt.block_on(c.sample(SampleRequest { batch_size, batches }))
        .map(tonic::Response::into_inner)
}

fn leaf(records: Option<Nest>, key: &str) -> Tensor {
    records.unwrap().leaves.into_iter().find(|t| t.key == key).unwrap()
}

pub(super) fn insert(n: usize, priorities: Vec<f64>) -> InsertRequest {
    InsertRequest {
        actor: 0,
        weight_version: 1,
        records: Some(encode_value(&records(n)).unwrap()),
        priorities,
    }
}

#[test]
fn records_go_in_and_come_back_with_their_slots_and_weights() {
    let (rt, mut c) = shard(Access::default(), &Access::default());
    let size = rt
        .block_on(c.insert(insert(3, vec![1.0, 2.0, 3.0])))
        .unwrap()
        .into_inner()
        .size;
    assert_eq!(size, 3);
    let s = sample(&rt, &mut c, 3, 1).unwrap();
    assert_eq!((s.indices.len(), s.weights.len(), s.generation, s.size), (3, 3, 7, 3));
    let states = leaf(s.records, "/states");
    assert_eq!(states.shape, vec![3, 4]);
    // Two batches of 1 in one call: 2 records, batch after batch, counted as two batches.
    let two = sample(&rt, &mut c, 1, 2).unwrap();
    assert_eq!((two.indices.len(), two.weights.len()), (2, 2));
    assert_eq!(leaf(two.records, "/states").shape, vec![2, 4]);
    // More than 65,536 records in all is refused by name, though each batch would fit.
    let over = sample(&rt, &mut c, 40_000, 2).unwrap_err();
    assert_eq!(over.code(), tonic::Code::InvalidArgument);
    assert!(over.message().contains("batch_size * batches"), "{}", over.message());
    // Asking for more than the shard holds gives an empty batch, not an error.
    let empty_shard_asks = sample(&rt, &mut c, 4, 1).unwrap();
    assert!(empty_shard_asks.records.is_none());
    // Priorities for this incarnation are applied; for another one, counted as stale. The
    // first message carries 3 of the learner's updates merged; a slot given twice keeps the
    // later priority.
    for generation in [7, 6] {
        rt.block_on(c.update_priorities(PriorityUpdate {
            indices: vec![0, 1, 0],
            priorities: vec![0.5, 0.5, 4.0],
            generation,
            updates: 3,
        }))
        .unwrap();
    }
    // The importance weight of a drawn slot is (p_i / p_min)^(-alpha * beta) (alpha 0.6,
    // beta 0.4): with slot 0 at 4.0 (the later of its two), slot 1 at 0.5 and slot 2 at the
    // insert's 3.0, slot 0 weighs 8^-0.24, slot 1 1, slot 2 6^-0.24.
    let expected = [8f64.powf(-0.24), 1.0, 6f64.powf(-0.24)];
    // Drawn until slot 0, whose priority the merge decides, comes up (the draws are seeded).
    let mut draws = 0;
    loop {
        let s = sample(&rt, &mut c, 3, 1).unwrap();
        draws += 1;
        for (i, w) in s.indices.iter().zip(&s.weights) {
            assert!((w - expected[*i as usize]).abs() < 1e-9, "slot {i} weighs {w}");
        }
        if s.indices.contains(&0) {
            break;
        }
        assert!(draws < 50, "slot 0 never drawn");
    }
    // Both messages carried 3 updates: 3 applied, 3 stale.
    let stats = rt.block_on(c.stats(StatsRequest {})).unwrap().into_inner();
    assert_eq!(
        (
            stats.records_inserted,
            stats.batches_sampled,
            stats.priority_updates,
            stats.stale_updates,
            stats.refused
        ),
        (3, 3 + draws, 3, 3, 1)
    );
}

#[test]
fn malformed_and_oversized_messages_are_refused_and_nothing_stored_is_lost() {
    let server = Access {
        max_message_bytes: 16 << 10,
        ..Access::default()
    };
    // The client would send anything, as a hostile or broken peer might.
    let client = Access {
        max_message_bytes: 64 << 20,
        ..Access::default()
    };
    let (rt, mut c) = shard(server, &client);
    rt.block_on(c.insert(insert(3, vec![1.0; 3]))).unwrap();

    // A wrong shape: states of width 5 in a space of width 4.
    let mut bad = insert(2, vec![1.0; 2]);
    let states = bad
        .records
        .as_mut()
        .unwrap()
        .leaves
        .iter_mut()
        .find(|t| t.key == "/states")
        .unwrap();
    states.shape = vec![2, 5];
    states.data = vec![0; 2 * 5 * 4];
    let status = rt.block_on(c.insert(bad)).unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("states"), "{}", status.message());

    // An action outside the space, and a NaN priority.
    let mut bad = insert(2, vec![1.0; 2]);
    let actions = bad
        .records
        .as_mut()
        .unwrap()
        .leaves
        .iter_mut()
        .find(|t| t.key == "/actions")
        .unwrap();
    actions.data[..4].copy_from_slice(&5i32.to_le_bytes());
    let status = rt.block_on(c.insert(bad)).unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("actions"), "{}", status.message());
    let status = rt.block_on(c.insert(insert(2, vec![1.0, f64::NAN]))).unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("priorit"), "{}", status.message());

    // A batch too large for the server's 16 KiB limit (500 records are about 20 KB).
    let status = rt.block_on(c.insert(insert(500, vec![1.0; 500]))).unwrap_err();
    // gRPC's code for a size limit, not tonic's OUT_OF_RANGE.
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");

    // Priorities for slots that hold nothing.
    let status = rt
        .block_on(c.update_priorities(PriorityUpdate {
            indices: vec![99],
            priorities: vec![1.0],
            generation: 7,
            updates: 1,
        }))
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);

    let stats = rt.block_on(c.stats(StatsRequest {})).unwrap().into_inner();
    assert_eq!(stats.size, 3, "the records stored before are all still there");
    // Refused by the shard itself (the oversized message never reached it).
    assert_eq!(stats.refused, 4);
    let s = sample(&rt, &mut c, 3, 1).unwrap();
    assert!(s.records.is_some());
}

#[test]
fn a_shard_with_a_token_refuses_calls_without_it() {
    let with = |token: Option<&str>| Access {
        token: token.map(str::to_string),
        ..Access::default()
    };
    for (client, ok) in [
        (with(None), false),
        (with(Some("wrong")), false),
        (with(Some("s3cret")), true),
    ] {
        let (rt, mut c) = shard(with(Some("s3cret")), &client);
        let result = rt.block_on(c.stats(StatsRequest {}));
        match ok {
            true => assert!(result.is_ok(), "{result:?}"),
            false => assert_eq!(result.unwrap_err().code(), tonic::Code::Unauthenticated),
        }
    }
}

#[test]
fn a_restarted_shard_comes_back_with_what_it_held_at_its_last_save() {
    let dir = std::env::temp_dir().join(format!("rlgraph-shard-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("replay-0.safetensors");
    let _ = std::fs::remove_file(&path);
    let hour = Duration::from_secs(3600);

    // The first incarnation saves when it is stopped.
    let first = new_shard().with_checkpoints(&path, hour);
    let (rt, mut c, server) = serve(first, Access::default(), &Access::default());
    rt.block_on(c.insert(insert(3, vec![1.0, 2.0, 3.0]))).unwrap();
    rt.block_on(c.stop(StopRequest {})).unwrap();
    rt.block_on(server).unwrap().unwrap();
    assert!(path.exists());

    // A shard with nothing saved starts empty; the second incarnation holds the 3 records.
    let mut empty = new_shard();
    assert!(!empty.restore(&dir.join("none.safetensors")).unwrap());
    let mut second = new_shard();
    assert!(second.restore(&path).unwrap());
    assert_eq!(second.size(), 3);
    // Its counters come back with the records and count on: 3 inserted before, 2 now.
    assert_eq!(second.records_inserted(), 3);
    let (rt, mut c, _) = serve(second, Access::default(), &Access::default());
    rt.block_on(c.insert(insert(2, vec![1.0, 1.0]))).unwrap();
    let stats = rt.block_on(c.stats(StatsRequest {})).unwrap().into_inner();
    assert_eq!((stats.size, stats.records_inserted), (5, 5));
    let s = sample(&rt, &mut c, 3, 1).unwrap();
    let states = leaf(s.records, "/states");
    // Each sampled state is one of the records inserted (both inserts count from 0): 4 equal
    // floats 0, 1 or 2.
    for row in states.data.chunks(16) {
        let x = f32::from_le_bytes(row[..4].try_into().unwrap());
        assert!([0.0, 1.0, 2.0].contains(&x), "{x}");
        assert!(row.chunks(4).all(|b| f32::from_le_bytes(b.try_into().unwrap()) == x));
    }

    // A file written before shards saved their counters (the memory alone) still loads, its
    // counters at zero.
    let old = dir.join("replay-old.safetensors");
    let mut memory = {
        let space = transition_space(&state_space(), &Space::from(IntBox::new(2).unwrap())).unwrap();
        PrioritizedReplay::new("prioritized-replay", &space, 100, 0.6, 0.4).unwrap()
    };
    agents::Replay::insert(&mut memory, &records(4), None).unwrap();
    rlgraph_core::checkpoint::save_host_states(&old, &[("memory", agents::Replay::state(&memory))]).unwrap();
    let mut from_old = new_shard();
    assert!(from_old.restore(&old).unwrap());
    assert_eq!((from_old.size(), from_old.records_inserted()), (4, 0));
    // A counters part that is there but wrong is the file's error, not a silent zero.
    struct Wrong;
    impl rlgraph_core::HostState for Wrong {
        fn save_state(&self) -> rlgraph_core::Result<rlgraph_core::SavedState> {
            Ok(rlgraph_core::SavedState {
                tensors: Default::default(),
                meta: serde_json::json!({"records_inserted": "many"}),
            })
        }
        fn check_state(&self, _: &rlgraph_core::SavedState) -> rlgraph_core::Result<()> {
            Ok(())
        }
        fn load_state(&mut self, _: rlgraph_core::SavedState) -> rlgraph_core::Result<()> {
            Ok(())
        }
    }
    let wrong = dir.join("replay-wrong.safetensors");
    rlgraph_core::checkpoint::save_host_states(
        &wrong,
        &[("memory", agents::Replay::state(&memory)), ("counters", &Wrong)],
    )
    .unwrap();
    let mut from_wrong = new_shard();
    let err = from_wrong.restore(&wrong).unwrap_err().to_string();
    assert!(err.contains("records_inserted"), "{err}");
    assert_eq!(from_wrong.size(), 0);

    // A damaged file is refused, and the shard stays as it was.
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let mut third = new_shard();
    assert!(third.restore(&path).is_err());
    assert_eq!(third.size(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Access over TLS with `cert`'s certificate and key, trusting `ca`'s CA.
fn tls_access(cert: &ClusterCerts, ca: &ClusterCerts, server_name: Option<&str>) -> Access {
    let tls = Tls::from_pem(
        cert.cert.as_bytes(),
        cert.key.as_bytes(),
        ca.ca.as_bytes(),
        server_name.map(str::to_string),
    )
    .unwrap();
    Access {
        tls: Some(tls),
        deadline: Duration::from_secs(3),
        ..Access::default()
    }
}

#[test]
fn over_tls_only_peers_whose_certificate_the_clusters_ca_signed_get_through() {
    let ours = cluster_certs(&["127.0.0.1".to_string()]).unwrap();
    let theirs = cluster_certs(&["127.0.0.1".to_string()]).unwrap();
    let member = tls_access(&ours, &ours, None);
    let (rt, addr, _server) = serve_at(new_shard(), member.clone());
    let mut c = client_of(&rt, addr, &member);
    rt.block_on(c.insert(insert(2, vec![1.0; 2]))).unwrap();

    let plain = Access {
        deadline: Duration::from_secs(3),
        ..Access::default()
    };
    let outsiders = [
        ("plain TCP", plain),
        // Trusts our CA, but presents a certificate another CA signed: the server refuses it.
        ("a certificate of another CA", tls_access(&theirs, &ours, None)),
        // Does not trust our CA: the client refuses the server.
        ("another cluster", tls_access(&theirs, &theirs, None)),
    ];
    for (who, access) in &outsiders {
        let mut outsider = client_of(&rt, addr, access);
        let refused = rt.block_on(outsider.insert(insert(3, vec![1.0; 3])));
        assert!(refused.is_err(), "{who} got through: {refused:?}");
    }
    let stats = rt.block_on(c.stats(StatsRequest {})).unwrap().into_inner();
    assert_eq!(stats.size, 2, "only the member's records are stored");
}

#[test]
fn over_tls_a_certificate_naming_no_address_is_checked_against_the_server_name() {
    let certs = cluster_certs(&["rlgraph-cluster".to_string()]).unwrap();
    let (rt, addr, _server) = serve_at(new_shard(), tls_access(&certs, &certs, None));
    // Dialing 127.0.0.1, which the certificate does not name, is refused...
    let mut by_address = client_of(&rt, addr, &tls_access(&certs, &certs, None));
    assert!(rt.block_on(by_address.stats(StatsRequest {})).is_err());
    // ...and checking the name the certificate carries gets through.
    let mut by_name = client_of(&rt, addr, &tls_access(&certs, &certs, Some("rlgraph-cluster")));
    rt.block_on(by_name.stats(StatsRequest {})).unwrap();
}

#[test]
fn describe_tells_a_client_the_record_layout_and_the_limits() {
    use executors::distributed::proto::{DescribeRequest, Dtype};
    let server = Access {
        max_message_bytes: 1 << 20,
        ..Access::default()
    };
    let (rt, mut c) = shard(server, &Access::default());
    let d = rt.block_on(c.describe(DescribeRequest {})).unwrap().into_inner();
    assert_eq!((d.protocol_version, d.role.as_str()), (1, "replay"));
    assert_eq!((d.max_message_bytes, d.max_batch_size), (1 << 20, 65_536));
    // The space reads back as the shard's record space.
    let space = transition_space(&state_space(), &Space::from(IntBox::new(2).unwrap())).unwrap();
    assert_eq!(Space::from_json_str(&d.space_json).unwrap(), space);
    // Its leaves are what an insert carries: the same keys in the same order, dtypes, and
    // shapes without the batch dimension.
    let sent = encode_value(&records(3)).unwrap();
    assert_eq!(d.leaves.len(), sent.leaves.len());
    for (leaf, tensor) in d.leaves.iter().zip(&sent.leaves) {
        assert_eq!((&leaf.key, leaf.dtype), (&tensor.key, tensor.dtype));
        assert_eq!(leaf.shape, tensor.shape[1..], "{}", leaf.key);
    }
    let states = d.leaves.iter().find(|l| l.key == "/states").expect("a states leaf");
    assert_eq!(
        (states.dtype, states.shape.as_slice()),
        (Dtype::Float32 as i32, &[4u64][..])
    );
}

#[test]
fn a_learner_describes_its_rollout_space_or_that_it_takes_none() {
    use executors::distributed::learner_hub::LearnerHub;
    use executors::distributed::peers::{learner_client, serve_learner};
    use executors::distributed::proto::DescribeRequest;
    let rollout = Space::from(rlgraph_core::spaces::FloatBox::new([3])).with_time_rank(true, true);
    for (hub, expected) in [
        (LearnerHub::with_rollouts(&rollout, 4), Some(&rollout)),
        (LearnerHub::default(), None),
    ] {
        let (runtime, addr) = (runtime(), free_loopback_port());
        let access = Access::default();
        let served = access.clone();
        runtime.spawn(async move { serve_learner(hub, addr, &served, std::future::pending()).await });
        wait_until_listening(addr);
        let mut client = {
            let _inside = runtime.enter();
            learner_client(addr, &access).unwrap()
        };
        let d = runtime
            .block_on(client.describe(DescribeRequest {}))
            .unwrap()
            .into_inner();
        assert_eq!(
            (d.protocol_version, d.role.as_str(), d.max_batch_size),
            (1, "learner", 0)
        );
        assert_eq!(d.max_message_bytes, 64 << 20);
        match expected {
            Some(space) => {
                assert_eq!(&Space::from_json_str(&d.space_json).unwrap(), space);
                assert_eq!(d.leaves.len(), 1);
                assert_eq!(
                    (d.leaves[0].key.as_str(), d.leaves[0].shape.as_slice()),
                    ("", &[3u64][..])
                );
            }
            // An Ape-X learner takes records at the shards, nothing itself.
            None => assert!(d.space_json.is_empty() && d.leaves.is_empty(), "{d:?}"),
        }
    }
}
