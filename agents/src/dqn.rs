//! `DqnAgent`: DQN (Mnih et al. 2015) with double Q, dueling heads, n-step returns and
//! prioritized replay, as RLgraph's `DQNAgent`.

use std::collections::BTreeMap;
use std::path::Path;

use rand::Rng;
use rlgraph_components::losses::{dqn_loss, DqnLossSpec};
use rlgraph_components::{dueling_policy, layers_from_spec, optimizer, policy, synchronizable};
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Space, Value};
use rlgraph_core::{
    ApiCtx, Args, Backend, Component, CoreError, ErasedExecutor, GraphExecutor, HostState, HostTensor, Op, Param,
    Result,
};
use rlgraph_memories::{PrioritizedReplay, ReplayMemory};

use crate::agent::{Agent, Transition, UpdateSpec};
use crate::agent_graph::build_graph;
use crate::batch::{field, host_floats, stack, transition_inputs, transition_space, transitions_batch};
use crate::counters::Counters;
use crate::dqn_config::{DqnConfig, MemoryKind};
use crate::observe_buffer::NStepBuffer;
use crate::preprocessing::{preprocess, with_preprocessing};

enum Memory {
    Uniform(ReplayMemory),
    Prioritized(PrioritizedReplay),
}

impl Memory {
    fn insert(&mut self, batch: &Value) -> Result<()> {
        match self {
            Memory::Uniform(m) => m.insert_records(batch)?,
            Memory::Prioritized(m) => m.insert_records(batch)?,
        }
        Ok(())
    }

    fn size(&self) -> usize {
        match self {
            Memory::Uniform(m) => m.size(),
            Memory::Prioritized(m) => m.size(),
        }
    }

    fn state(&self) -> &dyn HostState {
        match self {
            Memory::Uniform(m) => m,
            Memory::Prioritized(m) => m,
        }
    }

    fn state_mut(&mut self) -> &mut dyn HostState {
        match self {
            Memory::Uniform(m) => m,
            Memory::Prioritized(m) => m,
        }
    }
}

/// A DQN agent on backend `B`.
pub struct DqnAgent<B: Backend> {
    exec: GraphExecutor<B>,
    config: DqnConfig,
    memory: Memory,
    buffer: NStepBuffer,
    counters: Counters,
    num_actions: usize,
    state_space: Space,
}

/// The Q-values of `policy` for `x`: the third output of a dueling policy's `get_q_values`,
/// or a plain policy's action-adapter outputs (the Categorical logits).
fn q_values<B: Backend>(ctx: &mut ApiCtx<'_, B>, policy: &str, dueling: bool, x: Op) -> Result<Op> {
    Ok(if dueling {
        ctx.call(policy, "get_q_values", &[x])?[2]
    } else {
        ctx.call(policy, "get_adapter_outputs", &[x])?[0]
    })
}

/// The DQN loss (`loss`, `loss_per_item`) of a batch `(states, actions, rewards, terminals,
/// next_states[, importance_weights])`.
fn dqn_loss_of<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    args: &Args,
    has_pre: bool,
    dueling: bool,
    double_q: bool,
) -> Result<Vec<Op>> {
    let s = preprocess(ctx, has_pre, args.get(0)?)?;
    let sp = preprocess(ctx, has_pre, args.get(4)?)?;
    let q_s = q_values(ctx, "policy", dueling, s)?;
    let qt_sp = q_values(ctx, "target-policy", dueling, sp)?;
    let mut loss_args = vec![q_s, args.get(1)?, args.get(2)?, args.get(3)?, qt_sp];
    if double_q {
        loss_args.push(q_values(ctx, "policy", dueling, sp)?);
    }
    if let Some(w) = args.opt(5) {
        loss_args.push(w);
    }
    ctx.call("loss", "loss", &loss_args)
}

