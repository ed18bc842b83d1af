//! Connections between roles: clients that carry the token and a deadline on every call, and
//! servers that check the token and cap message sizes; both over TLS when given certificates.

use std::future::Future;
use std::net::SocketAddr;

use http_body::Frame;
use http_body_util::BodyExt;
use tonic::codegen::{http, Bytes};
use tonic::server::NamedService;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint, Server};
use tower::layer::util::{Identity, Stack};
use tower::util::MapResponseLayer;

use super::access::{Access, Stamp};
use super::error::DistributedError;
use super::learner_hub::LearnerHub;
use super::proto::learner_server::LearnerServer;
use super::proto::replay_server::ReplayServer;
use super::proto::{learner_client, replay_client};
use super::replay_shard::ReplayShard;
use super::role_health::role_health;

/// A client of a replay shard.
pub type ReplayClient = replay_client::ReplayClient<InterceptedService<Channel, Stamp>>;
/// A client of the learner.
pub type LearnerClient = learner_client::LearnerClient<InterceptedService<Channel, Stamp>>;

/// A channel to `addr` that connects on first use (and again after the peer comes back), so
/// a role can start before its peers.
fn channel(addr: &str, access: &Access) -> Result<Channel, DistributedError> {
    let scheme = if access.tls.is_some() { "https" } else { "http" };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))
        .map_err(|e| DistributedError::Setup(format!("address {addr}: {e}")))?
        .connect_timeout(access.deadline)
        .timeout(access.deadline);
    if let Some(tls) = &access.tls {
        endpoint = endpoint
            .tls_config(tls.client())
            .map_err(|e| DistributedError::Setup(format!("TLS to {addr}: {e}")))?;
    }
    Ok(endpoint.connect_lazy())
}

/// A client of the replay shard at `addr` (`HOST:PORT`, the host an IP address or a DNS name
/// resolved on every connection). Must be called inside a tokio runtime.
pub fn replay_client(addr: impl std::fmt::Display, access: &Access) -> Result<ReplayClient, DistributedError> {
    Ok(
        replay_client::ReplayClient::with_interceptor(channel(&addr.to_string(), access)?, access.stamp())
            .max_decoding_message_size(access.max_message_bytes)
            .max_encoding_message_size(access.max_message_bytes),
    )
}

/// A client of the learner at `addr` (as [`replay_client()`]). Must be called inside a tokio
/// runtime.
pub fn learner_client(addr: impl std::fmt::Display, access: &Access) -> Result<LearnerClient, DistributedError> {
    Ok(
        learner_client::LearnerClient::with_interceptor(channel(&addr.to_string(), access)?, access.stamp())
            .max_decoding_message_size(access.max_message_bytes)
            .max_encoding_message_size(access.max_message_bytes),
    )
}

/// Accepted connections with Nagle's algorithm off. tonic's servers leave it on for an
/// incoming stream they are handed, and then every small reply (a sampled batch, an ack)
/// waited for the peer's delayed ACK: 24 ms per sample on loopback, 0.5 ms without.
fn incoming(listener: tokio::net::TcpListener) -> tonic::transport::server::TcpIncoming {
    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// Binds `addr` now, so a caller learns at once that the port is taken.
async fn bind(addr: SocketAddr, access: &Access) -> Result<tokio::net::TcpListener, DistributedError> {
    access.check_bind(addr)?;
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| DistributedError::Setup(format!("cannot listen on {addr}: {e}")))
}

/// An HTTP response of a gRPC server.
type HttpResponse = http::Response<tonic::body::Body>;

/// A server whose answers to over-long messages say RESOURCE_EXHAUSTED (`oversize_as_exhausted`).
type RoleServer = Server<Stack<MapResponseLayer<fn(HttpResponse) -> HttpResponse>, Identity>>;

/// A server for `addr`, speaking TLS when `access` has certificates.
fn server(addr: SocketAddr, access: &Access) -> Result<RoleServer, DistributedError> {
    let builder = match &access.tls {
        Some(tls) => Server::builder()
            .tls_config(tls.server())
            .map_err(|e| DistributedError::Setup(format!("TLS on {addr}: {e}")))?,
        None => Server::builder(),
    };
    let rewrite: fn(HttpResponse) -> HttpResponse = oversize_as_exhausted;
    Ok(builder.layer(MapResponseLayer::new(rewrite)))
}

