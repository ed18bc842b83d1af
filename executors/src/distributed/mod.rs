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
//!
//! The roles build with the `distributed` feature (the `rlgraph` program has it); without it
//! this module holds only what replaying a recorded learner needs and the cluster emitters
//! (plain text: a Slurm script, Kubernetes manifests), so a crate that trains in one process
//! compiles no gRPC, TLS or tokio.

mod error;
pub mod kubernetes_manifests;
pub(crate) mod learner_state;
mod role_files;
pub mod slurm_script;

pub(crate) use error::core_error;
pub use error::DistributedError;
pub use learner_state::distributed_algorithm;
pub use role_files::{RoleFiles, ServeWords};

// The roles and their wire need the gRPC, TLS and tokio stack: the `distributed` feature.
#[cfg(feature = "distributed")]
pub mod access;
#[cfg(feature = "distributed")]
mod actor_env;
#[cfg(feature = "distributed")]
mod actor_options;
#[cfg(feature = "distributed")]
mod actor_role;
#[cfg(feature = "distributed")]
pub mod cluster;
#[cfg(feature = "distributed")]
mod cluster_certs;
#[cfg(feature = "distributed")]
mod distributed_stats;
#[cfg(feature = "distributed")]
pub mod learner_hub;
#[cfg(feature = "distributed")]
mod learner_link;
#[cfg(feature = "distributed")]
mod learner_options;
#[cfg(feature = "distributed")]
pub(crate) mod learner_run;
#[cfg(feature = "distributed")]
pub(crate) mod learner_worker;
#[cfg(feature = "distributed")]
pub mod metrics;
#[cfg(feature = "distributed")]
pub mod peers;
#[cfg(feature = "distributed")]
mod ray_spec;
#[cfg(feature = "distributed")]
mod replay_actor;
#[cfg(feature = "distributed")]
mod replay_learner;
#[cfg(feature = "distributed")]
pub mod replay_shard;
#[cfg(feature = "distributed")]
mod role_health;
#[cfg(feature = "distributed")]
mod rollout_actor;
#[cfg(feature = "distributed")]
mod rollout_learner;
#[cfg(feature = "distributed")]
mod shard_outbox;
#[cfg(feature = "distributed")]
mod shard_service;
#[cfg(feature = "distributed")]
mod tls;
#[cfg(feature = "distributed")]
pub mod wire;

#[cfg(feature = "distributed")]
pub use access::Access;
#[cfg(feature = "distributed")]
pub use actor_options::{ActorOptions, ActorSummary};
#[cfg(feature = "distributed")]
pub use actor_role::run_actor;
#[cfg(feature = "distributed")]
pub use cluster::{ClusterSpec, Role};
#[cfg(feature = "distributed")]
pub use cluster_certs::{cluster_certs, ClusterCerts};
#[cfg(feature = "distributed")]
pub use distributed_stats::DistributedStats;
#[cfg(feature = "distributed")]
pub use learner_options::{LearnerEvaluation, LearnerOptions};
#[cfg(feature = "distributed")]
pub use learner_worker::LearnerWorker;
#[cfg(feature = "distributed")]
pub use metrics::{Metric, MetricsBoard, MetricsServer};
#[cfg(feature = "distributed")]
pub use ray_spec::RaySpec;
#[cfg(feature = "distributed")]
pub use role_health::termination;
#[cfg(feature = "distributed")]
pub use shard_service::{run_replay_shard, shard_file, ShardFiles};
#[cfg(feature = "distributed")]
pub use tls::Tls;

/// Writes one line to standard error; a closed stderr is ignored rather than a panic.
#[cfg(feature = "distributed")]
pub(crate) fn log(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The code generated from the `.proto`.
#[cfg(feature = "distributed")]
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("rlgraph.distributed.v1");
}