impl<B: Backend> DqnAgent<B> {
    /// A DQN agent for `state_space` and a discrete `action_space` (an IntBox), from
    /// `config`, with every random choice drawn from `seed`.
    pub fn new(config: DqnConfig, state_space: &Space, action_space: &Space, seed: u64) -> Result<Self> {
        let num_actions = action_space
            .num_categories()
            .filter(|_| action_space.shape() == Some(&[][..]))
            .ok_or_else(|| CoreError::Config {
                at: "action_space".into(),
                reason: format!(
                    "DQN needs a scalar IntBox action space, got {}",
                    action_space.describe()
                ),
            })? as usize;
        let layers = layers_from_spec::<B>(&config.network_spec, "config.network_spec")?;
        let policy_component = if config.dueling {
            dueling_policy::<B>("policy", layers, num_actions, config.units_state_value_stream)
        } else {
            policy::<B>("policy", layers, action_space)?
        };
        let target = policy_component.copy_as("target-policy", false);
        let prioritized = matches!(config.memory, MemoryKind::Prioritized { .. });
        let loss_spec = DqnLossSpec {
            discount: config.discount,
            double_q: config.double_q,
            huber_loss: config.huber_loss,
            importance_weights: prioritized,
            n_step: config.n_step as u32,
        };
        let dueling = config.dueling;
        let double_q = config.double_q;
        let root = Component::<B>::new("dqn-agent")
            .with_sub(policy_component)
            .with_sub(target)
            .with_sub(dqn_loss("loss", loss_spec))
            .with_sub(optimizer("optimizer", config.optimizer.clone()))
            .with_sub(synchronizable("target-sync", config.update.sync_tau));
        let (root, has_pre) = with_preprocessing(root, &config.preprocessing_spec)?;
        let mut update_params: Vec<Param> = ["states", "actions", "rewards", "terminals", "next_states"]
            .into_iter()
            .map(Param::new)
            .collect();
        if prioritized {
            update_params.push(Param::new("importance_weights"));
        }
        let root = root
            .api("get_q_values", vec![Param::new("states")], move |ctx, args| {
                let x = preprocess(ctx, has_pre, args.get(0)?)?;
                Ok(vec![q_values(ctx, "policy", dueling, x)?])
            })
            .api("td_errors", update_params.clone(), move |ctx, args| {
                Ok(vec![dqn_loss_of(ctx, args, has_pre, dueling, double_q)?[1]])
            })
            .api("update", update_params, move |ctx, args| {
                let out = dqn_loss_of(ctx, args, has_pre, dueling, double_q)?;
                let vars = ctx.call("policy", "variables", &[])?;
                let step = ctx.call("optimizer", "step", &[vars[0], out[0]])?;
                Ok(vec![step[0], out[1]])
            })
            .api("sync_target", vec![], |ctx, _| {
                let src = ctx.call("policy", "variables", &[])?;
                let dst = ctx.call("target-policy", "variables", &[])?;
                ctx.call("target-sync", "sync", &[src[0], dst[0]])?;
                Ok(vec![])
            });
        let batch = |s: &Space| s.with_batch_rank(true);
        let scalar = || Space::from(FloatBox::new(Vec::<usize>::new())).with_batch_rank(true);
        let mut spaces = BTreeMap::from([
            ("states".to_string(), batch(state_space)),
            ("next_states".to_string(), batch(state_space)),
            ("actions".to_string(), batch(action_space)),
            ("rewards".to_string(), scalar()),
            (
                "terminals".to_string(),
                Space::from(BoolBox::new(Vec::<usize>::new())).with_batch_rank(true),
            ),
        ]);
        if prioritized {
            spaces.insert("importance_weights".into(), scalar());
        }
        let mut exec = build_graph(root, &spaces, config.device, seed)?;
        // The target starts equal to the policy.
        exec.execute("sync_target", &[])?;
        let record_space = transition_space(state_space, action_space)?;
        let memory = match config.memory {
            MemoryKind::Replay => Memory::Uniform(ReplayMemory::new("replay-memory", &record_space, config.capacity)?),
            MemoryKind::Prioritized { alpha, beta } => Memory::Prioritized(PrioritizedReplay::new(
                "prioritized-replay",
                &record_space,
                config.capacity,
                alpha,
                beta,
            )?),
        };
        Ok(DqnAgent {
            exec,
            buffer: NStepBuffer::new(config.n_step, config.discount),
            memory,
            counters: Counters::new(seed),
            num_actions,
            state_space: state_space.with_batch_rank(false),
            config,
        })
    }

