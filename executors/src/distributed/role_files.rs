//! What a distributed role's command line names on disk, which the cluster emitters rewrite to
//! where a cluster's nodes or pods find it, and the command line they are written into.

use std::ffi::OsString;
use std::path::PathBuf;

/// The files a role's command line names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoleFiles {
    /// The agent config.
    pub config: PathBuf,
    /// The run's token, which guards every call.
    pub token_file: Option<PathBuf>,
    /// This role's TLS certificate.
    pub tls_cert: Option<PathBuf>,
    /// Its key.
    pub tls_key: Option<PathBuf>,
    /// The authority that signed every role's certificate.
    pub tls_ca: Option<PathBuf>,
    /// Where the learner and the shards save.
    pub out: Option<PathBuf>,
    /// Where they resume from.
    pub resume: Option<PathBuf>,
    /// Whether they resume from `out` where their file is there.
    pub resume_if_present: bool,
    /// Where the learner records its input log (`--record`), which must outlive its node.
    pub record: Option<PathBuf>,
}

impl RoleFiles {
    /// The files given, in field order, config first (what the emitters' tests echo).
    #[cfg(test)]
    pub(crate) fn given(&self) -> Vec<&std::path::Path> {
        let optional = [
            &self.token_file,
            &self.tls_cert,
            &self.tls_key,
            &self.tls_ca,
            &self.out,
            &self.resume,
            &self.record,
        ];
        std::iter::once(&self.config)
            .chain(optional.into_iter().flatten())
            .map(PathBuf::as_path)
            .collect()
    }
}

/// The words of one role's `rlgraph serve` command line after the program's name, naming
/// `files`, for a role (`learner`, `replay`, `actor`) and, where the line gives it, its index.
pub type ServeWords<'a> = &'a dyn Fn(&RoleFiles, &str, Option<usize>) -> Vec<OsString>;
