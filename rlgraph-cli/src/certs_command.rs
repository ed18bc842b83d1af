//! `rlgraph certs` makes the TLS files of a cluster: a new CA, and one certificate naming
//! every host, which all roles share (`--tls-cert`, `--tls-key`, `--tls-ca`).

use std::path::PathBuf;

use clap::Args;
use executors::distributed::cluster_certs;
use serde_json::json;

use crate::output_files::write_file;

/// Arguments of `rlgraph certs`.
#[derive(Args, Clone, Debug)]
pub struct CertsArgs {
    /// The directory for `ca.pem`, `cert.pem` and `key.pem` (made if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Every host's IP address or DNS name, comma-separated, as the cluster spec names them.
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1,localhost")]
    pub hosts: Vec<String>,
    /// Replace files already there (every role then needs the new ones).
    #[arg(long)]
    pub force: bool,
}

/// Writes the three files; returns a JSON line naming them.
pub fn run(args: &CertsArgs) -> Result<String, String> {
    const FILES: [&str; 3] = ["ca.pem", "cert.pem", "key.pem"];
    if !args.force {
        if let Some(taken) = FILES.iter().map(|f| args.out.join(f)).find(|p| p.exists()) {
            return Err(format!(
                "{} exists; pass --force to replace it (every role then needs the new files)",
                taken.display()
            ));
        }
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot make {}: {e}", args.out.display()))?;
    let certs = cluster_certs(&args.hosts).map_err(|e| format!("--hosts: {e}"))?;
    write_file(&args.out, "ca.pem", certs.ca.as_bytes())?;
    write_file(&args.out, "cert.pem", certs.cert.as_bytes())?;
    let key = args.out.join("key.pem");
    rlgraph_core::write_private_atomically(&key, certs.key.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", key.display()))?;
    let [ca, cert, key] = FILES.map(|f| args.out.join(f).display().to_string());
    Ok(json!({"tls_ca": ca, "tls_cert": cert, "tls_key": key, "hosts": args.hosts}).to_string())
}