/// tonic answers a message over the size limit with OUT_OF_RANGE; gRPC's convention for a
/// size limit is RESOURCE_EXHAUSTED, which clients in other languages test for. The status
/// comes in the headers (an answer with no body) or in the trailers (the limit found while
/// the body streamed in), so both are rewritten.
fn oversize_as_exhausted(mut response: HttpResponse) -> HttpResponse {
    size_limit_as_exhausted(response.headers_mut());
    let trailers: fn(Frame<Bytes>) -> Frame<Bytes> = |mut frame| {
        if let Some(trailers) = frame.trailers_mut() {
            size_limit_as_exhausted(trailers);
        }
        frame
    };
    response.map(|body| tonic::body::Body::new(body.map_frame(trailers)))
}

/// Turns `grpc-status: 11` about an over-long message into `8` (RESOURCE_EXHAUSTED).
fn size_limit_as_exhausted(headers: &mut http::HeaderMap) {
    let out_of_range = headers.get("grpc-status").is_some_and(|s| s == "11");
    // The message is percent-encoded, spaces included.
    let too_long = headers
        .get("grpc-message")
        .and_then(|m| m.to_str().ok())
        .is_some_and(|m| m.contains("message%20length%20too%20large"));
    if out_of_range && too_long {
        headers.insert("grpc-status", http::HeaderValue::from_static("8"));
    }
}

/// Serves `shard` on `addr` until `shutdown` completes or a peer calls `Stop`.
pub async fn serve_replay(
    shard: ReplayShard,
    addr: SocketAddr,
    access: &Access,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), DistributedError> {
    let listener = bind(addr, access).await?;
    let mut builder = server(addr, access)?;
    let mut shard = shard;
    shard.max_message_bytes = access.max_message_bytes;
    let stop = shard.stop_signal();
    let shard = std::sync::Arc::new(shard);
    if let Some(board) = shard.metrics_board() {
        // Weak: the board lives in the shard, and a strong reference would keep both alive.
        let weak = std::sync::Arc::downgrade(&shard);
        board.add_source(move || weak.upgrade().map(|s| s.metrics()).unwrap_or_default());
    }
    let saver = shard.checkpoints().map(|(path, every)| {
        let (shard, path) = (shard.clone(), path.to_path_buf());
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let (shard, path) = (shard.clone(), path.clone());
                // Saving locks the memory and writes a file: off the runtime's threads.
                let saved = tokio::task::spawn_blocking(move || shard.save(&path)).await;
                if let Ok(Err(e)) = saved {
                    super::log(&format!("replay shard: cannot save its memory: {e}"));
                }
            }
        })
    });
    let service = ReplayServer::from_arc(shard.clone())
        .max_decoding_message_size(access.max_message_bytes)
        .max_encoding_message_size(access.max_message_bytes);
    let (health, health_service) = role_health(<ReplayServer<ReplayShard> as NamedService>::NAME).await;
    let stopped = async move {
        tokio::select! {
            _ = shutdown => {}
            _ = stop.notified() => {}
        }
    };
    let signal = health.after(stopped, access.drain);
    let served = builder
        .add_service(health_service)
        .add_service(InterceptedService::new(service, access.gate()))
        .serve_with_incoming_shutdown(incoming(listener), signal)
        .await
        .map_err(|e| DistributedError::Setup(format!("replay shard on {addr}: {e}")));
    if let Some(saver) = saver {
        saver.abort();
    }
    // A shard that is stopped keeps what it held at the end.
    if let Some((path, _)) = shard.checkpoints() {
        shard.save(path)?;
    }
    served
}

/// Serves the learner's `hub` on `addr` until `shutdown` completes.
pub async fn serve_learner(
    hub: LearnerHub,
    addr: SocketAddr,
    access: &Access,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), DistributedError> {
    let listener = bind(addr, access).await?;
    let mut builder = server(addr, access)?;
    let mut hub = hub;
    hub.max_message_bytes = access.max_message_bytes;
    let service = LearnerServer::new(hub)
        .max_decoding_message_size(access.max_message_bytes)
        .max_encoding_message_size(access.max_message_bytes);
    let (health, health_service) = role_health(<LearnerServer<LearnerHub> as NamedService>::NAME).await;
    let signal = health.after(shutdown, access.drain);
    builder
        .add_service(health_service)
        .add_service(InterceptedService::new(service, access.gate()))
        .serve_with_incoming_shutdown(incoming(listener), signal)
        .await
        .map_err(|e| DistributedError::Setup(format!("learner on {addr}: {e}")))
}

/// A failed call, with the peer and method named.
pub(crate) fn call_failed(peer: &str, method: &'static str, status: tonic::Status) -> DistributedError {
    DistributedError::Call {
        peer: peer.to_string(),
        method,
        code: status.code(),
        status: format!("{:?}: {}", status.code(), status.message()),
    }
}
