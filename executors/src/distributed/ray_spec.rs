//! The distributed settings RLgraph keeps under `execution_spec.ray_spec` (its Ape-X
//! executor's), read as this executor's options: how often actors pull weights, how many records they send at once, how deep the
//! learner prefetches, how many environments each actor steps, and the default numbers of
//! actors and shards. The rest of `ray_spec` (Redis, CPU and GPU counts) means nothing
//! without Ray and is left alone.

use serde_json::Value as Json;

use super::error::DistributedError;

/// The distributed executor's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RaySpec {
    /// Actor steps between weight pulls (`executor_spec.weight_sync_steps`).
    pub weight_sync_steps: u64,
    /// Records per insert (`executor_spec.num_worker_samples`).
    pub records_per_insert: usize,
    /// Sample requests in flight per shard (`executor_spec.replay_sampling_task_depth`).
    pub prefetch_depth: usize,
    /// Environment copies per actor (`worker_spec.num_worker_environments`).
    pub envs_per_actor: usize,
    /// Actors, unless the command line says (`executor_spec.num_sample_workers`).
    pub actors: usize,
    /// Replay shards, unless the command line says (`executor_spec.num_replay_workers`).
    pub shards: usize,
}

impl Default for RaySpec {
    fn default() -> Self {
        RaySpec {
            weight_sync_steps: 100,
            records_per_insert: 50,
            prefetch_depth: 2,
            envs_per_actor: 1,
            actors: 2,
            shards: 1,
        }
    }
}

impl RaySpec {
    /// The settings in an agent config's `execution_spec.ray_spec`, with defaults for those
    /// it lacks; a value of the wrong kind is refused with its key.
    pub fn from_config(config: &Json) -> Result<Self, DistributedError> {
        let mut spec = RaySpec::default();
        let ray = config.pointer("/execution_spec/ray_spec");
        let Some(ray) = ray.filter(|r| !r.is_null()) else {
            return Ok(spec);
        };
        let count = |pointer: &str, max: u64| -> Result<Option<u64>, DistributedError> {
            match ray.pointer(pointer) {
                None | Some(Json::Null) => Ok(None),
                Some(v) => match v.as_u64() {
                    Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
                    _ => Err(DistributedError::Setup(format!(
                        "config.execution_spec.ray_spec{}: expected a whole number from 1 to {max}, got {v}",
                        pointer.replace('/', ".")
                    ))),
                },
            }
        };
        if let Some(n) = count("/executor_spec/weight_sync_steps", 1 << 40)? {
            spec.weight_sync_steps = n;
        }
        if let Some(n) = count("/executor_spec/num_worker_samples", 1 << 20)? {
            spec.records_per_insert = n as usize;
        }
        if let Some(n) = count("/executor_spec/replay_sampling_task_depth", 64)? {
            spec.prefetch_depth = n as usize;
        }
        if let Some(n) = count("/worker_spec/num_worker_environments", 4096)? {
            spec.envs_per_actor = n as usize;
        }
        if let Some(n) = count("/executor_spec/num_sample_workers", 1024)? {
            spec.actors = n as usize;
        }
        if let Some(n) = count("/executor_spec/num_replay_workers", 256)? {
            spec.shards = n as usize;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rlgraphs_apex_cartpole_settings_read() {
        let text = include_str!("../../../configs/rlgraph/apex_agent_cartpole.json");
        let spec = RaySpec::from_config(&serde_json::from_str(text).unwrap()).unwrap();
        assert_eq!(
            spec,
            RaySpec {
                weight_sync_steps: 100,
                records_per_insert: 50,
                prefetch_depth: 1,
                envs_per_actor: 2,
                actors: 2,
                shards: 1,
            }
        );
    }

    #[test]
    fn a_bad_setting_is_refused_by_key() {
        let config = serde_json::json!({"execution_spec": {"ray_spec": {"executor_spec": {"weight_sync_steps": 0}}}});
        let err = RaySpec::from_config(&config).unwrap_err().to_string();
        assert!(err.contains("ray_spec.executor_spec.weight_sync_steps"), "{err}");
        assert_eq!(
            RaySpec::from_config(&serde_json::json!({})).unwrap(),
            RaySpec::default()
        );
    }
}
