//! TLS between roles (rustls, with ring): every role presents a certificate signed by the
//! cluster's CA and accepts only peers whose certificate that CA signed (mutual TLS), so a
//! role cannot be impersonated and nothing on the wire can be read or altered.

use std::path::Path;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, Server, ServerTlsConfig};

use super::error::DistributedError;

/// One role's TLS files, read into memory: its certificate and key, and the CA that signed
/// every role's certificate.
#[derive(Clone)]
pub struct Tls {
    cert: Vec<u8>,
    key: Vec<u8>,
    ca: Vec<u8>,
    /// The name a server's certificate is checked against; `None`: the address dialed
    /// (certificates then name the hosts' IP addresses).
    server_name: Option<String>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Tls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads the three PEM files and checks, before any call, that they hold a certificate,
    /// its key and a CA that rustls accepts.
    pub fn from_files(
        cert: &Path,
        key: &Path,
        ca: &Path,
        server_name: Option<String>,
    ) -> Result<Self, DistributedError> {
        let read = |flag: &str, path: &Path, label: &str| {
            let place = format!("{flag} {}", path.display());
            let bytes = std::fs::read(path).map_err(|e| DistributedError::Setup(format!("{place}: {e}")))?;
            check_pem(&place, &bytes, label)?;
            Ok::<_, DistributedError>(bytes)
        };
        Tls::built(
            read("--tls-cert", cert, "CERTIFICATE")?,
            read("--tls-key", key, "PRIVATE KEY")?,
            read("--tls-ca", ca, "CERTIFICATE")?,
            server_name,
        )
    }

    /// TLS from PEM text, checked as [`Tls::from_files`] checks its files.
    pub fn from_pem(cert: &[u8], key: &[u8], ca: &[u8], server_name: Option<String>) -> Result<Self, DistributedError> {
        check_pem("--tls-cert", cert, "CERTIFICATE")?;
        check_pem("--tls-key", key, "PRIVATE KEY")?;
        check_pem("--tls-ca", ca, "CERTIFICATE")?;
        Tls::built(cert.to_vec(), key.to_vec(), ca.to_vec(), server_name)
    }

    /// TLS from PEM blocks already checked by label; both sides are built once to check the
    /// rest.
    fn built(cert: Vec<u8>, key: Vec<u8>, ca: Vec<u8>, server_name: Option<String>) -> Result<Self, DistributedError> {
        let tls = Tls {
            cert,
            key,
            ca,
            server_name,
        };
        tls.check()?;
        Ok(tls)
    }

    /// Builds both sides once, so a key that does not match its certificate, or a file
    /// rustls cannot parse, is reported at start rather than at the first call.
    fn check(&self) -> Result<(), DistributedError> {
        Server::builder()
            .tls_config(self.server())
            .map_err(|e| DistributedError::Setup(format!("--tls-cert/--tls-key: {}", error_chain(&e))))?;
        Endpoint::from_static("https://127.0.0.1:1")
            .tls_config(self.client())
            .map_err(|e| {
                DistributedError::Setup(format!("--tls-ca/--tls-cert/--tls-server-name: {}", error_chain(&e)))
            })?;
        Ok(())
    }

    /// The server's side: present the role's certificate, require one the CA signed.
    pub(crate) fn server(&self) -> ServerTlsConfig {
        ServerTlsConfig::new()
            .identity(Identity::from_pem(&self.cert, &self.key))
            .client_ca_root(Certificate::from_pem(&self.ca))
    }

    /// The client's side: trust only the CA, and present the role's certificate.
    pub(crate) fn client(&self) -> ClientTlsConfig {
        let config = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&self.ca))
            .identity(Identity::from_pem(&self.cert, &self.key));
        match &self.server_name {
            Some(name) => config.domain_name(name.clone()),
            None => config,
        }
    }
}

/// Refuses `bytes` (given by `flag`) unless they hold a PEM block whose label contains `label`.
fn check_pem(flag: &str, bytes: &[u8], label: &str) -> Result<(), DistributedError> {
    let text = String::from_utf8_lossy(bytes);
    let has_block = text
        .lines()
        .any(|line| line.starts_with("-----BEGIN ") && line.contains(label));
    if has_block {
        Ok(())
    } else {
        Err(DistributedError::Setup(format!(
            "{flag}: expected a PEM file with a '{label}' block (-----BEGIN ...); \
             `rlgraph certs --out DIR` makes a CA, a certificate and its key"
        )))
    }
}

/// An error with its causes, which tonic keeps in `source()`.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::cluster_certs;

    #[test]
    fn files_that_cannot_work_are_refused_at_start_by_flag() {
        let a = cluster_certs(&["127.0.0.1".into()]).unwrap();
        let b = cluster_certs(&["127.0.0.1".into()]).unwrap();
        assert!(Tls::from_pem(a.cert.as_bytes(), a.key.as_bytes(), a.ca.as_bytes(), None).is_ok());

        let not_pem = Tls::from_pem(b"hello", a.key.as_bytes(), a.ca.as_bytes(), None).unwrap_err();
        assert!(not_pem.to_string().contains("--tls-cert"), "{not_pem}");
        let key_for_ca = Tls::from_pem(a.cert.as_bytes(), a.key.as_bytes(), a.key.as_bytes(), None).unwrap_err();
        assert!(key_for_ca.to_string().contains("--tls-ca"), "{key_for_ca}");
        // A key that is not the certificate's.
        let mismatched = Tls::from_pem(a.cert.as_bytes(), b.key.as_bytes(), a.ca.as_bytes(), None).unwrap_err();
        assert!(mismatched.to_string().contains("--tls-key"), "{mismatched}");
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let a = cluster_certs(&["127.0.0.1".into()]).unwrap();
        let tls = Tls::from_pem(a.cert.as_bytes(), a.key.as_bytes(), a.ca.as_bytes(), None).unwrap();
        assert!(!format!("{tls:?}").contains("PRIVATE"));
    }
}
