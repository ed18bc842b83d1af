//! gRPC's health service on a replay shard: it answers without the run's token, says
//! SERVING while the shard works and NOT_SERVING from the moment it drains, while the shard
//! still answers; and a client in another language (Python's grpcio, its stubs compiled from
//! the project's .proto in the test) learns the record layout from Describe, inserts and
//! samples with it, and sees the same. Its metrics are scraped in Prometheus' text format.

use std::process::Command;
use std::time::Duration;

use executors::distributed::proto::{SampleRequest, StatsRequest, StopRequest};
use executors::distributed::{Access, MetricsBoard, MetricsServer};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

use super::replay_shard_over_grpc::{client_of, free_loopback_port, insert, new_shard, serve_at};

fn asking(service: &str) -> HealthCheckRequest {
    HealthCheckRequest {
        service: service.into(),
    }
}

#[test]
fn the_health_service_answers_without_the_token_and_says_not_serving_while_the_shard_drains() {
    let token = Some("s3cret-token".to_string());
    let server = Access {
        token: token.clone(),
        drain: Duration::from_millis(1500),
        ..Access::default()
    };
    let (rt, addr, task) = serve_at(new_shard(), server);
    let mut replay = client_of(
        &rt,
        addr,
        &Access {
            token,
            ..Access::default()
        },
    );
    // No token: a probe carries none.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
    let mut health = HealthClient::new(rt.block_on(channel.connect()).unwrap());
    for service in ["", "rlgraph.distributed.v1.Replay"] {
        let status = rt.block_on(health.check(asking(service))).unwrap().into_inner().status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }
    let unknown = rt.block_on(health.check(asking("no.such.Service"))).unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);

    let mut watch = rt.block_on(health.watch(asking(""))).unwrap().into_inner();
    let first = rt.block_on(watch.message()).unwrap().unwrap().status;
    rt.block_on(replay.stop(StopRequest {})).unwrap();
    let second = rt.block_on(watch.message()).unwrap().unwrap().status;
    assert_eq!(
        (first, second),
        (ServingStatus::Serving as i32, ServingStatus::NotServing as i32)
    );
    // Draining, it still answers, well after it was told to stop.
    std::thread::sleep(Duration::from_millis(500));
    rt.block_on(replay.stats(StatsRequest {})).unwrap();
    // And then it ends by itself.
    let ended = rt.block_on(async { tokio::time::timeout(Duration::from_secs(10), task).await });
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}

#[test]
fn a_python_grpc_client_learns_the_layout_from_describe_inserts_samples_and_sees_the_drain() {
    let Some(python) = rlgraph_envs::gym::python_for_tests().unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let server = Access {
        drain: Duration::from_secs(2),
        ..Access::default()
    };
    let (rt, addr, task) = serve_at(new_shard(), server);
    let out = std::env::temp_dir().join(format!("rlgraph-python-client-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/proto");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/replay_client.py");
    // Every call the script makes has a deadline, so it ends by itself.
    let run = Command::new(&python)
        .arg(script)
        .arg(addr.to_string())
        .arg(proto)
        .arg(&out)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&out).ok();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let seen: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(seen["health"], "SERVING", "{seen}");
    assert_eq!(seen["health_replay"], "SERVING", "{seen}");
    assert_eq!(seen["protocol_version"], 1, "{seen}");
    // The shard's records: FloatBox([4]) states, IntBox(2) actions (rlgraph's int32), one
    // float reward and one boolean terminal each, under their flat keys in key order.
    assert_eq!(
        seen["leaves"],
        serde_json::json!([
            ["/actions", "DTYPE_INT32", []],
            ["/next_states", "DTYPE_FLOAT32", [4]],
            ["/rewards", "DTYPE_FLOAT32", []],
            ["/states", "DTYPE_FLOAT32", [4]],
            ["/terminals", "DTYPE_BOOL", []],
        ]),
        "{seen}"
    );
    assert_eq!(seen["size_after_insert"], 6, "{seen}");
    // 6 rows drawn from the 6 records, each of 5 leaves checked against its slot's record.
    assert_eq!(
        (seen["sampled"].as_u64(), seen["weights"].as_u64()),
        (Some(6), Some(6)),
        "{seen}"
    );
    assert_eq!(seen["rows_checked"], 6 * 5, "{seen}");
    assert_eq!(seen["watch"], serde_json::json!(["SERVING", "NOT_SERVING"]), "{seen}");
    assert_eq!(seen["size_while_draining"], 6, "{seen}");
    let ended = rt.block_on(async { tokio::time::timeout(Duration::from_secs(10), task).await });
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}

/// `GET path` at `addr`: the status line and the body (bounded: 5 s).
fn http_get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

#[test]
fn a_shards_metrics_are_scraped_in_prometheus_text_format() {
    let board = MetricsBoard::new(&[("role", "replay"), ("index", "0")]);
    let at = free_loopback_port();
    let server = MetricsServer::start(at, board.clone()).unwrap();
    let (rt, addr, _task) = serve_at(new_shard().with_metrics(board), Access::default());
    let mut c = client_of(&rt, addr, &Access::default());
    rt.block_on(c.insert(insert(3, vec![1.0; 3]))).unwrap();
    rt.block_on(c.insert(insert(2, vec![1.0; 2]))).unwrap();
    rt.block_on(c.sample(SampleRequest {
        batch_size: 4,
        batches: 1,
    }))
    .unwrap();
    // One priority for two records: refused, and counted.
    rt.block_on(c.insert(insert(2, vec![1.0]))).unwrap_err();

    let (status, body) = http_get(at, "/metrics");
    assert!(status.contains("200"), "{status}");
    let value = |name: &str| -> f64 {
        let line = body
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{role=\"replay\",index=\"0\"}} ")))
            .unwrap_or_else(|| panic!("no {name} in\n{body}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(value("rlgraph_replay_records"), 5.0);
    assert_eq!(value("rlgraph_replay_records_inserted_total"), 5.0);
    assert_eq!(value("rlgraph_replay_batches_sampled_total"), 1.0);
    assert_eq!(value("rlgraph_replay_refused_total"), 1.0);
    assert!(value("rlgraph_replay_sample_seconds_total") > 0.0, "{body}");
    assert!(
        body.contains("# TYPE rlgraph_replay_records_inserted_total counter"),
        "{body}"
    );
    assert!(body.contains("# TYPE rlgraph_replay_records gauge"), "{body}");
    assert!(http_get(at, "/other").0.contains("404"));
    // Stopped with its handle (the drop joins its thread).
    drop(server);
}