    /// One gradient step on `inputs` (and a target sync when due); the loss and the per-item
    /// losses.
    fn learn(&mut self, inputs: &[Value]) -> Result<(f64, Option<Value>)> {
        let mut out = self.exec.execute("update", inputs)?.into_iter();
        let loss = match out.next() {
            Some(Value::Float32(a)) => a.data().first().copied().unwrap_or(f32::NAN) as f64,
            _ => f64::NAN,
        };
        self.counters.updates += 1;
        self.counters.steps_since_sync += self.config.update.update_interval;
        if self.counters.steps_since_sync >= self.config.update.sync_interval {
            self.exec.execute("sync_target", &[])?;
            self.counters.steps_since_sync = 0;
        }
        Ok((loss, out.next()))
    }

    /// The Q-values of a batch of states (`[n, actions]`).
    pub fn q_values(&mut self, states: &[Value]) -> Result<Vec<Vec<f32>>> {
        let batch = stack(states)?;
        let out = self.exec.execute("get_q_values", &[batch])?;
        match out.first() {
            Some(Value::Float32(a)) => Ok(a.data().chunks(self.num_actions).map(<[f32]>::to_vec).collect()),
            other => Err(CoreError::Config {
                at: "dqn-agent/get_q_values".into(),
                reason: format!("expected float Q-values, got {other:?}"),
            }),
        }
    }

    /// Every variable by scope path (policy, target, optimizer state).
    pub fn get_weights(&self) -> Result<BTreeMap<String, HostTensor>> {
        self.exec.variables()
    }

    /// Overwrites variables by scope path; all are checked before any is written.
    pub fn set_weights(&self, weights: &BTreeMap<String, HostTensor>) -> Result<()> {
        self.exec.set_variables(weights)
    }

    /// Saves everything a resumed run needs: variables, the executor's RNG, the replay
    /// memory, and the agent's counters and RNG. Pending n-step buffers are not saved; save
    /// at episode boundaries to lose nothing.
    pub fn save_checkpoint(&self, path: impl AsRef<Path>) -> Result<()> {
        self.exec
            .save_with(path, &[("memory", self.memory.state()), ("agent", &self.counters)])
    }

    /// Restores a checkpoint written by `save_checkpoint`; on error nothing changes.
    pub fn restore_checkpoint(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let DqnAgent {
            exec, memory, counters, ..
        } = self;
        exec.restore_with(path, &mut [("memory", memory.state_mut()), ("agent", counters)])
    }

    /// Environment steps observed.
    pub fn timesteps(&self) -> u64 {
        self.counters.timesteps
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        self.counters.updates
    }

    /// The priorities of the records held (`p^alpha`, as the sum tree holds them), oldest
    /// slot first; `None` for uniform replay.
    pub fn priorities(&self) -> Option<Vec<f64>> {
        match &self.memory {
            Memory::Prioritized(m) => Some((0..m.size()).map(|i| m.tree_priority(i).0).collect()),
            Memory::Uniform(_) => None,
        }
    }

    /// Records held by the replay memory.
    pub fn memory_size(&self) -> usize {
        self.memory.size()
    }

    /// The meta graph, for `rlgraph graph`.
    pub fn executor(&self) -> &GraphExecutor<B> {
        &self.exec
    }

    /// The space of one state.
    pub fn state_space(&self) -> &Space {
        &self.state_space
    }

    fn insert(&mut self, transitions: Vec<Transition>) -> Result<()> {
        if transitions.is_empty() {
            return Ok(());
        }
        let n = transitions.len();
        let batch = transitions_batch(&transitions)?;
        let Memory::Prioritized(m) = &mut self.memory else {
            return self.memory.insert(&batch);
        };
        if !self.config.worker_side_priorities {
            return m.insert_records(&batch).map_err(Into::into);
        }
        // Ape-X: each record enters at its own TD error under the current weights.
        let mut inputs = transition_inputs(&batch)?;
        inputs.push(Value::Float32(Array::new([n], vec![1.0; n])?));
        let td = self.exec.execute("td_errors", &inputs)?;
        let priorities = priorities_of(td.first())?;
        let first = m.index();
        m.insert_records(&batch)?;
        let capacity = self.config.capacity;
        let indices: Vec<usize> = (0..n).map(|i| (first + i) % capacity).collect();
        m.update_records(&indices, &priorities)?;
        Ok(())
    }
}

