//! RLgraph's GridWorld as table lookups: the host world's rules compiled once into
//! transition, reward and observation tables on the device.

use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::Value;
use rlgraph_core::{Backend, CoreError, DType, Device, HostTensor, Result};
use rlgraph_envs::{GridTables, GridWorld};

use crate::batched::Dynamics;

/// A grid world's dynamics over `[n, 1]` I64 states `pos * 4 + orientation / 90`.
pub struct GridWorldDynamics<B: Backend> {
    id: String,
    start: f64,
    num_actions_t: B::Tensor,
    first_action: B::Tensor,
    last_action: B::Tensor,
    next_state: B::Tensor,
    reward: B::Tensor,
    terminal: B::Tensor,
    observations: B::Tensor,
}

impl<B: Backend> GridWorldDynamics<B> {
    /// The dynamics of `world` (udlr or ftjb actions; any state representation) on `device`.
    pub fn new(id: &str, world: &GridWorld, device: Device) -> Result<Self> {
        let bad = |reason: String| CoreError::Config {
            at: format!("tensor env {id}"),
            reason,
        };
        let tables: GridTables = world.tables().map_err(|e| bad(e.to_string()))?;
        let transitions = tables.next_state.len();
        let ints = |v: Vec<i64>, shape: Vec<usize>| B::from_host(&HostTensor::i64(shape, v)?, device);
        let observations = observation_table::<B>(&tables.observations, device).map_err(|e| bad(e.to_string()))?;
        Ok(GridWorldDynamics {
            id: id.into(),
            start: tables.start_state as f64,
            first_action: B::scalar(0.0, DType::I64, device)?,
            last_action: B::scalar((tables.num_actions - 1) as f64, DType::I64, device)?,
            num_actions_t: B::scalar(tables.num_actions as f64, DType::I64, device)?,
            next_state: ints(tables.next_state.iter().map(|&s| s as i64).collect(), vec![transitions])?,
            reward: B::from_host(
                &HostTensor::f32([transitions], tables.reward.iter().map(|&r| r as f32).collect())?,
                device,
            )?,
            terminal: B::from_host(
                &HostTensor::u8([transitions], tables.terminal.iter().map(|&t| t as u8).collect())?,
                device,
            )?,
            observations,
        })
    }
}

/// Every state's observation stacked into one tensor `[states, ...]` (I64, or U8 images).
fn observation_table<B: Backend>(observations: &[Value], device: Device) -> Result<B::Tensor> {
    let shape_of = |v: &Value| match v {
        Value::Int32(a) => a.shape().to_vec(),
        Value::Uint8(a) => a.shape().to_vec(),
        _ => vec![],
    };
    let first = observations.first().ok_or_else(|| CoreError::Config {
        at: "grid world tables".into(),
        reason: "no states".into(),
    })?;
    let shape: Vec<usize> = std::iter::once(observations.len()).chain(shape_of(first)).collect();
    let host = match first {
        Value::Uint8(_) => HostTensor::u8(
            shape,
            observations
                .iter()
                .flat_map(|v| match v {
                    Value::Uint8(a) => a.data().to_vec(),
                    _ => vec![],
                })
                .collect(),
        )?,
        _ => HostTensor::i64(
            shape,
            observations
                .iter()
                .flat_map(|v| match v {
                    Value::Int32(a) => a.data().iter().map(|&x| x as i64).collect(),
                    _ => vec![],
                })
                .collect(),
        )?,
    };
    B::from_host(&host, device)
}

impl<B: Backend> Dynamics<B> for GridWorldDynamics<B> {
    fn id(&self) -> &str {
        &self.id
    }

    fn width(&self) -> usize {
        1
    }

    fn state_dtype(&self) -> DType {
        DType::I64
    }

    fn limit(&self) -> Option<usize> {
        None
    }

    /// The start field, facing up: the world is deterministic.
    fn start_state(&self, _rng: &mut ChaCha8Rng) -> Vec<f64> {
        vec![self.start]
    }

    fn start_box(&self) -> (Vec<f64>, Vec<f64>) {
        (vec![self.start], vec![self.start])
    }

    fn actions(&self, actions: &B::Tensor, n: usize) -> Result<B::Tensor> {
        let shape = B::shape(actions);
        if shape != [n] {
            return Err(CoreError::Config {
                at: format!("tensor env {}: step", self.id),
                reason: format!("expected one action per copy, shape [{n}], got {shape:?}"),
            });
        }
        // Integer bounds: libtorch's clamp with float bounds would promote the actions to float.
        B::minimum(
            &B::maximum(&B::cast(actions, DType::I64)?, &self.first_action)?,
            &self.last_action,
        )
    }

    fn advance(&self, s: &B::Tensor, a: &B::Tensor, _draws: &[B::Tensor]) -> Result<(B::Tensor, B::Tensor, B::Tensor)> {
        let index = B::add(&B::mul(&B::squeeze(s, 1)?, &self.num_actions_t)?, a)?;
        let next = B::unsqueeze(&B::index_select(&self.next_state, 0, &index)?, 1)?;
        let reward = B::index_select(&self.reward, 0, &index)?;
        let terminal = B::index_select(&self.terminal, 0, &index)?;
        Ok((next, reward, terminal))
    }

    fn observe(&self, state: &B::Tensor) -> Result<B::Tensor> {
        B::index_select(&self.observations, 0, &B::squeeze(state, 1)?)
    }
}
