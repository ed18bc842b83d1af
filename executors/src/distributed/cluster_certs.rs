//! A new CA and one certificate it signed, for a cluster whose roles all share that
//! certificate (`rlgraph certs`, and the tests of TLS).

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};

use super::error::DistributedError;

/// PEM text of a cluster's CA certificate, and of a certificate and private key it signed.
pub struct ClusterCerts {
    /// The CA's certificate: what every role trusts (`--tls-ca`).
    pub ca: String,
    /// The roles' certificate, naming every host (`--tls-cert`).
    pub cert: String,
    /// The certificate's private key (`--tls-key`).
    pub key: String,
}

/// Makes a CA and a certificate for `hosts` (IP addresses or DNS names), good for both
/// serving and calling.
///
/// The keys come from the operating system's random source, not a seed: a key anyone could
/// reproduce from a seed would protect nothing. The CA's key is not kept, so nobody can sign
/// another certificate with it; adding a host means making new files for every role.
pub fn cluster_certs(hosts: &[String]) -> Result<ClusterCerts, DistributedError> {
    if hosts.is_empty() {
        return Err(DistributedError::Setup(
            "a certificate needs at least one host name or address to name".into(),
        ));
    }
    if let Some(bad) = hosts.iter().find(|h| !is_host(h)) {
        return Err(DistributedError::Setup(format!(
            "{bad:?} is neither an IP address nor a DNS name (letters, digits and '-' in dot-separated labels)"
        )));
    }
    let failed = |what: &str, e: rcgen::Error| DistributedError::Setup(format!("cannot make the {what}: {e}"));
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| failed("CA", e))?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "rlgraph cluster CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca_key = KeyPair::generate().map_err(|e| failed("CA's key", e))?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| failed("CA", e))?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::new(hosts.to_vec())
        .map_err(|e| DistributedError::Setup(format!("host names {hosts:?}: {e}")))?;
    params.distinguished_name.push(DnType::CommonName, "rlgraph role");
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().map_err(|e| failed("roles' key", e))?;
    let cert = params
        .signed_by(&key, &issuer)
        .map_err(|e| failed("roles' certificate", e))?;
    Ok(ClusterCerts {
        ca: ca_cert.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// Whether `host` is an IP address or a DNS name that a client can check a certificate against.
fn is_host(host: &str) -> bool {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    let label = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    host.len() <= 253 && host.split('.').all(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_addresses_or_dns_names() {
        for good in ["127.0.0.1", "::1", "localhost", "node-3.cluster.example"] {
            assert!(is_host(good), "{good}");
        }
        for bad in ["", "bad name", "-x", "a..b", "x_y", "node!"] {
            assert!(!is_host(bad), "{bad}");
        }
        let err = cluster_certs(&["ok".into(), "bad name".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("\"bad name\""), "{err}");
    }
}
