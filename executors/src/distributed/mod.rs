//! Ape-X and IMPALA across processes and machines over gRPC (`tonic`, `prost`): actors, replay shards
//! and a learner, each a role that one `rlgraph serve` process runs.
//!
//! ```text
//!            Insert(records, priorities, version)            Sample / UpdatePriorities
//! actor i ───────────────────────────────────────► shard j ◄─────────────────────────── learner
//!    ▲                                                                                     │
//!    └────────────── GetWeights(have_version) / Report(frames, returns) ──────────────────┘
//! ```
//!
//! The wire is `proto/rlgraph/distributed/v1/distributed.proto`, compiled at build time by
//! protox (no system `protoc`). Every call carries a deadline; roles bind loopback unless
//! given a token, which then guards every call; message sizes are capped; with certificates,
//! every connection is mutual TLS.

pub mod access;
mod actor_env;
mod apex_actor;
mod apex_learner;
mod apex_spec;
pub mod cluster;
mod cluster_certs;
mod error;
mod impala_actor;
mod impala_learner;
pub mod learner_hub;
mod learner_link;
mod learner_options;
pub(crate) mod learner_run;
pub(crate) mod learner_worker;
pub mod metrics;
pub mod peers;
pub mod replay_shard;
mod role_health;
mod shard_outbox;
mod shard_service;
mod tls;
pub mod wire;

pub use access::Access;
pub use apex_actor::{run_apex_actor, ActorOptions, ActorSummary};
pub use apex_learner::DistributedStats;
pub use apex_spec::ApexSpec;
pub use cluster::{ClusterSpec, Role};
pub use cluster_certs::{cluster_certs, ClusterCerts};
pub use error::DistributedError;
pub use impala_actor::run_impala_actor;
pub use learner_options::{LearnerEvaluation, LearnerOptions};
pub use learner_worker::{DistributedAlgorithm, LearnerWorker};
pub use metrics::{Metric, MetricsBoard, MetricsServer};
pub use role_health::termination;
pub use shard_service::{run_replay_shard, shard_file, ShardFiles};
pub use tls::Tls;

/// Writes one line to standard error; a closed stderr is ignored rather than a panic.
pub(crate) fn log(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The code generated from the `.proto`.
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("rlgraph.distributed.v1");
}
