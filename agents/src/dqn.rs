//! `DqnAgent`: DQN (Mnih et al. 2015) with double Q, dueling heads, n-step returns and
//! prioritized replay, as RLgraph's `DQNAgent`.

use std::collections::BTreeMap;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlgraph_components::losses::{dqn_loss, DqnLossSpec};
use rlgraph_components::{dueling_policy, layers_from_spec, optimizer, policy, preprocessor_stack, synchronizable};
use rlgraph_core::spaces::{Array, BoolBox, FloatBox, Space, Value};
use rlgraph_core::{
    rng_from_json, rng_to_json, ApiCtx, Backend, BuildOptions, Component, CoreError, GraphExecutor, HostState,
    HostTensor, Op, Param, Result, SavedState,
};
use rlgraph_memories::{PrioritizedReplay, ReplayMemory};

use crate::agent::{Agent, Transition, UpdateSpec};
use crate::batch::stack;
use crate::dqn_config::{DqnConfig, MemoryKind};
use crate::observe_buffer::NStepBuffer;

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

/// The agent's own counters and RNG, so a checkpoint resumes exactly.
struct Counters {
    rng: ChaCha8Rng,
    timesteps: u64,
    updates: u64,
    steps_since_sync: u64,
}

impl HostState for Counters {
    fn save_state(&self) -> Result<SavedState> {
        Ok(SavedState {
            tensors: BTreeMap::new(),
            meta: {
                let mut meta = rng_to_json(&self.rng);
                meta["timesteps"] = self.timesteps.into();
                meta["updates"] = self.updates.into();
                meta["steps_since_sync"] = self.steps_since_sync.into();
                meta
            },
        })
    }

    fn check_state(&self, state: &SavedState) -> Result<()> {
        parse_counters(state).map(|_| ())
    }

    fn load_state(&mut self, state: SavedState) -> Result<()> {
        *self = parse_counters(&state)?;
        Ok(())
    }
}

fn parse_counters(state: &SavedState) -> Result<Counters> {
    let bad = |reason: String| CoreError::Checkpoint {
        path: "(agent counters)".into(),
        reason,
    };
    let m = &state.meta;
    let rng = rng_from_json(m).map_err(bad)?;
    let count = |k: &str| m[k].as_u64().ok_or_else(|| bad(format!("{k} is missing or malformed")));
    Ok(Counters {
        rng,
        timesteps: count("timesteps")?,
        updates: count("updates")?,
        steps_since_sync: count("steps_since_sync")?,
    })
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

fn preprocess<B: Backend>(ctx: &mut ApiCtx<'_, B>, has: bool, x: Op) -> Result<Op> {
    Ok(if has {
        ctx.call("preprocessor-stack", "preprocess", &[x])?[0]
    } else {
        x
    })
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
        let has_pre = !config.preprocessing_spec.is_empty();
        let dueling = config.dueling;
        let double_q = config.double_q;
        let mut root = Component::<B>::new("dqn-agent")
            .with_sub(policy_component)
            .with_sub(target)
            .with_sub(dqn_loss("loss", loss_spec))
            .with_sub(optimizer("optimizer", config.optimizer.clone()))
            .with_sub(synchronizable("target-sync", 1.0));
        if has_pre {
            let pre = config
                .preprocessing_spec
                .iter()
                .enumerate()
                .map(|(i, s)| rlgraph_components::from_spec::<B>(s, &format!("config.preprocessing_spec[{i}]")))
                .collect::<Result<Vec<_>>>()?;
            let pre = pre
                .into_iter()
                .enumerate()
                .map(|(i, c)| c.copy_as(format!("{}-{i}", c.name()), true))
                .collect();
            root = root.with_sub(preprocessor_stack("preprocessor-stack", pre));
        }
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
            .api("update", update_params, move |ctx, args| {
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
                let out = ctx.call("loss", "loss", &loss_args)?;
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
        let mut exec = GraphExecutor::build(root, &spaces, &BuildOptions::default(), seed)?;
        // The target starts equal to the policy.
        exec.execute("sync_target", &[])?;
        let record_space = Space::dict([
            ("states", state_space.with_batch_rank(false)),
            ("actions", action_space.with_batch_rank(false)),
            ("rewards", Space::from(FloatBox::new(Vec::<usize>::new()))),
            ("terminals", Space::from(BoolBox::new(Vec::<usize>::new()))),
            ("next_states", state_space.with_batch_rank(false)),
        ])?;
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
            counters: Counters {
                rng: ChaCha8Rng::seed_from_u64(seed.wrapping_add(0x5eed)),
                timesteps: 0,
                updates: 0,
                steps_since_sync: 0,
            },
            num_actions,
            state_space: state_space.with_batch_rank(false),
            config,
        })
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

    /// Writes the policy's variables (the model) to a safetensors file.
    pub fn export_model(&self, path: impl AsRef<Path>) -> Result<()> {
        self.exec.save(path)
    }

    /// Reads variables written by `export_model`.
    pub fn import_model(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.exec.restore(path)
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
        let states: Vec<Value> = transitions.iter().map(|t| t.state.clone()).collect();
        let next: Vec<Value> = transitions.iter().map(|t| t.next_state.clone()).collect();
        let actions: Vec<Value> = transitions.iter().map(|t| t.action.clone()).collect();
        let batch = Value::Dict(BTreeMap::from([
            ("states".to_string(), stack(&states)?),
            ("next_states".to_string(), stack(&next)?),
            ("actions".to_string(), stack(&actions)?),
            (
                "rewards".to_string(),
                Value::Float32(Array::new([n], transitions.iter().map(|t| t.reward as f32).collect())?),
            ),
            (
                "terminals".to_string(),
                Value::Bool(Array::new([n], transitions.iter().map(|t| t.terminated).collect())?),
            ),
        ]));
        self.memory.insert(&batch)
    }
}

fn field(batch: &Value, key: &str) -> Result<Value> {
    match batch {
        Value::Dict(d) => d.get(key).cloned(),
        _ => None,
    }
    .ok_or_else(|| CoreError::Config {
        at: "replay-memory".into(),
        reason: format!("sampled records lack {key}"),
    })
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
        let mut inputs = vec![
            field(&records, "states")?,
            field(&records, "actions")?,
            field(&records, "rewards")?,
            field(&records, "terminals")?,
            field(&records, "next_states")?,
        ];
        inputs.extend(weights);
        let _ = time_percentage;
        let out = self.exec.execute("update", &inputs)?;
        let loss = match out.first() {
            Some(Value::Float32(a)) => a.data().first().copied().unwrap_or(f32::NAN) as f64,
            _ => f64::NAN,
        };
        if let (Some(indices), Memory::Prioritized(m), Some(Value::Float32(per_item))) =
            (indices, &mut self.memory, out.get(1))
        {
            let priorities: Vec<f64> = per_item.data().iter().map(|&l| (l as f64).abs() + 1e-6).collect();
            m.update_records(&indices, &priorities)?;
        }
        self.counters.updates += 1;
        self.counters.steps_since_sync += self.config.update.update_interval;
        if self.counters.steps_since_sync >= self.config.update.sync_interval {
            self.exec.execute("sync_target", &[])?;
            self.counters.steps_since_sync = 0;
        }
        Ok(Some(loss))
    }

    fn update_spec(&self) -> &UpdateSpec {
        &self.config.update
    }
}