/// Replay priorities from per-item losses: `|loss| + 1e-6`, so no record becomes unreachable.
fn priorities_of(per_item: Option<&Value>) -> Result<Vec<f64>> {
    Ok(host_floats(per_item, "dqn-agent/td_errors")?
        .iter()
        .map(|l| l.abs() + 1e-6)
        .collect())
}

impl<B: Backend> Agent for DqnAgent<B> {
    fn get_actions(&mut self, states: &[Value], explore: bool, time_percentage: f64) -> Result<Vec<Value>> {
        let q = self.q_values(states)?;
        let epsilon = self.config.epsilon.value(time_percentage.clamp(0.0, 1.0));
        Ok(q.iter()
            .map(|row| {
                let greedy = row
                    .iter()
                    .enumerate()
                    .fold(
                        (0, f32::NEG_INFINITY),
                        |best, (i, &v)| if v > best.1 { (i, v) } else { best },
                    )
                    .0;
                let a = if explore && self.counters.rng.random::<f64>() < epsilon {
                    self.counters.rng.random_range(0..self.num_actions)
                } else {
                    greedy
                };
                Value::i32(a as i32)
            })
            .collect())
    }

    fn observe(&mut self, env_id: usize, transition: Transition) -> Result<()> {
        self.counters.timesteps += 1;
        let done = self.buffer.push(env_id, transition);
        self.insert(done)
    }

    fn update(&mut self, time_percentage: f64) -> Result<Option<f64>> {
        let batch_size = self.config.update.batch_size;
        if self.memory.size() < batch_size {
            return Ok(None);
        }
        let (records, indices, weights) = match &self.memory {
            Memory::Uniform(m) => (m.get_records(batch_size, &mut self.counters.rng)?, None, None),
            Memory::Prioritized(m) => {
                let s = m.get_records(batch_size, &mut self.counters.rng)?;
                let w = Value::Float32(Array::new([batch_size], s.weights.iter().map(|&w| w as f32).collect())?);
                (s.records, Some(s.indices), Some(w))
            }
        };
        let mut inputs = transition_inputs(&records)?;
        inputs.extend(weights);
        let _ = time_percentage;
        let (loss, per_item) = self.learn(&inputs)?;
        if let (Some(indices), Memory::Prioritized(m)) = (indices, &mut self.memory) {
            m.update_records(&indices, &priorities_of(per_item.as_ref())?)?;
        }
        Ok(Some(loss))
    }

    /// Records as the agent's own replay holds them (`states`, `actions`, `rewards`,
    /// `terminals`, `next_states`, and with prioritized replay optional
    /// `importance_weights`, else ones); priorities are not touched.
    fn update_from_batch(&mut self, batch: &Value, _time_percentage: f64) -> Result<f64> {
        let mut inputs = transition_inputs(batch)?;
        if matches!(self.memory, Memory::Prioritized(_)) {
            let n = match &inputs[2] {
                Value::Float32(r) => r.data().len(),
                other => {
                    return Err(CoreError::Config {
                        at: "update_from_batch.rewards".into(),
                        reason: format!("expected float rewards, got {}", other.kind_name()),
                    })
                }
            };
            inputs.push(match field(batch, "importance_weights") {
                Ok(w) => w,
                Err(_) => Value::Float32(Array::new([n], vec![1.0; n])?),
            });
        }
        Ok(self.learn(&inputs)?.0)
    }

    /// Clears the n-step buffers and resets the preprocessors.
    fn reset(&mut self) -> Result<()> {
        self.buffer = NStepBuffer::new(self.config.n_step, self.config.discount);
        if self.exec.api_methods().iter().any(|m| m == "reset") {
            self.exec.execute("reset", &[])?;
        }
        Ok(())
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }

    fn save_checkpoint(&self, path: &Path) -> Result<()> {
        DqnAgent::save_checkpoint(self, path)
    }

    fn restore_checkpoint(&mut self, path: &Path) -> Result<()> {
        DqnAgent::restore_checkpoint(self, path)
    }

    fn graph(&self) -> Option<&dyn ErasedExecutor> {
        Some(&self.exec)
    }

    fn graph_mut(&mut self) -> Option<&mut dyn ErasedExecutor> {
        Some(&mut self.exec)
    }
}
