//! The cluster spec: which address each role serves on, in the shape of TensorFlow's
//! ClusterSpec (`{"learner": ["10.0.0.1:7100"], "replay": [...], "actor": [...]}`), as
//! RLgraph's `impala_distributed_clusterspec.json` writes it. An address is an IP address or
//! a DNS name with a port (`learner-0.rlgraph:7100`, as Kubernetes names a StatefulSet's
//! pods): peers dial the name, resolved on every connection, and the role named listens on
//! every interface at its port (loopback for `localhost`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

use super::error::DistributedError;

/// Each role's addresses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// The learner's address (exactly one).
    pub learner: Vec<String>,
    /// The replay shards' addresses (Ape-X; none for IMPALA).
    #[serde(default)]
    pub replay: Vec<String>,
    /// One entry per actor. Actors only dial out, so their addresses are not used; their
    /// count is the number of actors the run expects.
    #[serde(default)]
    pub actor: Vec<String>,
}

/// A role in a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The learner.
    Learner,
    /// A replay shard.
    Replay,
    /// An actor.
    Actor,
}

impl Role {
    /// The role's name in a cluster spec.
    pub fn name(self) -> &'static str {
        match self {
            Role::Learner => "learner",
            Role::Replay => "replay",
            Role::Actor => "actor",
        }
    }
}

impl ClusterSpec {
    /// Reads and checks a cluster spec from JSON text.
    pub fn parse(text: &str) -> Result<Self, DistributedError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let spec: ClusterSpec = serde_path_to_error::deserialize(de)
            .map_err(|e| DistributedError::Setup(format!("cluster spec at '{}': {}", e.path(), e.inner())))?;
        spec.check()?;
        Ok(spec)
    }

    /// A cluster on one machine: the learner and `shards` replay shards on consecutive
    /// loopback ports from `base_port`, and `actors` actors.
    pub fn local(base_port: u16, shards: usize, actors: usize) -> Result<Self, DistributedError> {
        let port = |i: usize| {
            u16::try_from(i)
                .ok()
                .and_then(|i| base_port.checked_add(i))
                .ok_or_else(|| DistributedError::Setup(format!("ports from {base_port} run past 65535")))
        };
        Ok(ClusterSpec {
            learner: vec![format!("127.0.0.1:{}", port(0)?)],
            replay: (1..=shards)
                .map(|i| Ok(format!("127.0.0.1:{}", port(i)?)))
                .collect::<Result<_, DistributedError>>()?,
            actor: (0..actors).map(|i| format!("actor-{i}")).collect(),
        })
    }

    fn check(&self) -> Result<(), DistributedError> {
        if self.learner.len() != 1 {
            return Err(DistributedError::Setup(format!(
                "cluster spec at 'learner': expected exactly one address, got {}",
                self.learner.len()
            )));
        }
        for (role, list) in [("learner", &self.learner), ("replay", &self.replay)] {
            for (i, a) in list.iter().enumerate() {
                host_and_port(a)
                    .map_err(|why| DistributedError::Setup(format!("cluster spec at '{role}[{i}]': {a:?} {why}")))?;
            }
        }
        Ok(())
    }

    /// The address role `role` number `index` listens on: its IP address; for a DNS name
    /// every interface (`0.0.0.0`) at its port, but loopback for `localhost` (and names
    /// under it, RFC 6761), which must not be reachable from elsewhere.
    pub fn address(&self, role: Role, index: usize) -> Result<SocketAddr, DistributedError> {
        let entry = self.endpoint(role, index)?;
        let (host, port) = host_and_port(&entry)
            .map_err(|why| DistributedError::Setup(format!("{} address {entry:?} {why}", role.name())))?;
        let host = host.to_ascii_lowercase();
        let ip = match host.parse::<IpAddr>() {
            Ok(ip) => ip,
            Err(_) if host == "localhost" || host.ends_with(".localhost") => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Err(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        };
        Ok(SocketAddr::new(ip, port))
    }

    /// The address peers dial for role `role` number `index`, as the spec writes it.
    pub fn endpoint(&self, role: Role, index: usize) -> Result<String, DistributedError> {
        let list = match role {
            Role::Learner => &self.learner,
            Role::Replay => &self.replay,
            Role::Actor => {
                return Err(DistributedError::Setup(
                    "actors serve nothing, so they have no address".into(),
                ))
            }
        };
        let text = list.get(index).ok_or_else(|| {
            DistributedError::Setup(format!(
                "the cluster spec has {} {} address(es); index {index} is not one",
                list.len(),
                role.name()
            ))
        })?;
        Ok(text.clone())
    }

    /// The number of actors.
    pub fn actors(&self) -> usize {
        self.actor.len()
    }
}

