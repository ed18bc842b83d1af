//! gRPC's standard health service (`grpc.health.v1.Health`, `Check` and `Watch`) on every
//! role's server: SERVING while the role answers, NOT_SERVING from the moment it begins to
//! drain, so Kubernetes' gRPC probes and a client's load balancer stop sending it work before
//! it goes. It answers without the run's token: probes carry none, and it tells nothing but
//! the status.

use std::time::Duration;

use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

/// A role's status in its health service: the whole server (`""`) and its own service by
/// gRPC name (`rlgraph.distributed.v1.Replay`), which move together.
#[derive(Clone)]
pub(crate) struct RoleHealth {
    reporter: HealthReporter,
    service: &'static str,
}

/// The health of the role serving `service`, SERVING, and the service that reports it.
pub(crate) async fn role_health(service: &'static str) -> (RoleHealth, HealthServer<impl Health>) {
    let (reporter, server) = tonic_health::server::health_reporter();
    let health = RoleHealth { reporter, service };
    health.set(ServingStatus::Serving).await;
    (health, server)
}

impl RoleHealth {
    /// Completes `grace` after `shutdown` does, draining meanwhile (see [`RoleHealth::drain`]):
    /// the shutdown signal a role's server is given.
    pub(crate) async fn after(self, shutdown: impl std::future::Future<Output = ()>, grace: Duration) {
        shutdown.await;
        self.drain(grace).await;
    }

    /// NOT_SERVING, then `grace` more of answering calls, so probes and peers see the role
    /// leave before its server stops taking them; then every `Watch` stream ends, as a
    /// graceful shutdown waits for the calls in flight and a watch would never end.
    pub(crate) async fn drain(&self, grace: Duration) {
        self.set(ServingStatus::NotServing).await;
        tokio::time::sleep(grace).await;
        let mut reporter = self.reporter.clone();
        for name in ["", self.service] {
            reporter.clear_service_status(name).await;
        }
    }

    async fn set(&self, status: ServingStatus) {
        for name in ["", self.service] {
            self.reporter.set_service_status(name, status).await;
        }
    }
}

/// Completes when the process is asked to end (SIGTERM, as Kubernetes and Slurm send before
/// they kill, or Ctrl-C); never, where signals cannot be watched.
pub async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                super::log("cannot watch for SIGTERM; the role stops only when a peer or the run stops it");
                std::future::pending().await
            }
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
