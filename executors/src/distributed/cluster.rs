//! The cluster spec: which address each role serves on, in the shape of TensorFlow's
//! ClusterSpec (`{"learner": ["10.0.0.1:7100"], "replay": [...], "actor": [...]}`), as
//! RLgraph's `impala_distributed_clusterspec.json` writes it.

use std::net::SocketAddr;

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
                a.parse::<SocketAddr>().map_err(|e| {
                    DistributedError::Setup(format!(
                        "cluster spec at '{role}[{i}]': {a:?} is not an IP address with a port ({e})"
                    ))
                })?;
            }
        }
        Ok(())
    }

    /// The address role `role` number `index` serves on.
    pub fn address(&self, role: Role, index: usize) -> Result<SocketAddr, DistributedError> {
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
        text.parse()
            .map_err(|e| DistributedError::Setup(format!("{} address {text:?}: {e}", role.name())))
    }

    /// The number of actors.
    pub fn actors(&self) -> usize {
        self.actor.len()
    }
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