/// `HOST:PORT` (an IPv6 host in brackets) split, or why it is not one.
fn host_and_port(entry: &str) -> Result<(&str, u16), String> {
    if let Ok(addr) = entry.parse::<SocketAddr>() {
        let host = entry.rsplit_once(':').map_or(entry, |(h, _)| h);
        return Ok((host.trim_start_matches('[').trim_end_matches(']'), addr.port()));
    }
    let (host, port) = entry
        .rsplit_once(':')
        .ok_or("is not HOST:PORT (an IP address or DNS name, and a port)")?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("has no port from 0 to 65535 after its ':' ({port:?})"))?;
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    let numeric = host.split('.').all(|l| l.chars().all(|c| c.is_ascii_digit()));
    if host.len() > 253 || numeric || !host.split('.').all(label_ok) {
        return Err(format!(
            "has a host {host:?} that is neither an IP address nor a DNS name"
        ));
    }
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rlgraphs_cluster_spec_reads() {
        let text = include_str!("../../../configs/rlgraph/impala_distributed_clusterspec.json");
        let spec = ClusterSpec::parse(text).unwrap();
        assert_eq!(spec.address(Role::Learner, 0).unwrap().port(), 8000);
        assert_eq!(spec.actors(), 2);
    }

    #[test]
    fn hosts_may_be_dns_names_which_their_roles_listen_for_on_every_interface() {
        let spec = ClusterSpec::parse(
            r#"{"learner": ["learner-0.rlgraph.default.svc:7100"], "replay": ["10.0.0.2:7101", "[::1]:7102"]}"#,
        )
        .unwrap();
        assert_eq!(
            spec.endpoint(Role::Learner, 0).unwrap(),
            "learner-0.rlgraph.default.svc:7100"
        );
        assert_eq!(spec.address(Role::Learner, 0).unwrap(), "0.0.0.0:7100".parse().unwrap());
        // `localhost` stays on the loopback interface.
        let local = ClusterSpec::parse(r#"{"learner": ["LocalHost:7100"]}"#).unwrap();
        assert_eq!(
            local.address(Role::Learner, 0).unwrap(),
            "127.0.0.1:7100".parse().unwrap()
        );
        assert_eq!(spec.address(Role::Replay, 0).unwrap(), "10.0.0.2:7101".parse().unwrap());
        assert_eq!(spec.address(Role::Replay, 1).unwrap(), "[::1]:7102".parse().unwrap());
        for (entry, why) in [
            ("learner-0:70000", "port"),
            ("bad_host:1", "neither an IP address nor a DNS name"),
            ("10.0.0.300:1", "neither an IP address nor a DNS name"),
            ("-lead.example:1", "neither"),
            ("no-port", "HOST:PORT"),
        ] {
            let err = ClusterSpec::parse(&format!(r#"{{"learner": ["{entry}"]}}"#))
                .unwrap_err()
                .to_string();
            assert!(err.contains("learner[0]") && err.contains(why), "{entry}: {err}");
        }
    }

    #[test]
    fn bad_specs_name_the_place() {
        let err = ClusterSpec::parse(r#"{"learner": ["localhost"]}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("learner[0]"), "{err}");
        let err = ClusterSpec::parse(r#"{"learner": [], "replay": []}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("exactly one"), "{err}");
        let err = ClusterSpec::parse(r#"{"learner": ["127.0.0.1:1"], "shards": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("shards"), "{err}");
        let spec = ClusterSpec::local(7000, 1, 2).unwrap();
        let err = spec.address(Role::Replay, 1).unwrap_err().to_string();
        assert!(err.contains("index 1"), "{err}");
        assert!(ClusterSpec::local(65535, 1, 1).is_err());
    }
}
