//! Who may call a role and how long a call may take: loopback by default, a shared token on
//! every call when a role binds any other address, a deadline on every call, a cap on
//! message sizes, and TLS when certificates are given.

use std::net::SocketAddr;
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::{Request, Status};

use super::error::DistributedError;
use super::tls::Tls;

/// The metadata key that carries the token.
const TOKEN_KEY: &str = "authorization";

/// How a role talks to its peers.
#[derive(Clone, Debug)]
pub struct Access {
    /// The shared token, sent with and checked on every call (`None`: loopback only).
    pub token: Option<String>,
    /// The largest message a role accepts or sends, in bytes.
    pub max_message_bytes: usize,
    /// How long one call may take before it fails.
    pub deadline: Duration,
    /// Certificates for TLS on every connection (`None`: plain TCP).
    pub tls: Option<Tls>,
    /// How long a role keeps answering, its health NOT_SERVING, after it is told to stop (a
    /// shard: SIGTERM, Ctrl-C or a peer's `Stop`; the learner: the end of its run), so probes
    /// and peers see it leave.
    pub drain: Duration,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            token: None,
            max_message_bytes: 64 << 20,
            deadline: Duration::from_secs(10),
            tls: None,
            drain: Duration::ZERO,
        }
    }
}

impl Access {
    /// Reads the token from `path` (surrounding whitespace trimmed; it must not be empty).
    pub fn token_from_file(path: &std::path::Path) -> Result<String, DistributedError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DistributedError::Setup(format!("token file {}: {e}", path.display())))?;
        let token = text.trim().to_string();
        if token.is_empty() || token.chars().any(|c| !c.is_ascii_graphic()) {
            return Err(DistributedError::Setup(format!(
                "token file {}: the token must be non-empty printable ASCII without spaces",
                path.display()
            )));
        }
        Ok(token)
    }

    /// Refuses to serve on a non-loopback address without a token.
    pub fn check_bind(&self, addr: SocketAddr) -> Result<(), DistributedError> {
        if addr.ip().is_loopback() || self.token.is_some() {
            Ok(())
        } else {
            Err(DistributedError::Setup(format!(
                "refusing to serve on {addr} without a token: anyone who reaches it could feed the run; \
                 pass --token-file FILE (the same file to every role), or bind a 127.0.0.0/8 address"
            )))
        }
    }

    /// The server's check of every incoming call.
    pub fn gate(&self) -> Gate {
        Gate {
            expected: self.token.as_ref().map(|t| format!("Bearer {t}")),
        }
    }

    /// The client's stamp on every outgoing call: the token and the deadline.
    pub fn stamp(&self) -> Stamp {
        Stamp {
            token: self
                .token
                .as_ref()
                .and_then(|t| MetadataValue::try_from(format!("Bearer {t}")).ok()),
            deadline: self.deadline,
        }
    }
}

/// A server's check of the token on every call.
#[derive(Clone, Debug)]
pub struct Gate {
    expected: Option<String>,
}

impl Interceptor for Gate {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(req);
        };
        let given = req.metadata().get(TOKEN_KEY).map(|v| v.as_bytes()).unwrap_or(&[]);
        if constant_time_eq(given, expected.as_bytes()) {
            Ok(req)
        } else {
            Err(Status::unauthenticated(
                "missing or wrong token; pass the cluster's --token-file",
            ))
        }
    }
}

/// A client's token and deadline, put on every call.
#[derive(Clone, Debug)]
pub struct Stamp {
    token: Option<MetadataValue<Ascii>>,
    deadline: Duration,
}

impl Interceptor for Stamp {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(v) = &self.token {
            req.metadata_mut().insert(TOKEN_KEY, v.clone());
        }
        req.set_timeout(self.deadline);
        Ok(req)
    }
}

/// Compares without stopping at the first difference, so timing says nothing of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_without_a_token() {
        let open = Access::default();
        assert!(open.check_bind("127.0.0.1:7000".parse().unwrap()).is_ok());
        assert!(open.check_bind("127.3.4.5:7000".parse().unwrap()).is_ok());
        let err = open
            .check_bind("10.0.0.1:7000".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("--token-file"), "{err}");
        let closed = Access {
            token: Some("s3cret".into()),
            ..Access::default()
        };
        assert!(closed.check_bind("0.0.0.0:7000".parse().unwrap()).is_ok());
    }

    #[test]
    fn the_server_refuses_a_missing_or_wrong_token() {
        let server = Access {
            token: Some("s3cret".into()),
            ..Access::default()
        };
        let mut gate = server.gate();
        assert_eq!(
            gate.call(Request::new(())).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        let wrong = Access {
            token: Some("s3cres".into()),
            ..Access::default()
        };
        let req = wrong.stamp().call(Request::new(())).unwrap();
        assert_eq!(gate.call(req).unwrap_err().code(), tonic::Code::Unauthenticated);
        let req = server.stamp().call(Request::new(())).unwrap();
        assert!(gate.call(req).is_ok());
    }
}
